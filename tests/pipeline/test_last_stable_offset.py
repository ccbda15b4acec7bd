"""read_committed stops at the last stable offset (LSO), as Kafka's read_committed consumers do:
nothing at or past the first offset of the earliest transaction still open at the log end, found
from the producer state there (the newest snapshot, then the batches after it). In the kafka-log
reader (full rows and batch headers alone, offset ranges, a segment loaded alone) and in the
library's read-committed view and latest values."""
import logging
from dataclasses import replace

import pytest

from kafkacodec.pipeline.headers import HEADER_COLUMNS
from kafkacodec.pipeline.plan import parse_options
from kafkacodec.pipeline.source import KafkaLogReader
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.state.latest import latest_values
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.samples.broker import _marker
from kafkacodec.storage.state.transactions import partition_transactions, read_committed
from kafkacodec.storage.change.writer import PartitionWriter

NARROW = ("topic", "partition", "offset", "isControl", "producerId")
ABORT, COMMIT = 0, 1


def reader_offsets(path, caplog, narrow=False, **options):
    """Offsets a read_committed kafka-log read gives, and the planner's warnings."""
    plan = parse_options({"path": str(path), "isolationLevel": "read_committed", **options})
    if narrow:  # a schema of batch-header columns only: the header-only path
        assert HEADER_COLUMNS.issuperset(NARROW)
        plan = replace(plan, options=replace(plan.options, columns=NARROW))
    reader = KafkaLogReader(plan)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkacodec.pipeline"):
        work = reader.partitions()
    rows = [r for p in work for b in reader.read(p) for r in b.to_pylist()]
    return sorted(r["offset"] for r in rows), [r.getMessage() for r in caplog.records]


def committed_below(part, stable):
    """The data records of `part` before `stable` outside its aborted transactions, from the
    library's transactions (a replay of every batch, no snapshot)."""
    aborted = [(t.producer_id, t.first_offset, t.end_offset) for t in partition_transactions(part)
               if t.outcome == "ABORT"]
    return sorted(r.offset for b, r in partition_records(part) if r.offset < stable and (b.is_legacy or (
        not b.entry.is_control and not any(pid == b.entry.producer_id and first <= r.offset <= end
                                           for pid, first, end in aborted))))


def first_open(part):
    return min(t.first_offset for t in partition_transactions(part) if t.outcome == "OPEN")


def said(*partitions):
    return ("kafka-log: isolationLevel=read_committed reads nothing at or past a partition's last stable offset, "
            "the first offset of its earliest transaction with no COMMIT or ABORT marker yet, as Kafka's "
            "read_committed consumers do: " + "; ".join(partitions))


@pytest.mark.parametrize("narrow", [False, True], ids=["full", "batch_headers"])
def test_the_samples_open_transaction_ends_a_read_committed_read_at_63(sample, caplog, narrow):
    """payments-0's producer 3000 opens a transaction at 63 that no marker ends: offsets 63 to 67
    (its records and the idempotent producer's after them) are past the last stable offset."""
    part = logdir.open_partition(sample / "payments-0")
    assert first_open(part) == 63 and max(r.offset for _, r in partition_records(part)) == 67
    want = committed_below(part, 63)
    stop = "payments-0 stops at 63, short of {} (open transaction: producer 3000's from offset 63)"
    assert reader_offsets(sample, caplog, narrow, subscribe="payments") == (want, [said(stop.format("its log end 68"))])
    # an ending offset past the last stable offset is cut to it; one before it is kept, and nothing is said
    asked = '{"payments": {"0": 66}}'
    assert reader_offsets(sample, caplog, narrow, subscribe="payments", endingOffsets=asked) == \
        (want, [said(stop.format("the end asked for, 66"))])
    asked = '{"payments": {"0": 50}}'
    assert reader_offsets(sample, caplog, narrow, subscribe="payments", endingOffsets=asked) == \
        ([o for o in want if o < 50], [])
    assert reader_offsets(sample, caplog, narrow, subscribe="payments", startingOffsets='{"payments": {"0": 63}}') \
        == ([], [said(stop.format("its log end 68"))])
    # the library's read-committed view, and the latest value of each key a compacted topic's consumer keeps
    assert [r.offset for _, r in read_committed(part)] == want
    assert max(v.offset for v in latest_values(part).values()) < 63 <= \
        max(v.offset for v in latest_values(part, read_committed=False).values())


def test_a_segment_loaded_alone_is_cut_at_its_partitions_last_stable_offset(sample, caplog):
    """The segment at 63 holds only what is past the LSO; the segment at 0 ends before producer
    2000's transaction from 30 commits in the next segment, which a state taken at its own end
    would take for open: it reads whole."""
    part = logdir.open_partition(sample / "payments-0")
    last, first = part.segments[-1].log, part.segments[0].log
    assert part.segments[-1].base_offset == 63
    offsets, warned = reader_offsets(last, caplog)
    assert offsets == [] and len(warned) == 1 and "payments-0 stops at 63" in warned[0]
    next_base = part.segments[1].base_offset
    assert reader_offsets(first, caplog) == ([o for o in committed_below(part, 63) if o < next_base], [])


def write_open_in_the_middle(path):
    """Producer 10's transaction opens at 5 and never ends; producer 20 commits and aborts after it,
    producer 30 commits in the next segment, where producer 40 opens one more. Segments at 0 and
    12, snapshots at 12 and at the end."""
    with PartitionWriter(path) as w:
        def data(pid, n, txn=True):
            w.append([{"key": b"k%d" % (w.next_offset + i), "value": b"v"} for i in range(n)], producer_id=pid,
                     producer_epoch=0, base_sequence=0, is_transactional=txn)

        def end(pid, kind):
            w.append(_marker(kind, 0), producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)

        data(1, 5, txn=False)  # 0-4
        data(10, 3)  # 5-7: open ever after
        data(20, 3)  # 8-10
        end(20, COMMIT)  # 11
        w.roll()
        data(30, 3)  # 12-14
        end(30, COMMIT)  # 15
        data(20, 2)  # 16-17
        end(20, ABORT)  # 18
        data(40, 2)  # 19-20: open too
        data(1, 4, txn=False)  # 21-24


@pytest.mark.parametrize("snapshots", ["kept", "last_removed", "none", "last_damaged"])
def test_the_earliest_open_transaction_bounds_the_read_past_later_committed_ones(tmp_path, caplog, snapshots):
    """The LSO is the earliest open transaction's first offset (5), not the last marker's or the log
    end, whichever snapshot the state starts from: the one at the end, the one at 12 and a replay of
    the segment after it (which finds producer 40's), none (a replay from the log start), or the
    last damaged (passed over for the older one, and said)."""
    path = tmp_path / "ledger-0"
    write_open_in_the_middle(path)
    last = path / "00000000000000000025.snapshot"
    assert sorted(p.name for p in path.glob("*.snapshot")) == ["00000000000000000012.snapshot", last.name]
    if snapshots == "last_removed":
        last.unlink()
    elif snapshots == "none":
        for p in path.glob("*.snapshot"):
            p.unlink()
    elif snapshots == "last_damaged":
        last.write_bytes(last.read_bytes()[:-3])
    part = logdir.open_partition(path)
    assert first_open(part) == 5
    want = committed_below(part, 5)
    assert want == [0, 1, 2, 3, 4]
    offsets, warned = reader_offsets(path, caplog)
    assert offsets == want
    assert warned[0] == said("ledger-0 stops at 5, short of its log end 25 (open transactions: producer 10's from "
                             "offset 5 and producer 40's from offset 19)")
    if snapshots == "last_damaged":
        assert len(warned) == 2 and warned[1].startswith(
            "kafka-log: damaged producer snapshots passed over for older ones (the last stable offset is found from "
            f"those and the batches after them): {last} (")
    else:
        assert len(warned) == 1
    assert [r.offset for _, r in read_committed(part)] == want


def test_a_copy_written_without_markers_reads_committed_up_to_its_first_transaction(sample, tmp_path, caplog):
    """The sample's payments-0 rewritten without its control batches (as a read without
    includeControlRecords written back is): every transaction is open in the copy, so a
    read_committed read stops at the first, producer 2000's at 30."""
    part = logdir.open_partition(sample / "payments-0")
    copy = tmp_path / "payments-0"
    with PartitionWriter(copy) as w:
        for b, r in partition_records(part):
            if b.is_legacy or b.entry.is_control:
                continue
            e = b.entry
            w.append([{"key": r.key, "value": r.value, "timestamp": r.timestamp, "offset": r.offset}],
                     producer_id=e.producer_id, producer_epoch=e.producer_epoch,
                     base_sequence=-1 if e.base_sequence < 0 else e.base_sequence + r.offset - e.base_offset,
                     is_transactional=e.is_transactional)
    written = logdir.open_partition(copy)
    assert first_open(written) == 30
    want = committed_below(written, 30)
    assert want == list(range(30))
    offsets, warned = reader_offsets(copy, caplog)
    assert offsets == want and len(warned) == 1 and "payments-0 stops at 30, short of its log end 68" in warned[0]
    assert [r.offset for _, r in read_committed(written)] == want
