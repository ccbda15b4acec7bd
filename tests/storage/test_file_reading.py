"""Segment files read through a window (pread), never mapped: the same batches and the same
damage as a scan of the whole bytes, wherever the window's edges fall; a file truncated under
the reader is a typed error, not SIGBUS; batches larger than the window keep memory bounded."""
import random
import subprocess
import sys
import textwrap

import pytest

from tests.support import TESTS
from kafkacodec import Record, write_batch
from kafkacodec.runtime.errors import ChecksumError, DecodeError, TruncatedError
from kafkacodec.storage.segments import scan
from kafkacodec.storage.diskio import windowed
from kafkacodec.storage.layout.logdir import segment_of
from kafkacodec.storage.segments.reader import Damage, segment_batches


def mixed_segment(seed: int, batches: int = 60) -> bytes:
    """v2 batches and legacy entries of sizes from a few dozen bytes to some KiB."""
    rng = random.Random(seed)
    out, offset = bytearray(), 0
    for _ in range(batches):
        n = rng.randrange(1, 8)
        magic = rng.choice([0, 1, 2, 2, 2])
        records = [Record(key=b"k", value=b"v" * rng.randrange(0, 3000), timestamp=1_000 + offset + i)
                   for i in range(n)]
        out += write_batch(records, magic=magic, base_offset=offset, compression=rng.choice(["none", "none", "gzip"]))
        offset += n
    return bytes(out)


def summary(items) -> list:
    return [(type(i).__name__, i.position, getattr(i, "path", None)) if isinstance(i, DecodeError)
            else (i.position, i.size, i.magic, i.last_offset, i.max_timestamp) for i in items]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("window", [64, 700, 4096, 1 << 20])
def test_windows_give_what_a_scan_of_the_whole_bytes_gives(tmp_path, seed, window):
    rng = random.Random(seed)
    data = bytearray(mixed_segment(seed))
    damage = rng.choice(["none", "cut", "flip", "garbage"])
    if damage == "cut":
        data = data[:rng.randrange(len(data))]
    elif damage == "flip":
        data[rng.randrange(len(data))] ^= 0xFF
    elif damage == "garbage":
        data += rng.randbytes(rng.randrange(1, 40))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    whole = list(scan.iter_batches(bytes(data)))
    read = list(scan.iter_file_batches(path, window=window))
    assert summary(read) == summary(whole)
    if isinstance(read[-1], DecodeError):
        assert read[-1].file == str(path)
    start = whole[len(whole) // 2].position if len(whole) > 2 else 0  # from a batch's start too
    assert summary(scan.iter_file_batches(path, start, window=window)) == summary(scan.iter_batches(bytes(data),
                                                                                                 start=start))
    # records decode from the window each batch was read in; `origin` places that window in the file
    for item in read:
        if not isinstance(item, DecodeError) and item.magic == 2 and item.entry.records_count:
            assert [r.value for r in item.entry.records.items] == \
                [r.value for r in next(i for i in whole if i.position == item.position).entry.records.items]
    batches = [b for b in segment_batches(segment_of(path))]
    assert [(b.position, b.size) for b in batches if not isinstance(b, Damage)] == \
        [(i.position, i.size) for i in whole if not isinstance(i, DecodeError)]


def test_scan_file_checks_a_batch_larger_than_the_window_in_parts(tmp_path, monkeypatch):
    """The header-only scan computes the CRC of a batch larger than a window in chunks and finds
    the same damage at the same byte as a scan of the whole bytes."""
    monkeypatch.setattr(windowed, "WINDOW_BYTES", 4096)
    small = write_batch([Record(key=b"a", value=b"b", timestamp=1)])
    for magic in (2, 1, 0):
        big = write_batch([Record(key=b"k" * 3000, value=bytes(range(256)) * 100, timestamp=2)], magic=magic,
                          base_offset=1)
        data = small + big + small
        path = tmp_path / f"{magic}.log"
        for flip in (None, len(small) + 40, len(small) + len(big) // 2, len(small) + len(big) - 1):
            damaged = bytearray(data)
            if flip is not None:
                damaged[flip] ^= 0x01
            path.write_bytes(damaged)
            reads = []
            real = windowed.WindowedFile.read
            monkeypatch.setattr(windowed.WindowedFile, "read", lambda f, pos, n: reads.append(n) or real(f, pos, n))
            got = scan.scan_file(path, keep_batches=False)
            monkeypatch.setattr(windowed.WindowedFile, "read", real)
            want = scan.scan_bytes(bytes(damaged), keep_batches=False)
            assert (got.valid_bytes, type(got.error), got.error and got.error.position) == \
                (want.valid_bytes, type(want.error), want.error and want.error.position), (magic, flip)
            assert max(reads) <= 4096  # never the whole batch at once
        assert isinstance(scan.scan_file(path, keep_batches=False).error, ChecksumError)


def test_a_size_field_larger_than_the_file_is_never_allocated(tmp_path, monkeypatch):
    batch = write_batch([Record(key=b"a", value=b"b", timestamp=1)])
    claims = bytearray(batch * 3)
    claims[len(batch) + 8:len(batch) + 12] = (2 ** 31 - 1).to_bytes(4, "big")  # a 2 GiB batch in 200 bytes
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(claims)
    reads = []
    real = windowed.WindowedFile.read
    monkeypatch.setattr(windowed.WindowedFile, "read", lambda f, pos, n: reads.append(min(n, f.size - pos))
                        or real(f, pos, n))
    for items in (list(scan.iter_file_batches(path)), list(scan.iter_file_batches(path, max_loaded=100))):
        assert isinstance(items[-1], TruncatedError) and items[-1].position == len(batch)
    assert scan.scan_file(path, keep_batches=False).valid_bytes == len(batch)
    assert max(reads) <= len(claims)


TRUNCATE_WHILE_READING = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from kafkacodec.storage.segments import columnar, reader, scan
    from kafkacodec.storage.layout.logdir import segment_of

    way, path, cut = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if way == "file_batches":
        items = scan.iter_file_batches(path)
    elif way == "batches":
        items = reader.segment_batches(segment_of(path))
    else:
        items = columnar.segment_columns(path, group_bytes=1)
    try:
        for n, item in enumerate(items):
            if n == 0:
                os.truncate(path, cut)  # as a follower's truncation or `recover` would, under the reader
            last = item
    except Exception as err:
        last = err
    error = getattr(last, "error", last)
    print(type(error).__name__, getattr(error, "position", None))
""")


@pytest.mark.parametrize("way", ["file_batches", "batches", "columns"])
def test_a_file_truncated_under_the_reader_is_a_typed_error_not_a_signal(tmp_path, way):
    batch = write_batch([Record(key=b"k%d" % i, value=b"v" * 1000, timestamp=i) for i in range(100)])
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        for i in range(3 * windowed.WINDOW_BYTES // len(batch)):
            f.write((i * 100).to_bytes(8, "big") + batch[8:])
    cut = (windowed.WINDOW_BYTES // len(batch) + 3) * len(batch) + 17  # past the first window, inside a batch
    run = subprocess.run([sys.executable, "-c", TRUNCATE_WHILE_READING, way, str(path), str(cut)],
                         capture_output=True, text=True, timeout=120, cwd=TESTS)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])  # SIGBUS would be -7
    name, position = run.stdout.split()
    assert name == "TruncatedError" and int(position) == cut - 17


def test_the_recovery_scan_of_a_batch_of_any_size_keeps_memory_bounded(tmp_path):
    """One batch of 128 MiB: its CRC is computed a window at a time, so the scan's peak resident
    memory stays some windows above the process's own, far below the batch."""
    part = tmp_path / "t-0"
    part.mkdir()
    batch = write_batch([Record(key=b"k", value=bytes(range(256)) * (1 << 19), timestamp=1)])
    (part / "00000000000000000000.log").write_bytes(batch + write_batch([Record(value=b"v")], base_offset=1))
    del batch
    peak = int(subprocess.run([sys.executable, str(TESTS / "support" / "scan_memory.py"), "crcs",
                               str(part / "00000000000000000000.log")],
                              capture_output=True, text=True, check=True, timeout=300).stdout)
    assert peak < 4 * windowed.WINDOW_BYTES + (16 << 20), f"{peak >> 20} MiB"
