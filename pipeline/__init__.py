"""Kafka log directories as Spark DataFrames and back (pyspark 4.x Python data sources).

    from kafkacodec.pipeline import register
    register(spark)
    df = spark.read.format("kafka-log").option("subscribe", "orders").load("/var/lib/kafka")
"""
from __future__ import annotations

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark) -> None:
    """Register `kafka-log`, `kafka-log-segments` and `kafka-consumer-offsets` with this session.
    Filter pushdown is used when the session enables it (a reader that pushes filters fails every
    query where it is off); option("pushFilters", ...) overrides that per query."""
    from .source import KafkaLogDataSource, KafkaLogPushdownDataSource
    from .tables import ConsumerOffsetsDataSource, SegmentsDataSource

    enabled = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    spark.dataSource.register(KafkaLogPushdownDataSource if enabled else KafkaLogDataSource)
    spark.dataSource.register(SegmentsDataSource)
    spark.dataSource.register(ConsumerOffsetsDataSource)
