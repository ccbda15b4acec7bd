"""`kafkacodec reindex` and `kafkacodec verify` on a partition directory."""
import struct
import subprocess
import sys

import pytest

from kafkacodec import write_batch
from kafkacodec.storage.layout import names


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True)


@pytest.fixture
def partition(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    for base, batches in ((0, 40), (400, 30)):
        data, offset = b"", base
        for b in range(batches):
            data += write_batch([{"key": b"k", "value": b"x" * 90, "timestamp": 1000 + offset + i}
                                 for i in range(10)], base_offset=offset)
            offset += 10
        (part / f"{names.segment_name(base)}.log").write_bytes(data)
    for base in (0, 400):
        run = kc("reindex", str(part / f"{names.segment_name(base)}.log"))
        assert run.returncode == 0, run.stderr
    return part


def test_reindexed_partition_verifies(partition):
    run = kc("verify", str(partition))
    assert run.returncode == 0, run.stderr
    assert "ok" in run.stdout and "70" in run.stdout  # batches
    assert kc("reindex", "--check", str(partition / "00000000000000000000.log")).returncode == 0
    idx = (partition / "00000000000000000000.index").read_bytes()
    size = (partition / "00000000000000000000.log").stat().st_size // 40  # equal batches
    positions = [struct.unpack_from(">i", idx, i + 4)[0] for i in range(0, len(idx), 8)]
    # an entry at the first batch starting more than 4096 bytes after the previous entry
    want, last = [], 0
    for start in range(0, 40 * size, size):
        if start - last > 4096:
            want.append(start)
            last = start
    assert positions == want and len(want) == 9


def test_verify_names_a_wrong_index_entry(partition):
    path = partition / "00000000000000000000.index"
    data = bytearray(path.read_bytes())
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 8)[0] + 1)  # second entry's offset
    path.write_bytes(bytes(data))
    run = kc("verify", str(partition))
    assert run.returncode == 1
    assert "offset index: entry offset" in run.stderr and "00000000000000000000" in run.stderr
    assert kc("reindex", "--check", str(partition / "00000000000000000000.log")).returncode == 1


def test_verify_reports_where_damage_starts(partition, tmp_path):
    log = partition / "00000000000000000400.log"
    data = bytearray(log.read_bytes())
    data[5000] ^= 0x40
    log.write_bytes(bytes(data))
    run = kc("verify", str(tmp_path))  # the whole log dir
    assert run.returncode == 1
    first_bad = [line for line in run.stderr.splitlines() if "invalid from byte" in line]
    assert len(first_bad) == 1 and str(log) in first_bad[0]
    pos = int(first_bad[0].split("invalid from byte ")[1].split()[0])
    assert pos <= 5000 < pos + 1300 and pos % 1 == 0


def test_verify_usage_error():
    assert kc("verify", "/no/such/path").returncode == 2


def test_verify_says_what_kafka_would_pass_over(partition):
    root = partition.parent
    (root / "orders-1.0123456789abcdef0123456789abcdef-delete").mkdir()
    (partition / "00000000000000000400.log.deleted").write_bytes(b"\0" * 100)  # garbage, never read
    run = kc("verify", str(root))
    assert run.returncode == 0, run.stderr
    assert "orders-1.0123456789abcdef0123456789abcdef-delete: delete replica directory" in run.stderr
    assert "00000000000000000400.log.deleted: in flight" in run.stderr


def test_reindex_takes_a_partition_or_a_log_dir(partition):
    """Every segment's indexes, whatever PATH names; `verify` says to run it when one is missing."""
    before = {p.name: p.read_bytes() for p in partition.iterdir() if p.suffix in (".index", ".timeindex")}
    wrong = partition / "00000000000000000400.index"
    data = bytearray(wrong.read_bytes())
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 8)[0] + 1)
    wrong.write_bytes(bytes(data))
    verified = kc("verify", str(partition))
    assert verified.returncode == 1 and f"`kafkacodec reindex {partition}` rebuilds the indexes" in verified.stderr
    (partition / "00000000000000000000.index").unlink()
    check = kc("reindex", "--check", str(partition.parent))
    assert check.returncode == 1 and f"run `kafkacodec reindex {partition.parent}`" in check.stderr
    assert kc("reindex", str(partition.parent)).returncode == 0
    assert {p.name: p.read_bytes() for p in partition.iterdir() if p.suffix in (".index", ".timeindex")} == before
    assert kc("reindex", "--check", str(partition)).returncode == 0


def test_a_base_offset_beyond_what_offsets_can_reach_is_damage_not_a_crash(partition):
    """The base offset lies outside the CRC: damage there may make offsets no int64 holds."""
    log = partition / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[0:8] = (2 ** 63 - 1).to_bytes(8, "big")
    log.write_bytes(bytes(data))
    run = kc("verify", str(partition))
    assert run.returncode == 1 and "offsets beyond 2^63-1" in run.stderr and "Traceback" not in run.stderr
    assert kc("recover", "--dry-run", str(partition)).returncode == 0


def test_damage_is_reported_once_with_the_index_entries_it_leaves_unchecked(tmp_path):
    """An index entry per batch (Kafka's recovery with a small index.interval.bytes): damage in the
    middle of the segment is one problem, which counts the entries pointing into or past it, not
    one problem per entry; an entry wrong before the damage is still a problem of its own."""
    from kafkacodec.storage.indexes import index
    from kafkacodec.storage.segments.scan import scan_file

    part = tmp_path / "orders-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    log.write_bytes(b"".join(write_batch([{"key": b"k", "value": b"x" * 50, "timestamp": 1000 + o}],
                                         base_offset=o) for o in range(60)))
    assert kc("reindex", "--index-interval-bytes", "1", str(log)).returncode == 0
    offsets = index.read_offset_index((part / "00000000000000000000.index").read_bytes(), 0)
    times = index.read_time_index((part / "00000000000000000000.timeindex").read_bytes(), 0)
    assert len(offsets) == 59 and len(times) == 59  # every batch but the first, which starts the file
    batches = scan_file(log).batches
    data = bytearray(log.read_bytes())
    data[batches[20].position + 30] ^= 0xFF  # batch 20's CRC fails: 21..59 lie past it
    log.write_bytes(bytes(data))
    unchecked = sum(e.position >= batches[20].position for e in offsets) + sum(e.offset >= 20 for e in times)
    assert unchecked == 2 * 40
    run = kc("verify", str(part))
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if not line.startswith("to repair")]
    assert lines == [f"{log}: invalid from byte {batches[20].position} ({len(data) - batches[20].position} bytes): "
                     f"byte {batches[20].position}: record_batch/crc: " + lines[0].split("record_batch/crc: ")[1]]
    assert lines[0].endswith(f"; {unchecked} index entries point into the damaged bytes or past them, unchecked "
                             "(`recover` rebuilds the indexes)")
    assert "1 problem" in run.stdout
    # the same from recovery's scan, as the kafka-log-segments table checks a segment's indexes
    from kafkacodec.storage.audit.verify import check_offset_index, check_time_index
    scan = scan_file(log)
    assert check_offset_index(offsets, scan, 0) == ["offset index: 40 entries point into the damaged bytes or past "
                                                    "them, unchecked"]
    assert check_time_index(times, scan, 0) == ["time index: 40 entries point into the damaged bytes or past them, "
                                                "unchecked"]
    path = part / "00000000000000000000.index"  # and an entry wrong before the damage stays a problem
    raw = bytearray(path.read_bytes())
    struct.pack_into(">i", raw, 8 * 4, struct.unpack_from(">i", raw, 8 * 4)[0] + 1)
    path.write_bytes(bytes(raw))
    again = kc("verify", str(part)).stderr
    assert "offset index: entry offset 6 but the batch at position" in again and f"; {unchecked} index" in again


def test_verify_reads_a_kraft_logs_checkpoint_snapshots(tmp_path):
    from kafkacodec.storage.samples.controller import write_metadata_sample
    from kafkacodec.storage.segments.scan import scan_file

    write_metadata_sample(tmp_path / "kraft")
    part = tmp_path / "kraft" / "__cluster_metadata-0"
    assert kc("verify", str(tmp_path / "kraft")).returncode == 0
    (snapshot,) = part.glob("*.checkpoint")
    second = scan_file(snapshot).batches[1]
    data = bytearray(snapshot.read_bytes())
    data[second.position + second.size - 5] ^= 0xFF  # a byte of its records: the CRC no longer matches
    snapshot.write_bytes(bytes(data))
    run = kc("verify", str(tmp_path / "kraft"))
    assert run.returncode == 1
    (line,) = [line for line in run.stderr.splitlines() if "KRaft snapshot" in line]
    assert f"KRaft snapshot {snapshot.name}: invalid from byte {second.position}: " in line and "crc" in line
