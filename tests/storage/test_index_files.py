"""Index files are read in bounded chunks up to their zero-filled tail, and refused (a typed error
naming the file and the byte) when they hold more entries than their segment can explain or a
size that is not a whole number of entries. Producer snapshots and .txnindex files are
size-checked before they are read."""
import random
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacodec.runtime.errors import DecodeError, InvalidValueError, LimitExceededError
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.storage.indexes import index, lookup, txnindex
from kafkacodec.storage.state import producers
from kafkacodec.storage.layout.logdir import open_partition
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.change.writer import PartitionWriter

slots = st.lists(st.tuples(st.integers(0, 2 ** 31 - 1), st.integers(0, 2 ** 31 - 1)), max_size=40)


@given(slots, st.integers(0, 30), st.integers(0, 2 ** 40))
def test_streaming_readers_give_what_the_whole_bytes_give(tmp_path_factory, entries, tail, base):
    path = tmp_path_factory.mktemp("i") / "x.index"
    data = b"".join(r.to_bytes(4, "big") + p.to_bytes(4, "big") for r, p in entries) + bytes(8 * tail)
    path.write_bytes(data)
    want = index.read_offset_index(data, base)
    assert list(index.iter_offset_index(path, base, len(want))) == want
    times = b"".join((p * 7).to_bytes(8, "big") + r.to_bytes(4, "big") for r, p in entries) + bytes(12 * tail)
    path.write_bytes(times)
    want = index.read_time_index(times, base)
    assert list(index.iter_time_index(path, base, len(want))) == want


def test_chunks_end_where_the_entries_do(tmp_path, monkeypatch):
    monkeypatch.setattr(index, "CHUNK_ENTRIES", 3)
    entries = [index.OffsetEntry(100 + i, 4096 * (i + 1)) for i in range(10)]
    path = tmp_path / "00000000000000000100.index"
    for tail in (0, 1, 2, 3, 7):
        path.write_bytes(index.encode_offset_index(entries, 100) + bytes(8 * tail))
        assert list(index.iter_offset_index(path, 100, 10)) == entries
        with pytest.raises(InvalidValueError) as err:  # one live entry more than the segment explains
            list(index.iter_offset_index(path, 100, 9))
        assert err.value.file == str(path) and err.value.position == 9 * 8
        assert f"{path}: byte 72: " in str(err.value)


def test_sizes_that_are_not_whole_entries_name_the_file_and_byte(tmp_path):
    path = tmp_path / "00000000000000000000.timeindex"
    path.write_bytes(bytes(12 * 3 + 5))
    with pytest.raises(InvalidValueError) as err:
        list(index.iter_time_index(path, 0, 100))
    assert err.value.file == str(path) and err.value.position == 36 and "not a multiple of 12" in str(err.value)


def test_max_entries_is_one_per_smallest_batch():
    assert index.max_entries(0) == 1 and index.max_entries(25) == 1 and index.max_entries(26) == 2
    assert index.max_entries(26 * 1000 + 25) == 1001


def partition(tmp_path, batches: int = 40):
    part = tmp_path / "t-0"
    with PartitionWriter(part, index_interval_bytes=200) as w:
        for i in range(batches):
            w.append([{"key": b"k%d" % i, "value": b"v" * 150, "timestamp": 10_000 + 10 * i}] * 2)
    return part


PEAK = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # whatever happens, not the machine's memory
    what, args = sys.argv[1], sys.argv[2:]
    if what == "cli":
        from kafkacodec.cli import main
        try:
            main.main(args=args, prog_name="kafkacodec")
        except SystemExit as exit:
            status = exit.code
    else:
        from pathlib import Path
        from kafkacodec.storage.indexes import lookup
        from kafkacodec.storage.change import retention
        from kafkacodec.storage.layout.logdir import open_partition
        seg = open_partition(Path(args[0])).segments[0]
        batch = lookup.find_offset(seg, int(args[1]))
        print(batch.last_offset, lookup.find_timestamp(seg, int(args[2])), retention.largest_timestamp(seg))
        status = 0
    # VmHWM, not getrusage's ru_maxrss: that one keeps the parent's peak across fork and exec
    peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(f"peak {status} {peak}", file=sys.stderr)
""")


def peak_run(*args):
    run = subprocess.run([sys.executable, "-c", PEAK, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    _, status, peak = run.stderr.splitlines()[-1].split()
    return run, int(status), int(peak)


def test_a_sparse_one_gib_index_costs_what_its_live_entries_cost(tmp_path):
    """A valid segment beside a 1 GiB .index and .timeindex that hold a few entries then zeros (as
    `truncate -s 1G` leaves them): dump, reindex --check and the lookups read the live entries only."""
    part = partition(tmp_path)
    seg = open_partition(part).segments[0]
    offsets = index.read_offset_index(seg.index.read_bytes(), 0)
    times = index.read_time_index(seg.time_index.read_bytes(), 0)
    assert len(offsets) > 5 and len(times) > 5
    for path, entry in ((seg.index, 8), (seg.time_index, 12)):
        with open(path, "r+b") as f:
            f.truncate((1 << 30) // entry * entry)  # whole entries, as Kafka preallocates
    limit = 200 << 20
    run, status, peak = peak_run("cli", "dump", seg.index)
    assert status == 0 and peak < limit, (status, peak >> 20)
    assert run.stdout.splitlines()[1:] == [f"offset: {e.offset} position: {e.position}" for e in offsets]
    run, status, peak = peak_run("cli", "dump", "--verify-index-only", seg.time_index)
    assert (status, run.stderr.splitlines()[:-1]) == (0, []) and peak < limit, (status, peak >> 20, run.stderr)
    # Kafka's sanity check reads the last physical slot: zeros, older than the first entry
    run, status, peak = peak_run("cli", "dump", "--index-sanity-check", seg.time_index)
    assert status == 1 and "the last timestamp 0 is less than the first" in run.stderr and peak < limit
    run, status, peak = peak_run("cli", "dump", "--index-sanity-check", seg.index)
    assert status == 0 and run.stdout.splitlines()[-1].endswith("passed sanity check.") and peak < limit
    run, status, peak = peak_run("cli", "reindex", "--check", "--index-interval-bytes", "200", seg.log)
    assert status == 0 and peak < limit, (status, peak >> 20, run.stderr)
    # verify and recover read the same live entries: both find nothing to do
    run, status, peak = peak_run("cli", "verify", part)
    assert status == 0 and peak < limit, (status, peak >> 20, run.stderr)
    run, status, peak = peak_run("cli", "recover", "--dry-run", part)
    assert status == 0 and "nothing to recover" in run.stdout and peak < limit, (status, run.stdout, run.stderr)
    run, status, peak = peak_run("lookup", part, offsets[3].offset + 1, times[4].timestamp)
    assert status == 0 and peak < limit, (peak >> 20, run.stderr)
    records = [(b.last_offset, r.timestamp, r.offset) for b, r in partition_records(open_partition(part))]
    first_batch_end = next(last for last, _, offset in records if offset >= offsets[3].offset + 1)
    first_record = next((ts, offset) for _, ts, offset in records if ts >= times[4].timestamp)
    assert run.stdout.split() == [str(first_batch_end), f"({first_record[0]},", f"{first_record[1]})",
                                  str(max(ts for _, ts, _ in records))]


def test_an_index_with_more_entries_than_its_segment_explains_is_refused(tmp_path):
    part = partition(tmp_path, batches=3)
    seg = open_partition(part).segments[0]
    explained = index.max_entries(seg.log.stat().st_size)
    rng = random.Random(1)
    junk = b"".join((i + 1).to_bytes(4, "big") + rng.randrange(1, 2 ** 31).to_bytes(4, "big")
                    for i in range(explained + 5))
    seg.index.write_bytes(junk)
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", str(seg.index)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert f"error: {seg.index}: byte {explained * 8}: offset_index: offset index holds more than {explained} " \
           "entries" in run.stderr
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "reindex", "--check", str(seg.log)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and f"{seg.index}: differs from the rebuilt index" in run.stderr
    with pytest.raises(InvalidValueError) as err:
        lookup.find_offset(seg, 1)
    assert err.value.file == str(seg.index) and err.value.position == explained * 8


def test_txnindex_and_snapshot_sizes_are_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "00000000000000000000.txnindex"
    entries = [txnindex.AbortedTxn(7, i, i + 1, i + 2) for i in range(0, 40, 2)]
    path.write_bytes(txnindex.encode_txn_index(entries) + b"\x00" * 5)  # and a torn final entry
    assert txnindex.read_txn_index_file(path, 26 * 19) == entries
    with pytest.raises(InvalidValueError) as err:
        txnindex.read_txn_index_file(path, 26 * 18)  # a segment of 19 batches at most
    assert err.value.file == str(path) and "more than 19 entries" in str(err.value)
    monkeypatch.setattr(txnindex, "CHUNK_ENTRIES", 3)
    assert list(txnindex.iter_txn_index(path, None)) == entries
    bad = bytearray(path.read_bytes())
    bad[34 * 7] = 1  # the eighth entry's version
    path.write_bytes(bytes(bad))
    with pytest.raises(DecodeError) as err:
        list(txnindex.iter_txn_index(path, None))
    assert err.value.file == str(path) and err.value.position == 34 * 7
    snap = tmp_path / "00000000000000000005.snapshot"
    state = producers.ProducerState({i: producers.ProducerEntry(i, 0, 1, 2) for i in range(4)}, 5)
    snap.write_bytes(state.to_snapshot())
    assert producers.read_snapshot(snap) == snap.read_bytes()
    monkeypatch.setattr(LIMITS, "max_items", 3)
    with pytest.raises(LimitExceededError) as err:  # larger than 3 producers can take: not read
        producers.read_snapshot(snap)
    assert err.value.file == str(snap)


def test_searches_on_an_index_file_give_what_the_whole_index_gives(tmp_path):
    """Slots read a block at a time, time entries across two blocks included."""
    from kafkacodec.storage.indexes import index_search
    rng = random.Random(7)
    base, offset, position, offsets, times = 5_000, 5_000, 0, [], []
    for i in range(3_000):
        offset += rng.randrange(1, 30)
        position += rng.randrange(4097, 9000)
        offsets.append(index.OffsetEntry(offset, position))
        times.append(index.TimeEntry(1_000 + 3 * i, offset))
    (tmp_path / "x.index").write_bytes(index.encode_offset_index(offsets, base) + bytes(8 * 500))
    (tmp_path / "x.timeindex").write_bytes(index.encode_time_index(times, base) + bytes(12 * 500))
    with index_search.IndexFile(tmp_path / "x.index", index.OFFSET_ENTRY, "offset index") as f, \
            index_search.IndexFile(tmp_path / "x.timeindex", index.TIME_ENTRY, "time index") as t:
        assert index_search.offset_entries(f) == index_search.time_entries(t) == 3_000
        for _ in range(300):
            target = rng.randrange(base - 10, offset + 10)
            assert index_search.lookup_offset(f, base, target) == index.lookup_offset(offsets, base, target)
            stamp = rng.randrange(990, 1_000 + 3 * 3_000)
            assert index_search.lookup_time(t, base, stamp) == index.lookup_time(times, base, stamp)
        assert index_search.last_time_entry(t, base) == times[-1]


def test_the_spark_planner_reads_indexes_as_far_as_their_live_entries(tmp_path, monkeypatch):
    from kafkacodec.pipeline import segment_reads
    from kafkacodec.pipeline.files import list_log
    part = partition(tmp_path)
    seg = open_partition(part).segments[0]
    want = (index.read_offset_index(seg.index.read_bytes(), 0), index.read_time_index(seg.time_index.read_bytes(), 0))
    for path, entry in ((seg.index, 8), (seg.time_index, 12)):
        with open(path, "r+b") as f:
            f.truncate((1 << 30) // entry * entry)
    txn = txnindex.encode_txn_index([txnindex.AbortedTxn(7, 1, 2, 3)])
    seg.log.with_suffix(".txnindex").write_bytes(txn * (index.max_entries(seg.log.stat().st_size) + 1))
    read = []
    real = segment_reads.read_at
    monkeypatch.setattr(segment_reads, "read_at", lambda f, n, pos: read.append(n) or real(f, n, pos))
    files = list_log(str(part)).partitions[0].segments[0]
    assert segment_reads.read_indexes(str(part), files) == want
    assert sum(read) < 1 << 20
    with pytest.raises(InvalidValueError, match="more than .* entries"):
        segment_reads.read_aborted(str(part), files)


def test_clean_names_a_time_index_with_a_stray_byte(tmp_path):
    part = partition(tmp_path)
    tidx = open_partition(part).segments[0].time_index
    size = tidx.stat().st_size
    with open(tidx, "ab") as f:
        f.write(b"x")
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "clean", str(part), "--policy", "delete"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.splitlines()[0] == f"error: {tidx}: byte {size}: time_index: time index of {size + 1} bytes is not a " \
                                 "multiple of 12"


def test_reindex_check_names_a_missing_index_as_missing(tmp_path):
    part = partition(tmp_path, batches=3)
    seg = open_partition(part).segments[0]
    seg.index.unlink()
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "reindex", "--check", "--index-interval-bytes", "1",
                          str(seg.log)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and f"{seg.index}: differs" not in run.stderr
    assert f"{seg.index}: missing (the rebuilt index has 2 entries)" in run.stderr  # each batch after the first
