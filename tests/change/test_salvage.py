"""Salvage past damage without laundering it.

`dump --json --skip-corrupt` lists a damaged batch with `"crcValid": false`; `write --recompute`
wrote it with a fresh CRC and `verify` then said ok: the flipped byte had become valid data.
`write` now refuses such a batch unless told (--accept-damaged), and `recover --salvage` puts
the intact batches after the damage back into the partition as a segment of their own, named by
its base offset, reporting the offsets lost."""
import json
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.change.writer import PartitionWriter


def kc(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True,
                          input=stdin)


def two_segments(path):
    """Two segments of small batches, producer 7's aborted transaction among the first one's later
    batches (so that a salvaged segment holds it)."""
    with PartitionWriter(path, segment_bytes=4000) as w:
        for i in range(20):
            w.append([{"key": b"k%d" % i, "value": b"v%d." % i + b"x" * 30, "timestamp": 1000 + i}])
        w.append([{"value": b"in a transaction"}], producer_id=7, producer_epoch=0, base_sequence=0,
                 is_transactional=True)
        w.append([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x03"}], producer_id=7,
                 producer_epoch=0, is_transactional=True, is_control=True)  # ABORT, coordinator epoch 3
        for i in range(22, 60):
            w.append([{"key": b"k%d" % i, "value": b"v%d." % i + b"x" * 30, "timestamp": 1000 + i}])
    part = logdir.open_partition(path)
    assert len(part.segments) == 2
    return part


def flip(log, n):
    """The n-th batch of `log` with a byte flipped inside its CRC's range."""
    b = scan_file(log).batches[n]
    data = bytearray(log.read_bytes())
    data[b.position + b.size - 5] ^= 0xFF  # a byte of the last value
    log.write_bytes(bytes(data))
    return b


def records(path):
    return [(r.offset, r.key, r.value) for _, r in partition_records(logdir.open_partition(path))]


def assert_only_the_gap(path, lost):
    """`verify` finds nothing wrong but, where it tells offset gaps, the offsets the damage took."""
    verify = kc("verify", path)
    said = [line for line in verify.stderr.splitlines() if line and not line.startswith("to repair")]
    assert all(f" {lost[0]}" in line and ("missing" in line or "not in the log" in line) for line in said), \
        verify.stdout + verify.stderr
    assert verify.returncode == 0 or verify.returncode == 1 and said, verify.stdout + verify.stderr


def files(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.name != ".kafkacodec.lock"}


def test_write_refuses_a_batch_read_from_damaged_bytes(tmp_path):
    part = two_segments(tmp_path / "t-0")
    bad = flip(part.segments[0].log, 5)
    dumped = kc("dump", "--json", "--skip-corrupt", part.segments[0].log)
    assert dumped.returncode == 1
    lines = dumped.stdout.splitlines()
    assert [json.loads(line)["crcValid"] for line in lines].count(False) == 1
    out = tmp_path / "00000000000000000000.log"
    for options in (["--recompute"], []):
        run = kc("write", *options, out, stdin=dumped.stdout)
        assert run.returncode == 2 and not out.exists()
        assert run.stderr.startswith("error: line 6: crcValid: false: the batch was read from damaged bytes")
    # told explicitly, it is written (with a CRC of its own)
    run = kc("write", "--recompute", "--accept-damaged", out, stdin=dumped.stdout)
    assert run.returncode == 0, run.stderr
    assert scan_file(out).batches[5].size == bad.size


def test_recover_salvage_puts_the_intact_batches_back_and_reports_the_gap(tmp_path):
    part = two_segments(tmp_path / "t-0")
    original = records(part.path)
    first, second = part.segments
    bad = flip(first.log, 5)
    lost = range(bad.entry.base_offset, bad.last_offset + 1)
    kept_batches = scan_file(first.log).batches  # the valid first five
    assert len(kept_batches) == 5
    before = files(part.path)

    dry = kc("recover", "--salvage", "--dry-run", part.path)
    assert dry.returncode == 0, dry.stderr
    assert files(part.path) == before
    salvaged = part.path / f"{bad.last_offset + 1:020d}.log"
    assert f"would salvage offsets {bad.last_offset + 1}..{second.base_offset - 1} " in dry.stdout
    assert f"as {salvaged}" in dry.stdout

    run = kc("recover", "--salvage", part.path)
    assert run.returncode == 0, run.stderr
    kept = part.path / f"{first.log.name}.corrupt-{bad.position}"
    assert f"{kept}: salvaged offsets {bad.last_offset + 1}..{second.base_offset - 1} (" in run.stdout
    assert f"into {salvaged}" in run.stdout
    assert f"{kept}: offset {lost[0]} is not in the log (what the damaged bytes held of them is lost)" in run.stdout
    assert len(lost) == 1
    assert f"{kept}: bytes 0..{bad.size} ({bad.size} bytes) skipped" in run.stdout
    # every record but the damaged batch's is back, at its offset, and the log verifies
    assert records(part.path) == [r for r in original if r[0] not in lost]
    assert_only_the_gap(part.path, lost)
    assert kc("reindex", "--check", part.path).returncode == 0  # indexes as Kafka's recovery builds them
    txn = read_txn_index(salvaged.with_suffix(".txnindex").read_bytes())
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in txn] == [(7, 20, 21)]
    # the kept bytes stay whole; running it again changes nothing
    after = files(part.path)
    assert kept.read_bytes() == before[first.log.name][bad.position:]
    again = kc("recover", "--salvage", part.path)
    assert again.returncode == 0 and "salvaged" not in again.stdout
    assert files(part.path) == after


def test_cuts_kept_by_an_earlier_recover_are_salvaged_later(tmp_path):
    part = two_segments(tmp_path / "logs" / "t-0")
    bad = flip(part.segments[0].log, 3)
    assert kc("recover", tmp_path / "logs").returncode == 0
    run = kc("recover", "--salvage", tmp_path / "logs")
    assert run.returncode == 0, run.stderr
    assert f"salvaged offsets {bad.last_offset + 1}.." in run.stdout
    assert_only_the_gap(tmp_path / "logs", range(bad.entry.base_offset, bad.last_offset + 1))


def test_an_interrupted_salvage_is_finished_by_the_next_run(tmp_path):
    """Indexes are written before the .log: interrupted in between, there is no segment yet, and
    the next run writes it whole."""
    part = two_segments(tmp_path / "t-0")
    flip(part.segments[0].log, 5)
    assert kc("recover", "--salvage", part.path).returncode == 0
    done = files(part.path)
    new_log = next(name for name in done if name.endswith(".log") and name not in
                   {s.log.name for s in part.segments})
    (part.path / new_log).unlink()  # as if stopped before the last rename
    (part.path / new_log.replace(".log", ".index")).write_bytes(b"\x00" * 8)
    run = kc("recover", "--salvage", part.path)
    assert run.returncode == 0, run.stderr
    assert files(part.path) == done


def test_a_segment_path_salvages_that_segment_only(tmp_path):
    part = two_segments(tmp_path / "t-0")
    bad = flip(part.segments[0].log, 5)
    flip(part.segments[1].log, 20)
    run = kc("recover", "--salvage", part.segments[0].log)
    assert run.returncode == 0, run.stderr
    assert f"salvaged offsets {bad.last_offset + 1}.." in run.stdout
    assert run.stdout.count("salvaged offsets") == 1
    assert kc("verify", part.segments[0].log).returncode == 0  # cut
    assert kc("verify", part.path).returncode == 1  # the other segment's damage is left as it is
