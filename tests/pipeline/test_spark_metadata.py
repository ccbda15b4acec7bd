"""The KRaft metadata tables on a local SparkSession, compared with the library's own reading and
replay of the controller sample."""
import json
import shutil

import pytest

from kafkacodec.storage.kraft.replay import Point, open_metadata_log, replay, snapshot_events, log_events
from kafkacodec.storage.samples.controller import write_metadata_sample

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    root = tmp_path_factory.mktemp("controller")
    write_metadata_sample(root)
    return root


def test_every_record_of_segments_and_snapshots_is_a_row(spark, controller):
    df = spark.read.format("kafka-cluster-metadata").load(str(controller))
    rows = df.orderBy("snapshotEndOffset", "file", "offset").collect()
    log = open_metadata_log(controller)
    from_log = [e for e in log_events(log, 0)]
    from_snapshot = list(snapshot_events(log.snapshots[0]))
    assert len(rows) == len(from_log) + len(from_snapshot)
    log_rows = [r for r in rows if r.snapshotEndOffset is None]
    assert [r.offset for r in log_rows] == [e.offset for e in from_log]
    assert [json.loads(r.data) for r in log_rows if not r.isControl] == \
        [e.record["data"] for e in from_log if e.record is not None]
    assert {r.type for r in rows if r.isControl} == {"LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"}
    assert {r.snapshotEndOffset for r in rows if r.snapshotEndOffset is not None} == {43}
    changes = df.where("type = 'PARTITION_CHANGE_RECORD' and snapshotEndOffset is null").count()
    assert changes == sum(1 for e in from_log if e.record and e.record["type"] == "PARTITION_CHANGE_RECORD")
    assert all(r.error is None for r in rows)


def test_damage_keeps_the_rows_before_it_and_says_where(spark, controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    seg = copy / "__cluster_metadata-0" / f"{43:020d}.log"
    data = seg.read_bytes()
    seg.write_bytes(data[:-5])  # the last batch cut short
    rows = spark.read.format("kafka-cluster-metadata").load(str(seg.parent)).where("snapshotEndOffset is null").collect()
    errors = [r for r in rows if r.error is not None]
    assert len(errors) == 1 and str(seg) == errors[0].file and "byte" in errors[0].error
    assert max(r.offset for r in rows if r.offset is not None and r.file == str(seg)) == 52


@pytest.mark.parametrize("point", [{}, {"atOffset": "33"}, {"atTime": "2023-11-15T08:35:00Z"}])
def test_state_tables_equal_the_librarys_replay(spark, controller, point):
    expected, _ = replay(open_metadata_log(controller),
                         Point(offset=int(point["atOffset"]) if "atOffset" in point else None,
                               time=1700037300000 if "atTime" in point else None))
    reader = spark.read.format("kafka-cluster-state")
    for key, value in point.items():
        reader = reader.option(key, value)
    parts = reader.load(str(controller)).collect()
    assert sorted((r.topic, r.partition, r.leader, r.isr, r.replicas, r.partitionEpoch) for r in parts) == sorted(
        (t["name"], n, p["leader"], p["isr"], p["replicas"], p["partitionEpoch"])
        for t in expected.image.topics.values() for n, p in t["partitions"].items())
    assert {r.asOfOffset for r in parts} == {expected.offset} and {r.corruption for r in parts} == {None}
    brokers = reader.option("table", "brokers").load(str(controller)).collect()
    assert [(b.brokerId, b.brokerEpoch, b.fenced) for b in brokers] == [
        (i, b["brokerEpoch"], b["fenced"]) for i, b in sorted(expected.image.brokers.items())]
    configs = reader.option("table", "configs").load(str(controller)).collect()
    assert sorted((c.resourceType, c.resourceName, c.name, c.value) for c in configs) == sorted(
        (kind, name, k, v) for (kind, name), values in expected.image.configs.items() for k, v in values.items())


def test_an_unknown_table_is_refused_by_name(spark, controller):
    with pytest.raises(Exception, match="table 'nope' is not one of partitions, brokers, configs"):
        spark.read.format("kafka-cluster-state").option("table", "nope").load(str(controller)).collect()


def damaged_copy(controller, tmp_path):
    """The sample with the batch at offset 44 flipped: a replay stops at 43, before `scratch` is deleted."""
    from kafkacodec.storage.segments.scan import batch_positions

    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    seg = copy / "__cluster_metadata-0" / f"{43:020d}.log"
    data = bytearray(seg.read_bytes())
    at = batch_positions(bytes(data))[1]
    data[at + 40] ^= 0xFF
    seg.write_bytes(bytes(data))
    return copy, seg, at


def test_a_state_the_replay_could_not_reach_fails_or_is_reported_as_asked(spark, controller, tmp_path):
    copy, seg, at = damaged_copy(controller, tmp_path)
    with pytest.raises(Exception, match=f"byte {at}"):
        spark.read.format("kafka-cluster-state").load(str(copy)).collect()
    rows = spark.read.format("kafka-cluster-state").option("onCorrupt", "report").load(str(copy)).collect()
    assert {r.topic for r in rows} == {"orders", "payments", "scratch"} and {r.asOfOffset for r in rows} == {43}
    assert all(f"{seg}: byte {at}" in r.corruption for r in rows)


def test_a_snapshot_cut_after_its_header_is_passed_over_for_the_log(spark, controller, tmp_path):
    from kafkacodec.storage.segments.scan import batch_positions

    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    snap = next((copy / "__cluster_metadata-0").glob("*.checkpoint"))
    data = snap.read_bytes()
    snap.write_bytes(data[:batch_positions(data)[1]])
    brokers = spark.read.format("kafka-cluster-state").option("table", "brokers").load(str(copy)).collect()
    assert sorted(b.brokerId for b in brokers) == [1, 2, 3, 4]
    assert all("SnapshotFooter" in b.corruption for b in brokers)
    topics = spark.read.format("kafka-cluster-state").load(str(copy)).select("topic").distinct().collect()
    assert sorted(t.topic for t in topics) == ["orders", "payments"]
