"""`kafka-cluster-state`'s reader, run as Spark's worker runs it but without a session: what it
does with a replay that stopped short (damage, a gap) and with snapshots passed over, as
`onCorrupt` asks (fail by default, report in the `corruption` column). The same on a session
in test_spark_metadata."""
import shutil

import pytest
from pyspark.sql.datasource import InputPartition

from kafkacodec.pipeline.cluster_metadata import ClusterStateDataSource
from kafkacodec.storage.kraft.replay import MetadataLogProblem
from kafkacodec.storage.samples.controller import write_metadata_sample
from kafkacodec.storage.segments.scan import batch_positions

PART = "__cluster_metadata-0"


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    root = tmp_path_factory.mktemp("controller")
    write_metadata_sample(root)
    return root


def damaged(controller, tmp_path):
    """The sample with the second batch after the snapshot (offset 44) flipped: the state stops at
    offset 43, before `scratch` is deleted (offset 49)."""
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    seg = copy / PART / f"{43:020d}.log"
    data = bytearray(seg.read_bytes())
    at = batch_positions(bytes(data))[1]
    data[at + 40] ^= 0xFF
    seg.write_bytes(bytes(data))
    return copy, seg, at


def rows(path, **options):
    source = ClusterStateDataSource({"path": str(path), **options})
    source.schema()
    out = [r for batch in source.reader(None).read(InputPartition(0)) for r in batch.to_pylist()]
    return out


def test_a_replay_that_stopped_fails_the_read_by_default_naming_file_and_byte(controller, tmp_path):
    copy, seg, at = damaged(controller, tmp_path)
    with pytest.raises(MetadataLogProblem, match=f"{seg}: byte {at}"):
        rows(copy)
    with pytest.raises(MetadataLogProblem, match=f"byte {at}"):
        rows(copy, table="brokers", onCorrupt="fail")


def test_report_gives_the_state_where_it_stopped_with_where_on_every_row(controller, tmp_path):
    copy, seg, at = damaged(controller, tmp_path)
    got = rows(copy, onCorrupt="report")
    assert {r["topic"] for r in got} == {"orders", "payments", "scratch"}  # deleted after the damage
    assert {r["asOfOffset"] for r in got} == {43}
    assert all(f"{seg}: byte {at}" in r["corruption"] for r in got)
    assert rows(controller, onCorrupt="report")[0]["corruption"] is None


def test_report_of_an_empty_state_is_one_row_saying_why(controller, tmp_path):
    copy, seg, at = damaged(controller, tmp_path)
    got = rows(copy, table="configs", onCorrupt="REPORT", atOffset="45")  # Spark's option values keep their case
    assert got and all(f"byte {at}" in r["corruption"] for r in got)
    copy2 = tmp_path / "empty"
    (copy2 / PART).mkdir(parents=True)
    shutil.copy(controller / PART / f"{0:020d}.log", copy2 / PART)
    data = (copy2 / PART / f"{0:020d}.log").read_bytes()
    (copy2 / PART / f"{0:020d}.log").write_bytes(data[:batch_positions(data)[1] + 30])  # cut in the second batch
    only = rows(copy2, table="partitions", onCorrupt="report")
    assert len(only) == 1 and only[0]["topic"] is None and "byte" in only[0]["corruption"]


def test_a_snapshot_passed_over_is_said_in_the_column_without_failing(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    snap = next((copy / PART).glob("*.checkpoint"))
    data = snap.read_bytes()
    snap.write_bytes(data[:batch_positions(data)[1]])  # an interrupted copy: the header batch only
    got = rows(copy, table="brokers")
    assert len(got) == 4 and all(str(snap) in r["corruption"] and "SnapshotFooter" in r["corruption"] for r in got)


def test_on_corrupt_skip_or_nonsense_is_refused_by_name(controller):
    for value in ("skip", "nonsense"):
        with pytest.raises(ValueError, match="onCorrupt"):
            ClusterStateDataSource({"path": str(controller), "onCorrupt": value}).schema()
