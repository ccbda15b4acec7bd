"""`verify` decodes every record: damage under a valid CRC is found, named by file and byte;
`--quick` checks what Kafka's recovery checks and passes it. Both run in linear time."""
import struct
import subprocess
import sys
import time

import pytest
from tests.support.damage import with_valid_crc

from kafkacodec import write_batch
from kafkacodec.storage.segments.resync import next_valid_batch
from kafkacodec.storage.segments.scan import batch_positions

RECORDS_AT = 61


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, timeout=300)


def records(n, offset=0, value=b"v" * 100):
    return [{"key": b"key-%d" % (offset + i), "value": value, "timestamp": 1_700_000_000_000 + offset + i}
            for i in range(n)]


def segment(tmp_path, damaged: bytes, before=3, after=2):
    """A segment with `before` good batches, the damaged one, `after` good ones; its path and where
    the damaged batch starts."""
    good = [write_batch(records(5, 5 * i), base_offset=5 * i) for i in range(before + after + 1)]
    data = b"".join(good[:before]) + damaged + b"".join(good[before + 1:])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path, len(b"".join(good[:before]))


def over_long_varint():
    b = bytearray(write_batch(records(5, 15), base_offset=15))
    b[RECORDS_AT + 2:RECORDS_AT + 13] = b"\xff" * 11  # the first record's timestamp delta never ends
    return with_valid_crc(bytes(b))


def wrong_record_count():
    b = bytearray(write_batch(records(5, 15), base_offset=15))
    struct.pack_into(">i", b, 57, 6)
    return with_valid_crc(bytes(b))


def damaged_deflate():
    b = bytearray(write_batch(records(5, 15, b"compressible " * 40), base_offset=15, compression="gzip"))
    b[RECORDS_AT + 30] ^= 0xFF
    return with_valid_crc(bytes(b))


@pytest.mark.parametrize("damage", [over_long_varint, wrong_record_count, damaged_deflate])
def test_damage_under_a_valid_crc_fails_deep_verify_only(tmp_path, damage):
    path, at = segment(tmp_path, damage())
    quick = kc("verify", "--quick", str(path))
    assert quick.returncode == 0, quick.stderr  # framing and CRCs are fine: recovery would keep it
    deep = kc("verify", str(path))
    assert deep.returncode == 1
    line = next(line for line in deep.stderr.splitlines() if "invalid from byte" in line)
    assert str(path) in line and f"invalid from byte {at} " in line, deep.stderr
    assert "Traceback" not in deep.stderr


def test_decompression_bomb_is_refused_within_the_limit(tmp_path):
    bomb = write_batch([{"key": None, "value": bytes((4 << 20) // 5)}] * 5, base_offset=15, compression="zstd")
    path, at = segment(tmp_path, bomb)
    assert kc("verify", str(path)).returncode == 0  # 4 MiB inflates within the default limit
    run = kc("--max-decompressed-bytes", str(1 << 20), "verify", str(path))  # not inflated past the limit
    assert run.returncode == 1 and f"batch at position {at}: records not checked: zstd" in run.stderr, run.stderr
    assert kc("--max-decompressed-bytes", str(1 << 20), "verify", "--quick", str(path)).returncode == 0


def test_skip_corrupt_reports_each_damaged_batch_and_reads_on(tmp_path):
    path, at = segment(tmp_path, over_long_varint(), before=2, after=3)
    data = path.read_bytes()
    starts = batch_positions(data)
    flipped = bytearray(data)
    flipped[starts[4] + 40] ^= 1  # a bad CRC further on
    path.write_bytes(bytes(flipped))
    run = kc("verify", "--skip-corrupt", str(path))
    assert run.returncode == 1
    ranges = [line for line in run.stderr.splitlines() if "damaged:" in line]
    assert len(ranges) == 2, run.stderr
    assert f"bytes {starts[2]}..{starts[3]} damaged" in ranges[0]  # the whole batch whose records do not read
    assert f"bytes {starts[4]}..{starts[5]} damaged" in ranges[1]  # up to the next batch whose CRC matches
    assert "2 valid batches after the first damage\n" in run.stderr  # recovery keeps the batch: its CRC is fine


def test_a_valid_log_reports_its_records(tmp_path):
    path, _ = segment(tmp_path, write_batch(records(5, 15), base_offset=15, compression="lz4"))
    run = kc("verify", str(path))
    assert run.returncode == 0, run.stderr
    assert " 30 " in run.stdout  # records decoded: 6 batches of 5


def _ratio(small, large, pairs=7):
    """Median over runs taken in turn of the CPU time of `large()` over that of `small()`: CPU
    time of this process (other work on the machine barely moves it), runs interleaved so that
    a slow phase of the machine weighs on both sides."""
    import gc
    import statistics

    ratios = []
    for _ in range(pairs):
        times = []
        for fn in (small, large):
            gc.collect()
            t = time.process_time()
            fn()
            times.append(time.process_time() - t)
        ratios.append(times[1] / times[0])
    return statistics.median(ratios)


def test_verify_time_is_linear_in_the_number_of_batches(tmp_path):
    """Index entries are settled as batches go by (each entry once), not by a scan per entry."""
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.audit.verify import verify_partition

    def partition(n):
        part = tmp_path / f"t{n}-0"
        part.mkdir()
        one = b"".join(write_batch(records(1, i), base_offset=i) for i in range(n))
        (part / "00000000000000000000.log").write_bytes(one)
        assert kc("reindex", str(part / "00000000000000000000.log")).returncode == 0
        return logdir.open_partition(part)

    small, large = partition(20_000), partition(40_000)
    assert all(r.ok for r in verify_partition(large))
    ratio = _ratio(lambda: verify_partition(small), lambda: verify_partition(large))
    assert ratio < 3.0, ratio  # twice the batches: about twice the time (a scan per entry made it four)


def test_resuming_after_damage_is_linear_on_bytes_that_look_like_long_batches():
    """`01 02 00` repeated: every third position has magic 2 and a size field of 64.5 KiB, so a
    checksum per candidate was quadratic."""
    small, large = b"\x01\x02\x00" * (1 << 17), b"\x01\x02\x00" * (1 << 18)
    assert next_valid_batch(small, 0) is None
    ratio = _ratio(lambda: next_valid_batch(small, 0), lambda: next_valid_batch(large, 0))
    assert ratio < 3.0, ratio


def test_offsets_outside_the_segment_are_reported(tmp_path):
    """A batch below the segment's base offset, or negative, cannot be indexed: verify says so."""
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000100.log").write_bytes(write_batch(records(2), base_offset=40)
                                                     + write_batch(records(2), base_offset=-7))
    run = kc("verify", str(part))
    assert run.returncode == 1
    assert "ends at offset 41, outside the segment's offsets 100.." in run.stderr
    assert "ends at offset -6, outside" in run.stderr


def test_fifos_and_devices_are_refused_without_waiting(tmp_path):
    import os

    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/zero"):
        run = kc("verify", str(target))
        assert run.returncode == 2 and f"error: {target}: is a" in run.stderr and "Traceback" not in run.stderr


def test_record_offsets_that_go_back_or_leave_their_batch_are_damage(tmp_path):
    """Offsets deltas must rise within 0..last_offset_delta: a consumer trusts them."""
    b = bytearray(write_batch(records(3, 15), base_offset=15))
    struct.pack_into(">i", b, 23, 1)  # last offset delta 1, yet the third record says 2
    path, at = segment(tmp_path, with_valid_crc(bytes(b)))
    run = kc("verify", str(path))
    assert run.returncode == 1 and f"invalid from byte {at} " in run.stderr, run.stderr
    assert "offset delta 2 does not rise" in run.stderr


def test_deep_verify_needs_numpy_only(tmp_path):
    """pyarrow is an extra; the deep check decodes columns with numpy alone."""
    path, at = segment(tmp_path, over_long_varint())
    code = ("import sys; sys.modules['pyarrow'] = None\n"
            "from pathlib import Path\nfrom kafkacodec.storage.layout.logdir import segment_of\n"
            "from kafkacodec.storage.audit.verify import verify_segment\n"
            f"r = verify_segment(segment_of(Path({str(path)!r})))\n"
            "print(r.valid_bytes, r.records, type(r.error).__name__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == [str(at), "15", "InvalidValueError"], run.stderr


def test_a_batch_over_the_limits_is_not_damage_and_nothing_cuts_or_skips_it(tmp_path):
    """A batch that inflates past --max-decompressed-bytes cannot be checked in this run; verify
    says so, and neither recover nor clean --skip-corrupt may take it (or what follows) out."""
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.segments.reader import partition_records

    part = tmp_path / "logs" / "t-0"
    part.mkdir(parents=True)
    big = write_batch([{"key": b"big", "value": bytes(2 << 20)}], base_offset=15, compression="zstd")
    path, at = segment(part, big)
    limit = ["--max-decompressed-bytes", str(1 << 20)]
    run = kc(*limit, "verify", str(path))
    assert run.returncode == 1 and f"batch at position {at}: records not checked" in run.stderr, run.stderr
    assert "invalid from byte" not in run.stderr
    before = path.read_bytes()
    assert kc(*limit, "recover", str(part)).returncode == 0
    assert path.read_bytes() == before and not list(part.glob("*.corrupt*"))
    cleaned = kc(*limit, "clean", str(part), "--policy", "compact", "--skip-corrupt", "--min-cleanable-dirty-ratio",
                 "0", "--apply", "--out", str(tmp_path / "out"))
    assert cleaned.returncode == 1 and "larger than this run's limits" in cleaned.stderr, cleaned.stderr
    assert len(list(partition_records(logdir.open_partition(part)))) == 26


def test_a_base_offset_changed_outside_the_crc_is_caught_by_order(tmp_path):
    """The CRC does not cover a v2 batch's base offset: a batch overlapping the one before is
    only seen by comparing their offsets."""
    path, at = segment(tmp_path, write_batch(records(5, 15), base_offset=12))  # 12..16 after 10..14
    for flag in ([], ["--quick"]):
        run = kc("verify", *flag, str(path))
        assert run.returncode == 1 and f"batch at position {at} holds offsets 12..16, not after the previous " \
                                       "batch's last offset 14" in run.stderr, run.stderr
