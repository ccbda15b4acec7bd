"""The writer under real faults: a full disk and a file system gone read-only. It never
acknowledges a record it cannot read back, and a failed append leaves the files as they were."""
import os
import random
import shutil
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from tests.support import ROOT
from tests.support.disks import contents, fill, free, remount, tmpfs
from tests.support.syscalls import trace
from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.state.producers import rebuild_txn_index
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.change.writer import AppendFailed, PartitionWriter

INTERVAL = 300
ABORT, COMMIT = b"\x00\x00\x00\x00", b"\x00\x00\x00\x01"


def batches(seed):
    """(records, options) of plain, transactional and marker batches, sizes varying."""
    rng = random.Random(seed)
    sequence = 0
    while True:
        kind = rng.random()
        if kind < 0.12:  # a marker ends the producer's open transaction
            yield [{"key": rng.choice((ABORT, COMMIT)), "value": b"\x00\x00\x00\x00\x00\x05",
                    "timestamp": 1000 + sequence}], dict(is_control=True, is_transactional=True,
                                                         producer_id=7, producer_epoch=0)
            continue
        n = rng.randrange(1, 12)
        recs = [{"key": b"k%d" % rng.randrange(50), "value": bytes([rng.randrange(256)]) * rng.randrange(1, 700),
                 "timestamp": 1000 + sequence + i, "headers": [("h", b"%d" % i)]} for i in range(n)]
        if kind < 0.5:
            yield recs, dict(is_transactional=True, producer_id=7, producer_epoch=0, base_sequence=sequence)
            sequence += n
        else:
            yield recs, dict(compression=rng.choice(("none", "gzip", "zstd")))


def check_partition(part, acknowledged):
    """Every acknowledged range reads back with its records, nothing else is there, every
    segment passes the recovery scan and its indexes are what Kafka's recovery rebuilds."""
    p = logdir.open_partition(part)
    read = [(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            for batch, r in partition_records(p, on_damage=lambda d: pytest.fail(f"damage: {d}"))
            if not batch.entry.is_control]
    want = [(first + i, r["timestamp"], r["key"], r["value"], r["headers"])
            for first, last, recs, options in acknowledged if not options.get("is_control")
            for i, r in enumerate(recs)]
    assert read == want
    for seg in p.segments:
        scan = scan_file(seg.log)
        assert scan.is_valid, (seg.log, scan.error)
        offsets, times = index.rebuild(scan.batches, seg.base_offset, INTERVAL)
        assert index.read_offset_index(seg.index.read_bytes(), seg.base_offset) == offsets
        assert index.read_time_index(seg.time_index.read_bytes(), seg.base_offset) == times
        aborted, _ = rebuild_txn_index(p, seg.base_offset, scan.batches)
        assert (read_txn_index(seg.txn_index.read_bytes()) if seg.txn_index else []) == aborted
    ends = [b.last_offset for seg in p.segments for b in scan_file(seg.log).batches]
    assert ends == [last for _, last, _, _ in acknowledged]


def test_every_append_on_a_full_disk_is_all_or_nothing(tmp_path):
    """Each append is tried on a disk with no block left: a write that needs one fails part-way
    (the .log torn inside a batch, or an index, the .txnindex or a roll's snapshot). Then the
    files are exactly as before, the writer's state too, and once space is freed the same append
    succeeds at the same offsets."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        part = disk / "t-0"
        acknowledged, failed_in = [], Counter()
        w = PartitionWriter(part, segment_bytes=5000, index_interval_bytes=INTERVAL)
        source = batches(3)
        while len(acknowledged) < 150:
            recs, options = next(source)
            fillers = fill(disk)
            before, next_offset, producers = contents(part), w.next_offset, w.producers.to_snapshot()
            try:
                first, last = w.append(recs, **options)
            except AppendFailed as err:
                failed_in[os.path.splitext(err.file)[1]] += 1
                assert "no space left on the device" in str(err)
                assert contents(part) == before
                assert (w.next_offset, w.producers.to_snapshot()) == (next_offset, producers)
                free(fillers)
                first, last = w.append(recs, **options)
            free(fillers)
            assert first == next_offset
            acknowledged.append((first, last, recs, options))
        w.close()
        assert w.failed is None
        # the faults struck every kind of file the writer appends to or creates
        assert {".log", ".index", ".timeindex", ".txnindex", ".snapshot"} <= set(failed_in), failed_in
        check_partition(part, acknowledged)
        with PartitionWriter(part, segment_bytes=5000, index_interval_bytes=INTERVAL) as w:  # a restart goes on
            recs, options = next(source)
            acknowledged.append((*w.append(recs, **options), recs, options))
        check_partition(part, acknowledged)


def test_a_file_system_gone_read_only_acknowledges_nothing(tmp_path):
    with tmpfs(tmp_path / "disk", "2m") as disk:
        part = disk / "t-0"
        acknowledged = []
        source = batches(11)
        w = PartitionWriter(part, segment_bytes=4000, index_interval_bytes=INTERVAL)
        for _ in range(20):
            recs, options = next(source)
            acknowledged.append((*w.append(recs, **options), recs, options))
        before, next_offset = contents(part), w.next_offset
        remount(disk, "ro")
        try:
            for _ in range(15):  # enough bytes that one of them would roll the segment
                recs, options = next(source)
                with pytest.raises(AppendFailed, match="read-only") as err:
                    w.append(recs, **options)
                assert err.value.file.startswith(str(part))
                assert w.next_offset == next_offset
        finally:
            remount(disk, "rw")
        assert contents(part) == before and w.failed is None
        for _ in range(10):
            recs, options = next(source)
            acknowledged.append((*w.append(recs, **options), recs, options))
        w.close()
        check_partition(part, acknowledged)


TORN = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tests.support.disks import fill, free
    from kafkacodec.storage.change.writer import PartitionWriter, WriterFailed
    disk = Path(sys.argv[1])
    w = PartitionWriter(disk / "t-0")
    for i in range(5):
        print("acked", *w.append([{"value": b"v%d" % i, "timestamp": i}]), flush=True)
    print("size", w.size, flush=True)
    fillers = fill(disk)
    try:
        w.append([{"value": bytes(range(256)) * 64, "timestamp": 9}])  # needs pages the disk has not
    except WriterFailed as err:
        print("failed", err, flush=True)
    free(fillers)
    try:
        w.append([{"value": b"after", "timestamp": 10}])
    except WriterFailed as err:
        print("refused", err, flush=True)
    w.close()
""")


def test_a_write_that_cannot_be_taken_back_stops_the_writer(tmp_path):
    """The disk fills inside a batch and cutting the torn bytes off fails too (truncate fails,
    injected by strace): the writer refuses every later append instead of writing behind the
    torn batch, and `kafkacodec recover` then cuts the tail off, keeping its bytes."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    with tmpfs(tmp_path / "disk", "256k") as disk:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        run = subprocess.run(["strace", "-f", "-o", "/dev/null", "-e", "trace=truncate,ftruncate",
                              "-e", "inject=truncate,ftruncate:error=EIO", sys.executable, "-c", TORN, str(disk)],
                             capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        lines = [line.split(" ", 1) for line in run.stdout.splitlines()]
        acked = [tuple(map(int, rest.split())) for word, rest in lines if word == "acked"]
        assert acked == [(i, i) for i in range(5)]
        (size,) = [int(rest) for word, rest in lines if word == "size"]
        failed = [rest for word, rest in lines if word == "failed"]
        refused = [rest for word, rest in lines if word == "refused"]
        log = disk / "t-0" / "00000000000000000000.log"
        assert len(failed) == 1 and str(log) in failed[0] and "recover it before appending" in failed[0]
        assert len(refused) == 1 and "no append is taken" in refused[0]
        assert log.stat().st_size > size  # the torn batch is still there, and nothing behind it
        assert scan_file(log).valid_bytes == size
        kc = [sys.executable, "-m", "kafkacodec"]
        recovered = subprocess.run(kc + ["recover", str(disk / "t-0")], capture_output=True, text=True)
        assert recovered.returncode == 0 and f"truncated to {size} bytes" in recovered.stdout
        p = logdir.open_partition(disk / "t-0")
        assert [r.value for _, r in partition_records(p)] == [b"v%d" % i for i in range(5)]
        with PartitionWriter(disk / "t-0") as w:
            assert w.append([{"value": b"after", "timestamp": 10}]) == (5, 5)



DURABLE = textwrap.dedent("""
    import os, sys
    from kafkacodec.storage.change.writer import PartitionWriter
    w = PartitionWriter(sys.argv[1], segment_bytes=3000, index_interval_bytes=0, fsync=True)
    for i in range(12):
        w.append([{"value": b"x" * 900, "timestamp": i}], producer_id=3, producer_epoch=0, base_sequence=i)
        os.access(f"/mark-{i}", os.F_OK)
    w.close()
    os.access("/mark-close", os.F_OK)
""")


def test_with_fsync_each_append_is_on_the_disk_when_it_returns(tmp_path):
    """Between two acknowledgements: every file appended to is flushed, every file created is
    followed by a flush of the directory, and a snapshot is flushed before its rename and the
    directory after it."""
    part = tmp_path / "t-0"
    events = trace(DURABLE, str(part))
    intervals, current = [], []
    for event in events:
        if event[0] == "mark":
            intervals.append(current)
            current = []
        else:
            current.append(event)
    assert len(intervals) == 13
    created = renamed = 0
    for calls in intervals:
        for i, event in enumerate(calls):
            later = calls[i + 1:]
            if event[0] == "open" and "O_APPEND" in event[2]:
                assert ("sync", event[1]) in later, event
            elif event[0] == "open" and "O_EXCL" in event[2]:
                created += 1
                assert ("sync", str(part)) in later, event
            elif event[0] == "rename":
                renamed += 1
                assert ("sync", event[1]) in calls[:i] and ("sync", str(part)) in later, event
    assert created >= 9 and renamed >= 3  # segments rolled, snapshots written
