"""Kafka's text files and log-directory discovery, on a directory laid out as a broker leaves it."""
import base64
import re
import uuid

import pytest

from kafkacodec import write_batch
from kafkacodec.runtime.errors import InvalidValueError
from kafkacodec.storage.layout import logdir, names, textfiles
from kafkacodec.storage.diskio.safeio import FileProblem


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


@pytest.mark.parametrize("data,line,message", [
    (b"0\n1\norders 0 \xff5\n", 3, "byte 13 is not utf-8 text"),
    (b"0\n1\n", 2, "expected 1 entries in checkpoint file, but found only 0"),
    (b"0\n" + b"9" * 10_000 + b"\norders 0 5\n", 2, "expected 999999999999999999999999999... entries"),
    (b"0\n3\norders 0 5\n", 2, "expected 3 entries in checkpoint file, but found only 1"),
    (b"0\n1\norders 0 -5\n", 3, "offset '-5' is negative"),
    (b"0\n1\norders -1 5\n", 3, "partition '-1' is negative"),
    (b"0\n1\norders 0 9223372036854775808\n", 3, "offset '9223372036854775808' is larger than"),
    (b"0\n1\norders 2147483648 5\n", 3, "partition '2147483648' is larger than"),
    (b"0\n1\norders 0 \xd9\xa3\n", 3, "offset '\u0663' is not a number"),  # a digit to Python's int(), not to Kafka
    (b"0\n1\norders 0 " + b"1" * 5000 + b"\n", 3, "is larger than"),
    (b"0\nx\n", 2, "malformed entry count 'x'"),
    (b"\xfe\n", 1, "byte 0 is not utf-8 text"),
])
def test_damaged_or_absurd_checkpoints_name_the_file_and_line(tmp_path, data, line, message):
    path = tmp_path / "cleaner-offset-checkpoint"
    path.write_bytes(data)
    with pytest.raises(InvalidValueError) as err:
        textfiles.read_offset_checkpoint(path)
    assert message in str(err.value) and f"(line {line})" in str(err.value) and err.value.file == str(path)


def test_leader_epoch_checkpoint_values_are_checked(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_bytes(b"0\n2\n0 0\n-3 7\n")
    with pytest.raises(InvalidValueError, match=r"leader epoch '-3' is negative \(line 4\)"):
        textfiles.read_leader_epoch_checkpoint(path)
    path.write_bytes(b"0\n1\n1 " + b"\x80" + b"\n")
    with pytest.raises(InvalidValueError, match=r"not utf-8 text \(line 3\)"):
        textfiles.read_leader_epoch_checkpoint(path)


def test_a_huge_checkpoint_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "cleaner-offset-checkpoint"
    with open(path, "wb") as f:
        f.truncate(textfiles.MAX_TEXT_FILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(FileProblem, match="larger than") as err:
        textfiles.read_offset_checkpoint(path)
    assert err.value.file == str(path)


def test_properties_and_metadata_that_do_not_decode_are_errors(tmp_path):
    (tmp_path / "pm").write_bytes(b"version: 0\ntopic_id: \xff\n")
    with pytest.raises(InvalidValueError, match=r"not utf-8 text \(line 2\)"):
        textfiles.read_partition_metadata(tmp_path / "pm")
    (tmp_path / "mp").write_bytes(b"=x\nnode.id=1\ncluster.id=caf\xe9\n")  # Properties files are ISO 8859-1
    assert textfiles.read_properties(tmp_path / "mp") == {"": "x", "node.id": "1", "cluster.id": "caf\u00e9"}


@pytest.mark.parametrize("text,state", [
    ('{"leaderId":3000,"leaderEpoch":4,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}',
     {"leaderId": 3000, "leaderEpoch": 4, "votedId": -1, "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA",
      "data_version": 1}),
    ('{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[],"data_version":0}'
     "\nignored second line",
     {"clusterId": "", "leaderId": 1, "leaderEpoch": 2, "votedId": -1, "appliedOffset": 0, "currentVoters": [],
      "data_version": 0}),
])
def test_quorum_state_is_read_as_kafka_reads_it(tmp_path, text, state):
    path = tmp_path / textfiles.QUORUM_STATE
    path.write_text(text)
    assert textfiles.read_quorum_state(path) == state


@pytest.mark.parametrize("text,message", [
    ('{"leaderId":1}', "data_version None is not within the supported versions"),
    ('{"leaderId":1,"data_version":2}', "data_version 2 is not within"),
    ('{"leaderId":"one","data_version":1}', "leaderId '\"one\"' is not of its type"),
    ('[1,2]', "not a JSON object"),
    ('{"leaderId":', "not JSON"),
])
def test_a_quorum_state_kafka_would_refuse_is_refused_naming_the_file(tmp_path, text, message):
    path = tmp_path / textfiles.QUORUM_STATE
    path.write_text(text)
    with pytest.raises(InvalidValueError, match=re.escape(message)) as err:
        textfiles.read_quorum_state(path)
    assert err.value.file == str(path)
