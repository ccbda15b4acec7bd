"""`kafka-cluster-metadata`'s reader, run as Spark's worker runs it but without a session: which
files of the metadata partition it reads, and timestamps Spark cannot hold."""
import shutil

import pytest
from pyspark.sql.datasource import InputPartition

from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.pipeline.cluster_metadata import ClusterMetadataDataSource, metadata_files
from kafkacodec.storage.samples.controller import write_metadata_sample
from kafkacodec.storage.segments.scan import batch_positions

PART = "__cluster_metadata-0"


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    root = tmp_path_factory.mktemp("controller")
    write_metadata_sample(root)
    return root


def records(path):
    reader = ClusterMetadataDataSource({"path": str(path)}).reader(None)
    return [row for f in metadata_files(str(path)) for batch in reader.read(InputPartition(f))
            for row in batch.to_pylist()]


def test_a_log_file_not_named_as_a_segment_is_not_read(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    expected = records(copy)
    (copy / PART / "controller.log").write_text("[2026-11-26 09:00:00,000] INFO starting (kafka.Kafka)\n")
    assert all(not f.endswith("controller.log") for f, _ in metadata_files(str(copy)))
    assert records(copy) == expected
    assert not any(row["error"] for row in expected)


def test_a_timestamp_spark_cannot_hold_reads_null(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    seg = sorted((copy / PART).glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    at = batch_positions(bytes(data))[0]
    batch, end = RecordBatch.read(bytes(data), at)
    batch.base_timestamp = batch.max_timestamp = 2 ** 62  # as librdkafka's edge cases write
    data[at:end] = batch.to_bytes()
    seg.write_bytes(bytes(data))
    rows = [r for r in records(copy) if r["file"] == str(seg)]
    assert rows[0]["timestamp"] is None and rows[0]["error"] is None
    assert all(r["timestamp"] is not None for r in rows[batch.records_count:] if r["error"] is None)
