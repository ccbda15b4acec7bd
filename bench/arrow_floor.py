"""A Python data source that decodes nothing: it hands Spark Arrow batches read from Arrow IPC
files (kafka-log's own batches, written once), in kafka-log's schema. Its count() is what
Spark's side of a Python data source costs for these rows, the least kafka-log could take."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


def write_ipc(log_root: Path, out: Path) -> None:
    """kafka-log's batches of each slice of `log_root`, one IPC file per slice."""
    from kafkacodec.pipeline.plan import parse_options
    from kafkacodec.pipeline.source import KafkaLogReader

    reader = KafkaLogReader(parse_options({"path": str(log_root), "includeheaders": "true"}))
    out.mkdir(parents=True)
    for i, part in enumerate(reader.partitions()):
        batches = list(reader.read(part))
        with pa.OSFile(str(out / f"{i:04d}.arrow"), "wb") as sink, pa.ipc.new_file(sink, batches[0].schema) as w:
            for b in batches:
                w.write_batch(b)


class ArrowFloor(DataSource):
    @classmethod
    def name(cls) -> str:
        return "arrow-floor"

    def schema(self):
        from kafkacodec.pipeline.columns import ddl
        return ddl(True)

    def reader(self, schema):
        return ArrowFloorReader(self.options["path"])


class ArrowFloorReader(DataSourceReader):
    def __init__(self, path: str):
        self.path = path

    def partitions(self):
        return [InputPartition(str(p)) for p in sorted(Path(self.path).glob("*.arrow"))]

    def read(self, partition):
        with pa.memory_map(partition.value) as source:
            file = pa.ipc.open_file(source)
            for i in range(file.num_record_batches):
                yield file.get_batch(i)


def register(spark) -> None:
    import sys

    from pyspark import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this file
    spark.dataSource.register(ArrowFloor)
