"""A transaction marker whose key or value Kafka refuses (a negative version, too few bytes) is an
InvalidRecordException in a broker's recovery (EndTransactionMarker.deserializeValue,
ControlRecordType.parseTypeId): LogSegment.recover has counted the marker's batch valid by then,
so it keeps that batch and cuts the rest of the segment. verify says so by file and byte, and
recover cuts there, keeping the bytes, whether or not the producers' state before is known."""
import subprocess
import sys

import pytest

from kafkacodec import write_batch
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.audit.verify import verify_partition

ABORT_KEY, GOOD_VALUE = b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x04"
TXN = {"producer_id": 7, "producer_epoch": 2, "is_transactional": True}


def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def segment(path, key, value, base=0):
    """A transaction's data, its marker (key, value), then two batches after it; the marker's
    batch position and end."""
    head = write_batch([{"value": b"in a transaction", "timestamp": 1}], base_offset=base, base_sequence=0, **TXN)
    marker = write_batch([{"key": key, "value": value, "timestamp": 2}], base_offset=base + 1, is_control=True,
                         **TXN)
    tail = b"".join(write_batch([{"value": b"after %d" % i, "timestamp": 3 + i}], base_offset=base + 2 + i)
                    for i in range(2))
    path.mkdir(parents=True)
    (path / f"{base:020d}.log").write_bytes(head + marker + tail)
    return len(head), len(head) + len(marker)


@pytest.mark.parametrize("key, value", [
    (ABORT_KEY, b"\xff\xff\x00\x00\x00\x04"),  # the marker's value version -1
    (ABORT_KEY, b"\x00\x00\x00"),  # a value too short for the coordinator epoch
    (b"\x80\x00\x00\x00", GOOD_VALUE),  # the key's version negative
])
@pytest.mark.parametrize("base", [0, 100])  # 100: no snapshot, so the producers' state is unknown
def test_a_marker_kafka_refuses_is_named_and_recover_cuts_after_its_batch(tmp_path, key, value, base):
    part_dir = tmp_path / "t-0"
    position, end = segment(part_dir, key, value, base)
    log = part_dir / f"{base:020d}.log"
    before = log.read_bytes()
    problems = [p for r in verify_partition(logdir.open_partition(part_dir)) for p in r.problems]
    assert [p for p in problems if f"batch at position {position}:" in p and "cuts whatever follows" in p], problems
    run = kafkacodec("verify", part_dir)
    assert run.returncode == 1 and f"batch at position {position}" in run.stdout + run.stderr, run

    dry = kafkacodec("recover", "--dry-run", part_dir)
    assert dry.returncode == 0 and f"would truncate to {end} bytes" in dry.stdout, dry
    assert f"byte {position}" in dry.stdout and str(log) in dry.stdout, dry.stdout
    real = kafkacodec("recover", part_dir)
    assert real.returncode == 0, real.stderr
    assert log.read_bytes() == before[:end]  # the marker's batch stays, as Kafka keeps it
    assert (part_dir / f"{log.name}.corrupt-{end}").read_bytes() == before[end:]
    # nothing follows the marker now: a second run cuts nothing more, verify still names it
    assert "nothing to recover" in kafkacodec("recover", part_dir).stdout
    problems = [p for r in verify_partition(logdir.open_partition(part_dir)) for p in r.problems]
    assert [p for p in problems if f"batch at position {position}:" in p], problems


def test_a_marker_kafka_reads_cuts_nothing(tmp_path):
    part_dir = tmp_path / "t-0"
    segment(part_dir, ABORT_KEY, b"\x00\x07\x00\x00\x00\x04")  # a later version is read as version 0
    log = part_dir / "00000000000000000000.log"
    before = log.read_bytes()
    assert kafkacodec("recover", part_dir).returncode == 0
    assert log.read_bytes() == before
    assert not list(part_dir.glob("*.corrupt-*"))
