"""The job of the README's recipe for a cluster (docs/recipes/spark-cluster.sh): a log
dir's records, headers included, and its segments table, written as Parquet under OUT.

    spark-submit [the recipe's options] spark-cluster-job.py LOGDIR OUT
"""
import sys

from pyspark.sql import SparkSession

from kafkacodec.pipeline import read, register
from kafkacodec.pipeline.reading import reader_of

logdir, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("kafkacodec on a cluster").getOrCreate()
register(spark)  # fails at once, saying what to do, if the executors' or the driver's Python workers cannot import us

records = read(spark, logdir, includeHeaders=True)  # the JVM reader where the driver has a JDK, else the Python source
print(f"records read by the {reader_of(records)} reader")
records.write.mode("overwrite").parquet(f"{out}/records")
spark.read.format("kafka-log-segments").load(logdir).write.mode("overwrite").parquet(f"{out}/segments")

written = spark.read.parquet(f"{out}/records")
print(f"wrote {written.count()} records of {written.select('topic', 'partition').distinct().count()} "
      f"partitions to {out}/records, and the segments to {out}/segments")
spark.stop()
