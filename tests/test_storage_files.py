"""Kafka's text files and log-directory discovery, on a directory laid out as a broker leaves it."""
import base64
import uuid

import pytest

from kafkacodec import write_batch
from kafkacodec.runtime.errors import InvalidValueError
from kafkacodec.storage import logdir, names, textfiles


@pytest.fixture
def log_dirs(tmp_path):
    def segment(part, base, n):
        (part / f"{names.segment_name(base)}.log").write_bytes(
            write_batch([{"value": b"v%d" % i, "timestamp": i} for i in range(n)], base_offset=base))
        (part / f"{names.segment_name(base)}.index").write_bytes(b"")
        (part / f"{names.segment_name(base)}.timeindex").write_bytes(b"")

    for name in ("orders-0", "orders-1", "my-topic-with-dashes-2"):
        (tmp_path / name).mkdir()
    segment(tmp_path / "orders-0", 0, 3)
    segment(tmp_path / "orders-0", 3, 2)
    segment(tmp_path / "orders-1", 0, 1)
    segment(tmp_path / "my-topic-with-dashes-2", 40, 1)
    (tmp_path / "orders-0" / "00000000000000000005.log.deleted").write_bytes(b"")
    (tmp_path / "orders-0" / "00000000000000000009.index").write_bytes(b"")  # orphan
    (tmp_path / ("orders-7." + uuid.uuid4().hex + "-delete")).mkdir()
    (tmp_path / ("orders-8." + uuid.uuid4().hex + "-future")).mkdir()
    textfiles.write_checkpoint(tmp_path / "recovery-point-offset-checkpoint",
                               [["orders", 0, 5], ["orders", 1, 1], ["my-topic-with-dashes", 2, 41]])
    textfiles.write_checkpoint(tmp_path / "orders-0" / "leader-epoch-checkpoint", [[0, 0], [3, 4]])
    topic_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    (tmp_path / "orders-0" / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}")
    (tmp_path / "meta.properties").write_text("#\n#Sun Nov 22 03:00:00 UTC 2026\nnode.id=1\nversion=1\n"
                                              "cluster.id=abcDEF123\n")
    return tmp_path, topic_id


def test_log_dir_discovery(log_dirs):
    root, _ = log_dirs
    d = logdir.open_log_dir(root)
    assert [(p.topic, p.partition) for p in d.partitions] == [
        ("my-topic-with-dashes", 2), ("orders", 0), ("orders", 1)]
    assert d.topics() == ["my-topic-with-dashes", "orders"]
    assert sorted(reason.split()[0] for _, reason in d.skipped) == ["delete", "future"]
    orders0 = d.partitions[1]
    assert [s.base_offset for s in orders0.segments] == [0, 3]
    assert all(s.index and s.time_index for s in orders0.segments)
    reasons = {path.name: reason for path, reason in orders0.skipped}
    assert reasons["00000000000000000005.log.deleted"].startswith("in flight")
    assert reasons["00000000000000000009.index"].startswith("index without a .log")


def test_text_files(log_dirs):
    root, topic_id = log_dirs
    assert textfiles.read_offset_checkpoint(root / "recovery-point-offset-checkpoint") == {
        ("orders", 0): 5, ("orders", 1): 1, ("my-topic-with-dashes", 2): 41}
    assert textfiles.read_leader_epoch_checkpoint(root / "orders-0" / "leader-epoch-checkpoint") == [(0, 0), (3, 4)]
    assert textfiles.read_partition_metadata(root / "orders-0" / "partition.metadata") == \
        textfiles.PartitionMetadata(0, topic_id)
    assert textfiles.read_properties(root / "meta.properties") == {
        "node.id": "1", "version": "1", "cluster.id": "abcDEF123"}
    assert not list(root.glob("*.tmp"))


@pytest.mark.parametrize("text,message", [
    ("1\n0\n", "unrecognised version"),
    ("0\n2\norders 0 5\n", "expected 2 entries"),
    ("0\n1\norders zero 5\n", "malformed line"),
    ("0\n1\norders 0\n", "malformed line"),
])
def test_bad_checkpoints_are_refused(tmp_path, text, message):
    (tmp_path / "cp").write_text(text)
    with pytest.raises(InvalidValueError, match=message) as e:
        textfiles.read_offset_checkpoint(tmp_path / "cp")
    assert e.value.file == str(tmp_path / "cp")


def test_empty_checkpoint_and_zero_topic_id(tmp_path):
    (tmp_path / "cp").write_text("")
    assert textfiles.read_offset_checkpoint(tmp_path / "cp") == {}
    (tmp_path / "pm").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(InvalidValueError, match="zero UUID"):
        textfiles.read_partition_metadata(tmp_path / "pm")
