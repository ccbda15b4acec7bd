"""Kafka log directories as Spark DataFrames and back (pyspark 4.x).

    from kafkacodec.pipeline import read, register
    register(spark)
    df = read(spark, "/var/lib/kafka", subscribe="orders")  # the JVM reader where it can be built
    df = spark.read.format("kafka-log").option("subscribe", "orders").load("/var/lib/kafka")  # the Python source
"""
from __future__ import annotations

# pyspark and pyarrow are optional extras: nothing here imports them until a session is at hand
from .registration import PUSHDOWN_CONF, RECIPE, UNPACK, WorkersCannotImport, check_workers, register

__all__ = ["PUSHDOWN_CONF", "RECIPE", "UNPACK", "WorkersCannotImport", "check_workers", "read", "register"]


def read(spark, path, schema=None, reader: str = "auto", **options):
    """kafka-log's records under `path`, through the JVM reader where it can be built (see reading.read)."""
    from .reading import read as read_log
    return read_log(spark, path, schema, reader, **options)
