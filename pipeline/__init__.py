"""Kafka log directories as Spark DataFrames and back (pyspark 4.x Python data sources).

    from kafkacodec.pipeline import register
    register(spark)
    df = spark.read.format("kafka-log").option("subscribe", "orders").load("/var/lib/kafka")
"""
from __future__ import annotations

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


class WorkersCannotImport(RuntimeError):
    """Spark's Python workers run an interpreter that cannot import kafkacodec."""


def check_workers(spark) -> None:
    """Raise WorkersCannotImport, saying how to fix it, when the Python that Spark starts for its
    workers (PYSPARK_PYTHON, else `python3` on the PATH) cannot import kafkacodec: every read
    would fail later with "No module named 'kafkacodec'" from deep inside Spark."""
    import sys

    def worker_python(_):  # defined here, so that it travels by value: the worker need not import us
        import importlib
        import sys
        try:
            importlib.import_module("kafkacodec.pipeline.decode")  # what every read runs there
        except ImportError as err:
            return sys.executable, str(err)
        return sys.executable, None

    executable, problem = spark.sparkContext.parallelize([0], 1).map(worker_python).collect()[0]
    if problem is None:
        return
    local = spark.sparkContext.master.startswith("local")
    fix = (f"set PYSPARK_PYTHON={sys.executable} (this interpreter, which has it) before the session starts"
           if local else "install kafkacodec in the workers' Python, or ship it as the README's \"Spark on a "
                         "cluster\" recipe does, and set spark.pyspark.python to that interpreter")
    raise WorkersCannotImport(f"Spark's Python workers run {executable}, which cannot import kafkacodec "
                              f"({problem}): {fix}")


def register(spark, check: bool = True) -> None:
    """Register `kafka-log`, `kafka-log-segments`, `kafka-consumer-offsets`, `kafka-cluster-metadata`
    and `kafka-cluster-state` with this session.
    Filter pushdown is used when the session enables it (a reader that pushes filters fails every
    query where it is off); option("pushFilters", ...) overrides that per query. `check`: first
    run one small task to make sure the workers' Python can import kafkacodec (check_workers)."""
    from .cluster_metadata import ClusterMetadataDataSource, ClusterStateDataSource
    from .source import KafkaLogDataSource, KafkaLogPushdownDataSource
    from .tables import ConsumerOffsetsDataSource, SegmentsDataSource

    if check:
        check_workers(spark)

    enabled = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    spark.dataSource.register(KafkaLogPushdownDataSource if enabled else KafkaLogDataSource)
    spark.dataSource.register(SegmentsDataSource)
    spark.dataSource.register(ConsumerOffsetsDataSource)
    spark.dataSource.register(ClusterMetadataDataSource)
    spark.dataSource.register(ClusterStateDataSource)
