"""`kafka-cluster-metadata`'s reader, run as Spark's worker runs it but without a session: which
files of the metadata partition it reads, timestamps Spark cannot hold, and the kind of a control
record, taken from its key as the generated ControlRecord reads it (storage.state.control_rules):
the type's name, the name of a type Kafka does not know, and none when the key is too short."""
import shutil

import pytest
from pyspark.sql.datasource import InputPartition

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.kafka_types import KafkaTypes
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.pipeline.cluster_metadata import ClusterMetadataDataSource, metadata_files
from kafkacodec.storage.samples.controller import write_metadata_sample
from kafkacodec.storage.segments.scan import batch_positions

PART = "__cluster_metadata-0"
Type = ControlRecord.ControlType


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


def test_the_samples_control_records_are_named_by_their_generated_type(controller):
    control = [r for r in records(controller) if r["isControl"]]
    assert {r["type"] for r in control} == {t.name.upper() for t in (Type.leader_change, Type.snapshot_header,
                                                                     Type.snapshot_footer)}
    assert not any(r["error"] for r in control)


def test_odd_control_keys_name_what_their_type_field_holds(tmp_path):
    footer = ControlRecord.SnapshotFooterRecord(version=0, tagged_fields=KafkaTypes.TaggedFields(fields=[])).to_bytes()
    keys = [ControlRecord(version=0, type=Type.snapshot_footer).to_bytes(),
            ControlRecord(version=-3, type=Type.leader_change).to_bytes(),  # refused by Kafka, its type still named
            ControlRecord(version=0, type=99).to_bytes(),
            ControlRecord(version=0, type=Type.commit).to_bytes()[:3],  # too short to hold a type
            ControlRecord(version=5, type=Type.kraft_voters).to_bytes() + b"\x07"]  # bytes after its fields
    part = tmp_path / PART
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(
        write_batch([Record(key, footer, 0, i, [], 0) for i, key in enumerate(keys)], is_control=True))
    found = records(tmp_path)
    assert [(r["offset"], r["isControl"], r["type"]) for r in found] == [
        (0, True, "SNAPSHOT_FOOTER"), (1, True, "LEADER_CHANGE"), (2, True, "UNKNOWN(99)"),
        (3, True, "UNKNOWN(None)"), (4, True, "KRAFT_VOTERS")]
    assert found[0]["error"] is None and all(r["error"] for r in found[1:4])
