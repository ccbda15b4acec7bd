"""The partition writer: offsets, rolls, indexes equal to a rebuild, and crash safety."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter, WriteRefused


def records(n, start):
    return [{"key": b"k%d" % (start + i), "value": b"v" * 200, "timestamp": 10_000 + start + i} for i in range(n)]


def test_writes_roll_and_index_like_kafka(tmp_path):
    part = tmp_path / "t-0"
    with PartitionWriter(part, segment_bytes=20_000, index_interval_bytes=1500) as w:
        ranges = [w.append(records(5, i * 5)) for i in range(60)]
    assert ranges[0] == (0, 4) and ranges[-1] == (295, 299)
    p = logdir.open_partition(part)
    assert len(p.segments) >= 3 and p.segments[0].base_offset == 0
    assert all(seg.log.stat().st_size <= 20_000 for seg in p.segments)
    reports = verify_partition(p)
    assert all(r.ok for r in reports), [r.problems for r in reports]
    for seg in p.segments:  # the indexes written while appending equal Kafka's rebuild
        scan = scan_file(seg.log)
        offsets, times = index.rebuild(scan.batches, seg.base_offset, 1500)
        assert index.read_offset_index(seg.index.read_bytes(), seg.base_offset) == offsets
        assert index.read_time_index(seg.time_index.read_bytes(), seg.base_offset) == times
        assert scan.batches[0].last_offset - 4 == seg.base_offset


def test_reopening_continues_the_offsets(tmp_path):
    with PartitionWriter(tmp_path / "t-0") as w:
        w.append(records(3, 0))
    with PartitionWriter(tmp_path / "t-0") as w:
        assert w.append(records(2, 3)) == (3, 4)
    (seg,) = logdir.open_partition(tmp_path / "t-0").segments
    assert [b.last_offset for b in scan_file(seg.log).batches] == [2, 4]


def test_a_damaged_tail_is_not_appended_to(tmp_path):
    with PartitionWriter(tmp_path / "t-0") as w:
        w.append(records(3, 0))
    log = tmp_path / "t-0" / "00000000000000000000.log"
    log.write_bytes(log.read_bytes() + b"\x00" * 40)
    with pytest.raises(WriteRefused, match="damaged from byte"):
        PartitionWriter(tmp_path / "t-0")


CHILD = textwrap.dedent("""
    import sys
    from kafkacodec.storage.change.writer import PartitionWriter
    w = PartitionWriter(sys.argv[1], segment_bytes=50_000, index_interval_bytes=2000)
    i = 0
    while True:
        first, last = w.append([{"value": b"x" * (100 + i % 700), "timestamp": i} for _ in range(1 + i % 9)])
        print(last, flush=True)
        i += 1
""")


def test_killed_writer_loses_no_completed_batch(tmp_path):
    part = tmp_path / "t-0"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(part)], stdout=subprocess.PIPE, text=True)
    reported = []
    deadline = time.time() + 20
    while len(reported) < 400 and time.time() < deadline:
        reported.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reported += [int(line) for line in proc.stdout.read().split()]  # printed before the kill
    assert len(reported) >= 400
    p = logdir.open_partition(part)
    kept = [b.last_offset for seg in p.segments for b in scan_file(seg.log).batches]
    # every batch reported complete is there, in order, with nothing else but perhaps one more
    assert kept[:len(reported)] == reported
    assert len(kept) - len(reported) <= 1
    # whatever the kill cut short is a tail the recovery scan cuts off; indexes at most lag
    for report in verify_partition(p)[:-1]:
        assert report.ok, report.problems


def test_lookups_by_offset_and_timestamp(tmp_path):
    from kafkacodec.storage.indexes.lookup import find_offset, find_timestamp
    with PartitionWriter(tmp_path / "t-0", index_interval_bytes=1000) as w:
        for i in range(50):
            w.append([{"value": b"x" * 100, "timestamp": 1000 + 10 * (i * 4 + j)} for j in range(4)])
    (seg,) = logdir.open_partition(tmp_path / "t-0").segments
    assert index.read_offset_index(seg.index.read_bytes(), 0)  # the lookups go through entries
    for target in (0, 1, 3, 4, 77, 150, 199):
        batch = find_offset(seg, target)
        assert batch.base_offset <= target <= batch.last_offset
        assert [r.offset for r in batch][target % 4] == target
    assert find_offset(seg, 200) is None
    for ts in (0, 1000, 1005, 1010, 2990, 2995, 10 ** 9):
        want = min(((1000 + 10 * o, o) for o in range(200) if 1000 + 10 * o >= ts), default=None)
        assert find_timestamp(seg, ts) == want


def test_reading_a_partition_goes_on_past_a_damaged_segment(tmp_path):
    from kafkacodec.storage.segments.reader import partition_records
    with PartitionWriter(tmp_path / "t-0", segment_bytes=6000) as w:
        for i in range(30):
            w.append(records(4, i * 4))
    p = logdir.open_partition(tmp_path / "t-0")
    assert len(p.segments) >= 3
    every = [r.offset for _, r in partition_records(p)]
    assert every == list(range(120))
    victim = p.segments[1].log
    second = scan_file(victim).batches[1]
    lost = set(range(second.last_offset - 3, p.segments[2].base_offset))  # that batch and the rest
    data = bytearray(victim.read_bytes())
    data[second.position + 30] ^= 0xFF  # inside the CRC range of its second batch
    victim.write_bytes(bytes(data))
    second_batch = second.position
    damage = []
    kept = [r.offset for _, r in partition_records(p, on_damage=damage.append)]
    assert kept == [o for o in range(120) if o not in lost]
    (d,) = damage
    assert d.segment.log == victim and d.position == second_batch and d.error.file == str(victim)


def test_timestamp_zero_counts_as_a_timestamp(tmp_path):
    with PartitionWriter(tmp_path / "t-0", index_interval_bytes=0) as w:
        w.append([{"value": b"a", "timestamp": 0}])
        w.append([{"value": b"b", "timestamp": 0}])
    (seg,) = logdir.open_partition(tmp_path / "t-0").segments
    offsets, times = index.rebuild(scan_file(seg.log).batches, 0, 0)
    assert times == [index.TimeEntry(0, 0)]
    assert (seg.time_index.read_bytes()) == index.encode_time_index(times, 0)


def test_index_searches_read_logarithmically_many_entries_of_a_preallocated_index(monkeypatch):
    """On the file's bytes, zero-filled tail included, the search gives what the whole-index
    lookup gives, and reads O(log n) slots."""
    from kafkacodec.storage.indexes import index_search
    rng = random.Random(4)
    entries, offset, position = [], 0, 0
    for _ in range(50_000):
        offset += rng.randrange(1, 40)
        position += rng.randrange(4097, 9000)
        entries.append(index.OffsetEntry(offset, position))
    times = [index.TimeEntry(1_000 + 7 * i, e.offset) for i, e in enumerate(entries)]
    base = 1_000_000
    offsets_file = index.encode_offset_index([index.OffsetEntry(base + e.offset, e.position) for e in entries], base)
    offsets_file += bytes(80_000)  # the preallocated, zero-filled tail of an active segment
    times_file = index.encode_time_index([index.TimeEntry(t.timestamp, base + t.offset) for t in times], base)
    times_file += bytes(120_000)
    whole_offsets = index.read_offset_index(offsets_file, base)
    whole_times = index.read_time_index(times_file, base)
    reads = []
    for name in ("offset_entry", "time_entry"):
        real = getattr(index_search, name)
        monkeypatch.setattr(index_search, name, lambda buf, i, real=real: reads.append(i) or real(buf, i))
    for target in [0, base - 1, base, base + 1, base + entries[-1].offset + 5] + [
            base + rng.randrange(entries[-1].offset) for _ in range(200)]:
        reads.clear()
        assert index_search.lookup_offset(offsets_file, base, target) == index.lookup_offset(whole_offsets, base, target)
        assert len(reads) <= 2 * 17 + 2
    for target in [0, 1_000, 1_001, 10 ** 12] + [rng.randrange(1_000, 400_000) for _ in range(200)]:
        reads.clear()
        assert index_search.lookup_time(times_file, base, target) == index.lookup_time(whole_times, base, target)
        assert len(reads) <= 2 * 17 + 2
    assert index_search.offset_entries(b"") == index_search.time_entries(b"") == 0
