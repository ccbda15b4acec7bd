"""`clean --policy delete` and damage in the segments retention keeps: refused with nothing
changed, or with --skip-corrupt left out of the copy, reported and kept aside, as with
--policy compact. It used to copy the damaged batch unchanged and exit 0 ("removed: 0 bytes"),
and `verify` of the output then failed."""
import subprocess
import sys

import pytest

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter

NOW = 1_800_000_000_000
DAY = 24 * 3600 * 1000


def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def three_segments(path):
    """Segments whose first is 10 days old (past the default 7-day retention), the others new."""
    with PartitionWriter(path, segment_bytes=1500) as w:
        for i in range(30):
            age = 10 * DAY if i < 8 else DAY
            w.append([{"key": b"k%d" % i, "value": b"v%d." % i + b"x" * 40, "timestamp": NOW - age + j}
                      for j in range(3)])
    part = logdir.open_partition(path)
    assert len(part.segments) >= 3
    return part


def flip_a_byte(log, n):
    b = scan_file(log).batches[n]
    data = bytearray(log.read_bytes())
    data[b.position + 40] ^= 0xFF  # inside the CRC's range: framing intact, CRC wrong
    log.write_bytes(bytes(data))
    return b, bytes(data[b.position:b.position + b.size])


def records(path):
    return [(r.offset, r.key, r.value) for _, r in partition_records(logdir.open_partition(path))]


@pytest.mark.parametrize("how", [["--apply", "--out", "OUT"], ["--apply", "--in-place"], []])
def test_damage_in_a_kept_segment_is_refused_without_skip_corrupt(tmp_path, how):
    part = three_segments(tmp_path / "logs" / "t-0")
    flip_a_byte(part.segments[1].log, 2)
    before = {p.name: p.read_bytes() for p in part.path.iterdir()}
    run = kafkacodec("clean", tmp_path / "logs", "--policy", "delete", "--now", NOW,
                     *[tmp_path / "out" if a == "OUT" else a for a in how])
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{part.segments[1].log}: byte" in run.stderr and "Traceback" not in run.stderr
    assert {p.name: p.read_bytes() for p in part.path.iterdir()} == before
    assert not (tmp_path / "out" / "t-0").exists()


def test_skip_corrupt_leaves_the_damage_out_reports_and_keeps_it(tmp_path):
    part = three_segments(tmp_path / "logs" / "t-0")
    original = records(part.path)
    damaged_seg = part.segments[1]
    bad, damaged = flip_a_byte(damaged_seg.log, 2)
    lost = set(range(bad.entry.base_offset, bad.last_offset + 1))
    span = f"{damaged_seg.log}: bytes {bad.position}..{bad.position + bad.size} ({bad.size} bytes) skipped"

    dry = kafkacodec("clean", tmp_path / "logs", "--policy", "delete", "--now", NOW, "--skip-corrupt")
    assert dry.returncode == 0, dry.stderr
    assert f"would skip: {span}" in dry.stdout

    run = kafkacodec("clean", tmp_path / "logs", "--policy", "delete", "--now", NOW, "--skip-corrupt",
                     "--apply", "--out", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    copy = tmp_path / "out" / "t-0"
    kept = copy / f"{damaged_seg.log.name}.corrupt-{bad.position}"
    (line,) = [line for line in run.stdout.splitlines() if line.startswith(f"skipped: {span}: stored crc")]
    assert line.endswith(f"; kept in {kept}")
    assert kept.read_bytes() == damaged
    first_segment_size = part.segments[0].log.stat().st_size
    assert f"removed: {first_segment_size + bad.size:,} bytes" in run.stdout  # the first segment, and the damage
    cleaned = logdir.open_partition(copy)
    assert all(r.ok for r in verify_partition(cleaned)), [r.error for r in verify_partition(cleaned)]
    first_kept = part.segments[1].base_offset
    assert records(copy) == [r for r in original if r[0] >= first_kept and r[0] not in lost]
    # the segments without damage are copied byte for byte
    assert (copy / part.segments[2].log.name).read_bytes() == part.segments[2].log.read_bytes()


def test_in_place_with_nothing_due_still_takes_the_damage_out(tmp_path):
    part = three_segments(tmp_path / "logs" / "t-0")
    bad, _ = flip_a_byte(part.segments[-1].log, 1)
    run = kafkacodec("clean", tmp_path / "logs", "--policy", "delete", "--now", NOW, "--retention-ms", "-1",
                     "--skip-corrupt", "--apply", "--in-place")
    assert run.returncode == 0, run.stderr
    assert f"removed: {bad.size:,} bytes" in run.stdout
    assert all(r.ok for r in verify_partition(logdir.open_partition(part.path)))
    assert (part.path / f"{part.segments[-1].log.name}.corrupt-{bad.position}").exists()
    # the command says nothing but, where it tells offset gaps, the offsets the damaged batch held
    verify = kafkacodec("verify", tmp_path / "logs")
    said = [line for line in verify.stderr.splitlines() if line]
    first = bad.entry.base_offset
    assert all(f"offsets {first}..{bad.last_offset} " in line or f"offset {first} " in line for line in said), \
        verify.stderr
    assert verify.returncode == 0 or verify.returncode == 1 and said, verify.stdout + verify.stderr


def two_aborted_transactions(path):
    """One segment: producers 7 and 8 each abort a transaction (markers at offsets 3 and 5)."""
    with PartitionWriter(path) as w:
        w.append([{"value": b"first"}])
        for producer in (7, 8):
            txn = {"producer_id": producer, "producer_epoch": 0, "is_transactional": True}
            w.append([{"value": b"aborted %d" % producer}], base_sequence=0, **txn)
            w.append([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x01"}], is_control=True, **txn)
        w.append([{"value": b"last"}])
    part = logdir.open_partition(path)
    (seg,) = part.segments
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in read_txn_index(seg.txn_index.read_bytes())] \
        == [(7, 1, 2), (8, 3, 4)]
    return part


@pytest.mark.parametrize("damaged, entries", [(2, [(8, 3, 4)]), (0, [(7, 1, 2), (8, 3, 4)])])
def test_the_txnindex_of_a_rewritten_segment_holds_the_aborts_it_keeps(tmp_path, damaged, entries):
    """Damage that takes an ABORT marker takes its .txnindex entry (a cleaner reading it would take
    the transaction for open ever after); other damage leaves the entries as they were."""
    part = two_aborted_transactions(tmp_path / "logs" / "t-0")
    flip_a_byte(part.segments[0].log, damaged)
    run = kafkacodec("clean", tmp_path / "logs", "--policy", "delete", "--retention-ms", "-1", "--skip-corrupt",
                     "--apply", "--out", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    (seg,) = logdir.open_partition(tmp_path / "out" / "t-0").segments
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in read_txn_index(seg.txn_index.read_bytes())] \
        == entries
