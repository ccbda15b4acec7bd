"""Repeated compaction of transactional data, checked against what Kafka's cleaner and recovery
do with it: a marker stays while any batch of its transaction is in the log, gets a delete
horizon only once none is, and goes only in a later cleaning past that horizon; the producer
snapshots kept agree with the segments kept, so that recovering from any of them leaves open
exactly the transactions the log left open before it was cleaned."""
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.compaction import CompactionConfig, compact
from kafkacodec.storage.state.producers import ProducerState, read_snapshot
from kafkacodec.storage.segments.reader import partition_batches
from kafkacodec.storage.state.transactions import partition_transactions
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.change.writer import PartitionWriter

DAY = 24 * 3600 * 1000
NOW1 = 1_600_001_000_000  # the sample's records are from 1_600_000_100_000 on
NOW2 = 1_600_173_800_000  # two days later: past the horizons the first cleaning would have set
COMMIT = {"key": b"\x00\x00\x00\x01", "value": b"\x00\x00\x00\x00\x00\x00"}
ABORT = {"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00"}


def clean(source, out, now):
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "clean", str(source), "--policy", "compact",
                          "--min-cleanable-dirty-ratio", "0", "--now", str(now), "--apply", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def batches(part):
    return {b.entry.base_offset: b.entry for _, b in partition_batches(part) if not b.is_legacy}


def open_after(part, snapshot=None):
    """The transactions left open at the log end as recovery finds them: from the snapshot at
    `snapshot` (None: from the log start, with no producer known), then every batch after it."""
    start = part.segments[0].base_offset if snapshot is None else snapshot
    state = ProducerState(end_offset=start) if snapshot is None else \
        ProducerState.from_snapshot(read_snapshot(part.snapshots[snapshot]), snapshot)
    for _, b in partition_batches(part):
        if b.last_offset >= start:
            state.follow(b)
    return {pid: p.txn_first_offset for pid, p in state.producers.items() if p.txn_first_offset is not None}


def check_cleaned(before, after):
    """What Kafka's cleaner and loader guarantee of a cleaned copy."""
    # recovery from the log start, or from any snapshot kept, leaves open what was open before
    assert open_after(after) == open_after(before)
    for offset in after.snapshots:
        assert open_after(after, offset) == open_after(before), offset
    # each snapshot kept belongs to a kept segment, or is the newest, past the last one; none is
    # at or below the log start (Kafka's loader deletes those)
    bases = [s.base_offset for s in after.segments]
    newest = max(after.snapshots, default=None)
    for offset in after.snapshots:
        assert offset > bases[0] and (offset in bases or (offset == newest and offset > bases[-1])), offset
    # a marker goes only with every batch of its transaction
    kept = batches(after)
    for t in partition_transactions(before):
        if t.end_offset is None or kept.get(t.end_offset) is not None and kept[t.end_offset].records_count:
            continue
        left = [o for o, e in kept.items() if e.producer_id == t.producer_id and not e.is_control
                and t.first_offset <= o < t.end_offset]
        assert not left, (t, left)
    # every .txnindex entry has its ABORT marker in the log: Kafka's cleaner, fed an entry whose
    # marker went, takes the transaction for open ever after (and removes later committed data)
    aborts = {(e.producer_id, o) for o, e in kept.items() if e.is_control and e.records_count
              and e.records.items[0].key[2:4] == b"\x00\x00"}
    for seg in after.segments:
        if seg.txn_index is not None:
            for entry in read_txn_index(seg.txn_index.read_bytes()):
                assert (entry.producer_id, entry.last_offset) in aborts, (seg.txn_index, entry)


def test_the_sample_cleaned_three_times_keeps_each_marker_while_its_transaction_has_batches(tmp_path):
    subprocess.run([sys.executable, "-m", "kafkacodec", "sample", "--force", str(tmp_path / "logs")], check=True,
                   capture_output=True)
    said = clean(tmp_path / "logs", tmp_path / "A", NOW1)
    clean(tmp_path / "A", tmp_path / "B", NOW2)
    clean(tmp_path / "B", tmp_path / "C", NOW2 + DAY)
    parts = [logdir.open_partition(tmp_path / d / "payments-0") for d in ("logs", "A", "B", "C")]
    for before, after in zip(parts, parts[1:]):
        check_cleaned(before, after)
    source, once, twice, thrice = (batches(p) for p in parts)
    markers = [38, 51, 55, 62]  # 2000's COMMIT and ABORT, 3000's COMMIT, 2000's ABORT (epoch 4)
    assert all(source[m].is_control for m in markers)
    # the first cleaning walks a batch of every transaction: no marker gets a horizon
    assert all(once[m].records_count == 1 and not once[m].has_delete_horizon for m in markers)
    # the second finds 2000's first two transactions empty: their markers get now + 1 day
    assert [(once[m].records_count, twice[m].has_delete_horizon, twice[m].base_timestamp) for m in (38, 51)] == \
        [(1, True, NOW2 + DAY)] * 2
    # 3000's batch at 52-54 keeps its COMMIT at 55, and 2000's last data batch (56-61, its records
    # aborted) stays as an empty header and keeps its ABORT at 62, in every cleaning
    for cleaned in (once, twice, thrice):
        assert cleaned[52].records_count == 3 and cleaned[55].records_count == 1
        assert cleaned[56].records_count == 0 and cleaned[62].records_count == 1
        assert not cleaned[55].has_delete_horizon and not cleaned[62].has_delete_horizon
    # the third, past the horizon, removes the two markers whose transactions are gone
    assert 38 not in thrice and 51 not in thrice
    # the emptied first segment went with the snapshot at the new log start (2000 open from 30)
    assert [s.base_offset for s in parts[1].segments] == [34, 63] and sorted(parts[1].snapshots) == [63, 68]
    assert "left out: producer snapshot payments-0/00000000000000000034.snapshot (at or below the new log start" \
        in said


def test_a_snapshot_holding_open_a_transaction_whose_marker_goes_is_left_out(tmp_path):
    """The snapshot at a roll inside a transaction records it open; once the cleaner removes the
    marker after it, loading that snapshot would keep the transaction open for good."""
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    ts = NOW1 - 2 * DAY
    with PartitionWriter(tmp_path / "t-0", segment_bytes=1 << 20) as w:
        w.append([{"key": b"keep", "value": b"0", "timestamp": ts}])
        w.append([{"key": b"k1", "value": b"a", "timestamp": ts}], **txn, base_sequence=0)
        w.roll()  # snapshot 2: producer 7's transaction open from 1
        w.append([dict(COMMIT, timestamp=ts)], **txn, is_control=True)
        w.append([{"key": b"k1", "value": b"b", "timestamp": ts}])
        w.append([{"key": b"k2", "value": b"x", "timestamp": ts}], **txn, base_sequence=1)
        w.append([dict(COMMIT, timestamp=ts)], **txn, is_control=True)
        w.roll()
        w.append([{"key": b"k9", "value": b"z", "timestamp": ts}])
    config = CompactionConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    parts = [logdir.open_partition(tmp_path / "t-0")]
    assert open_after(parts[0], 2) == {} and sorted(parts[0].snapshots) == [2, 6, 7]
    reports = []
    for i, now in enumerate((NOW1, NOW1 + 2 * DAY, NOW1 + 3 * DAY)):
        reports.append(compact(parts[-1], config, now, out=tmp_path / f"out{i}"))
        parts.append(logdir.open_partition(tmp_path / f"out{i}" / "t-0"))
        check_cleaned(parts[-2], parts[-1])
    marker = [batches(p).get(2) for p in parts[1:]]
    assert [(m is not None, m is not None and m.has_delete_horizon) for m in marker] == \
        [(True, False), (True, True), (False, False)]
    assert [sorted(p.snapshots) for p in parts[1:]] == [[2, 6, 7], [2, 6, 7], [6, 7]]
    assert [(p.name, "marker at 2 is removed" in why) for p, why in reports[2].snapshots_removed] == \
        [("00000000000000000002.snapshot", True)]
    assert batches(parts[-1])[5].records_count == 1  # the COMMIT of the batch that stays


def test_a_marker_of_a_newer_epoch_stays_empty_as_its_producers_last_record(tmp_path):
    """An ABORT written with a bumped epoch leaves the producer no data offset: the control
    batch of that epoch is what keeps its state, so once the marker goes it stays as a header."""
    ts = NOW1 - 2 * DAY
    with PartitionWriter(tmp_path / "t-0", segment_bytes=1) as w:
        w.append([{"key": b"k1", "value": b"a", "timestamp": ts}], producer_id=9, producer_epoch=0,
                 is_transactional=True, base_sequence=0)
        w.append([dict(ABORT, timestamp=ts)], producer_id=9, producer_epoch=1, is_transactional=True,
                 is_control=True)
        w.append([{"key": b"k9", "value": b"z", "timestamp": ts}])
    config = CompactionConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    parts = [logdir.open_partition(tmp_path / "t-0")]
    for i, now in enumerate((NOW1, NOW1 + 2 * DAY, NOW1 + 3 * DAY)):
        compact(parts[-1], config, now, out=tmp_path / f"out{i}")
        parts.append(logdir.open_partition(tmp_path / f"out{i}" / "t-0"))
        check_cleaned(parts[-2], parts[-1])
    states = [[(o, e.records_count, e.has_delete_horizon) for o, e in batches(p).items() if e.producer_id == 9]
              for p in parts[1:]]
    assert states == [[(1, 1, False)], [(1, 1, True)], [(1, 0, False)]]


def committed_values(part):
    from kafkacodec.storage.state.transactions import read_committed
    return {r.key: r.value for _, r in read_committed(part) if r.key is not None}


def test_an_aborted_transaction_whose_marker_went_ends_at_it_for_later_cleanings(tmp_path):
    """The .txnindex entry of an aborted transaction outlived its ABORT marker (gone, in the third
    cleaning, once its data was): the fourth cleaning took the transaction for open ever after,
    and removed the records of the producer's next, committed transaction as aborted ones."""
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    ts = NOW1 - 2 * DAY
    with PartitionWriter(tmp_path / "t-0", segment_bytes=1 << 20) as w:
        w.append([{"key": b"k1", "value": b"aborted", "timestamp": ts}], **txn, base_sequence=0)
        w.append([dict(ABORT, timestamp=ts)], **txn, is_control=True)
        w.append([{"key": b"k0", "value": b"keeps the segment", "timestamp": ts}])
        w.roll()
        w.append([{"key": b"k2", "value": b"committed", "timestamp": ts}], **txn, base_sequence=1)
        w.append([dict(COMMIT, timestamp=ts)], **txn, is_control=True)
        w.roll()
        w.append([{"key": b"k9", "value": b"z", "timestamp": ts}])
    config = CompactionConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    parts = [logdir.open_partition(tmp_path / "t-0")]
    expected = committed_values(parts[0])
    assert expected == {b"k0": b"keeps the segment", b"k2": b"committed", b"k9": b"z"}
    for i, now in enumerate((NOW1, NOW1 + 2 * DAY, NOW1 + 4 * DAY, NOW1 + 6 * DAY)):
        compact(parts[-1], config, now, out=tmp_path / f"out{i}")
        parts.append(logdir.open_partition(tmp_path / f"out{i}" / "t-0"))
        check_cleaned(parts[-2], parts[-1])
        assert committed_values(parts[-1]) == expected, i
    assert 1 not in batches(parts[3])  # the ABORT went in the third cleaning
