"""Compaction (cleanup.policy=compact) as Kafka's LogCleaner would run it now, offline, on v2
batches: what a cleaning would remove, and the cleaned partition written elsewhere.

Rules implemented (LogCleaner, LogCleanerManager, MemoryRecords.filterTo; KIP-534 delete horizons),
for v2 batches and v0/v1 entries alike unless said:
- Cleanable: the segments below the first uncleanable offset, the least of the last (active)
  segment's base offset, the base offset of the first segment holding a timestamp newer than
  now - min.compaction.lag.ms, and the first offset of a transaction still open. Batches from it
  on are kept as they are.
- Due: the dirty part (from the log dir's cleaner-offset-checkpoint, else the log start) is at
  least min.cleanable.dirty.ratio of the cleanable bytes, or its first batch is older than
  max.compaction.lag.ms. A cleaning that is not due changes nothing.
- The latest offset of every key in the dirty part (control batches and aborted transactions
  aside) decides: a record is kept when no later record of its key is in the dirty part. Records
  without a key are removed, as are the records of aborted transactions.
- Tombstones stay until their batch's delete horizon has passed; a batch that keeps one and has
  no horizon yet gets one, now + delete.retention.ms, stored in its base timestamp with the
  delete-horizon attribute bit (timestamps are rebased onto it). v0/v1 tombstones stay in
  segments modified after the last clean segment's modification time less delete.retention.ms
  (all of them when nothing was cleaned before), as the cleaner decides.
- Transactions are followed through the cleaned segments as CleanedTransactionMetadata follows
  them (storage.change.cleaned_txns): a marker whose transaction still had a batch in them (kept or
  not) stays as it is; only a marker whose transaction had none gets a delete horizon, and it
  goes in a later cleaning once that horizon has passed, so a marker never goes while a batch of
  its transaction is in the log.
- A compressed v0/v1 wrapper that loses some messages is written again around the rest (same
  codec and magic, the wrapper's offset the last one's).
- A rebuilt batch keeps its base offset, last offset delta, producer id, epoch, base sequence,
  leader epoch and codec; a batch left empty is removed, unless it holds its producer's last
  record: the batch with the producer's last data offset, or, when a newer epoch has left it
  none, a control batch of that epoch. That one stays as a header without records (no codec, no
  base timestamp) so that the producer's state survives.
- A segment left empty is dropped (the active one stays); indexes are rebuilt. A cleaned
  segment's .txnindex holds the entries of the ABORT markers it keeps, as the cleaner writes
  them (an entry whose marker went would make Kafka's cleaner take the transaction for open ever
  after); a segment not cleaned keeps its own.
- Producer snapshots stay unless they no longer agree with the segments kept: a dropped
  segment's snapshot goes with it (as Kafka deletes the snapshots of segments that a cleaning
  removes without replacing them), those at or below a log start the cleaning moved go (Kafka's
  loader deletes them), and so does one that holds a transaction open whose marker this
  cleaning removed (loaded, it would keep the transaction open for good).
- The cleaning's end (`cleaned_to`): where the next cleaning's dirty part begins, the first
  offset of the first segment not cleaned. Kafka's cleaner writes the first uncleanable offset to
  the log dir's cleaner-offset-checkpoint; segments are cleaned whole here, so one that holds the
  first uncleanable offset (a transaction still open) is dirty still. The clean command writes it.
Not implemented: the cleaner's grouping of small segments into one.
"""
from __future__ import annotations

from bisect import bisect_left
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.codec.records import Record, write_batch
from kafkacodec.runtime.errors import DecodeError

from .cleaned_txns import CleanedTransactions
from kafkacodec.codec.attribute_bits import COMPRESSION as CODEC_BITS, DELETE_HORIZON, LOG_APPEND_TIME

from ..segments.guarded import SkippedBytes, partition_batches, read_segment, segment_batches
from ..layout.logdir import Partition, Segment
from ..state.producers import ProducerState, read_snapshot
from .retention import largest_timestamp
from ..diskio.safeio import FileProblem, read_bounded
from .staging import PartitionCopy, segment_files
from ..layout.textfiles import read_offset_checkpoint
from ..indexes.txnindex import AbortedTxn, read_txn_index

LONG_MAX = 2 ** 63 - 1
MAX_TXN_INDEX_BYTES = 1 << 30  # 34-byte entries, one per aborted transaction of a segment


@dataclass(frozen=True)
class CompactionConfig:
    delete_retention_ms: int = 24 * 3600 * 1000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5


@dataclass
class CompactionReport:
    first_uncleanable: int
    first_dirty: int
    dirty_ratio: float
    due: bool
    records_removed: int = 0
    tombstones_removed: int = 0
    markers_removed: int = 0
    batches_removed: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    segments: dict = field(default_factory=dict)  # base offset -> cleaned size (None: dropped)
    skipped: list = field(default_factory=list)  # SkippedBytes passed over (with skip_corrupt)
    kept_files: list = field(default_factory=list)  # in the copy, where each of them is kept, in order
    snapshots_removed: list = field(default_factory=list)  # (producer snapshot, why) left out of the copy
    cleaned_to: int | None = None  # for the cleaner-offset-checkpoint, when the cleaning was due


@dataclass
class _LogTransactions:
    """What pass 1 learns of the producers from the whole log."""
    aborted: list  # (producer id, first offset, marker offset), by marker offset
    aborted_entries: dict  # (producer id, marker offset) -> its AbortedTxn, the .txnindex's first
    open_firsts: list[int]  # first offsets of the transactions still open
    last_records: dict[int, tuple[int | None, int]]  # producer id -> (last data offset or None, epoch)
    markers: dict[int, list[int]]  # producer id -> offsets of its transaction markers, rising


@dataclass
class _Cleaning:
    """What pass 3 decides each batch with, and the markers it removes."""
    latest: dict
    txns: CleanedTransactions
    last_records: dict
    config: CompactionConfig
    now_ms: int
    report: CompactionReport
    aborted_entries: dict
    removed_markers: set = field(default_factory=set)  # (producer id, offset)
    txn_entries: list = field(default_factory=list)  # of the segment being cleaned, for its .txnindex


def compact(part: Partition, config: CompactionConfig, now_ms: int, checkpoint: Path | None = None,
            out: Path | None = None, skip_corrupt: bool = False) -> CompactionReport:
    """What cleaning the partition now would do; with `out`, the cleaned partition is written to
    out/<partition directory> (through a temporary directory: a failure leaves nothing). Damage
    raises a DecodeError naming the file and byte, unless `skip_corrupt`: then the damaged bytes
    are left out of the cleaned segments, listed in the report and kept in the copy, each in a
    file of its own (`<segment>.log.corrupt-<position>`). Three passes over the log (producers,
    the offset map, the cleaned segments); one segment, and its cleaned bytes, in memory at a time."""
    skipped: list[SkippedBytes] = []
    log_txns = _producers(part, skip_corrupt, skipped.append)
    aborted = log_txns.aborted
    first_uncleanable = _first_uncleanable(part, config, now_ms, log_txns.open_firsts)
    first_dirty = _first_dirty(part, checkpoint)
    sizes = {s.base_offset: s.log.stat().st_size for s in part.segments}
    cleanable = {s.base_offset for s in _below(part, first_uncleanable)}
    total = sum(sizes[b] for b in cleanable)
    dirty = sum(sizes[b] for b in cleanable if b >= first_dirty)
    latest: dict[bytes, int] = {}
    first_dirty_ts = None
    for seg, b in partition_batches(part, skip_corrupt):  # pass 2: the offset map
        if b.is_legacy:
            if first_dirty <= b.base_offset and b.last_offset < first_uncleanable:
                records = b.records()
                first_dirty_ts = max(r.timestamp for r in records) if first_dirty_ts is None else first_dirty_ts
                latest.update((r.key, r.offset) for r in records if r.key is not None)
            continue
        e = b.entry
        if first_dirty <= e.base_offset and e.last_offset < first_uncleanable and not e.is_control \
                and not _is_aborted(e, aborted):
            first_dirty_ts = e.max_timestamp if first_dirty_ts is None else first_dirty_ts
            for r in e.records.items:
                if r.key is not None:
                    latest[r.key] = r.offset
    ratio = dirty / total if total else 0.0
    due = bool(cleanable) and (ratio >= config.min_cleanable_dirty_ratio or (
        first_dirty_ts is not None and now_ms - first_dirty_ts > config.max_compaction_lag_ms))
    report = CompactionReport(first_uncleanable, first_dirty, ratio, due, bytes_before=sum(sizes.values()),
                              skipped=skipped)
    if due:  # cleanable segments are the first ones: the first segment not among them is where dirt begins
        report.cleaned_to = next(s.base_offset for s in part.segments if s.base_offset not in cleanable)
    legacy_horizon = _legacy_horizon(part, first_dirty, config)
    cleaning = _Cleaning(latest, CleanedTransactions(aborted), log_txns.last_records, config, now_ms, report,
                         log_txns.aborted_entries)
    # segments are written as they are cleaned, snapshots once it is known which agree with them
    leave_out = {p for seg in part.segments for p in segment_files(seg)} | set(part.snapshots.values())
    with (PartitionCopy(part, out, leave_out) if out is not None else nullcontext()) as copy:
        last = part.segments[-1] if part.segments else None
        for seg in part.segments:  # pass 3: the cleaned segments
            raw_log = read_segment(seg.log)
            data = bytearray()
            deletes_stay = _legacy_deletes_stay(seg, legacy_horizon)
            cleaned = due and seg.base_offset in cleanable
            cleaning.txn_entries = []
            for b in segment_batches(seg, raw_log, skip_corrupt):
                if isinstance(b, SkippedBytes):
                    if copy is not None:
                        kept = copy.keep(f"{seg.log.name}.corrupt-{b.start}", raw_log[b.start:b.end])
                        report.kept_files.append(copy.target / kept.name)
                    continue
                e = b.entry
                raw = raw_log[b.position:b.position + b.size]
                if not cleaned or b.last_offset >= first_uncleanable:
                    data += raw
                    continue
                if b.is_legacy:
                    kept = _clean_legacy(b, latest, deletes_stay, report)
                else:
                    kept = _clean_batch(e, cleaning)
                if kept is None:
                    report.batches_removed += 1
                else:
                    data += raw if kept is True else kept
            txn_entries = cleaning.txn_entries if cleaned else None
            report.segments[seg.base_offset] = _finish(copy, seg, data, seg is last, txn_entries)
        snapshots = _snapshots_kept(part, log_txns, cleaning)
        if copy is not None:
            for path in snapshots:
                copy.copy(path)
    report.bytes_after = sum(n for n in report.segments.values() if n is not None)
    return report


def _producers(part: Partition, skip_corrupt: bool, on_skip) -> _LogTransactions:
    """Pass 1: the aborted transactions ((producer id, first offset, marker offset), from the
    .txnindex files and from the markers), the first offsets of the transactions still open, each
    producer's last record as Kafka's lastRecordsOfActiveProducers gives it, and where each
    producer's markers are."""
    found = set()
    entries_by_marker: dict[tuple[int, int], AbortedTxn] = {}
    for seg in part.segments:
        if seg.txn_index is not None:
            try:
                entries = read_txn_index(read_bounded(seg.txn_index, MAX_TXN_INDEX_BYTES, "transaction index"))
            except DecodeError as err:
                raise err.with_context(file=str(seg.txn_index)) from None
            for t in entries:
                found.add((t.producer_id, t.first_offset, t.last_offset))
                entries_by_marker.setdefault((t.producer_id, t.last_offset), t)
    state = ProducerState()
    markers: dict[int, list[int]] = {}
    for _, b in partition_batches(part, skip_corrupt, on_skip):
        try:
            t = state.follow(b)
        except DecodeError:
            continue  # a malformed marker ends no transaction; the batch itself stays as it is
        e = b.entry
        if not b.is_legacy and e.is_control and e.producer_id >= 0 and e.records.items:
            markers.setdefault(e.producer_id, []).append(e.base_offset)
        if t is not None and t.aborted:
            found.add((t.producer_id, t.first_offset, t.last_offset))
            entries_by_marker.setdefault((t.producer_id, t.last_offset), t.index_entry)
    open_firsts = [p.txn_first_offset for p in state.producers.values() if p.txn_first_offset is not None]
    last_records = {pid: (p.last_offset if p.last_offset >= 0 else None, p.epoch)
                    for pid, p in state.producers.items()}
    return _LogTransactions(sorted(found, key=lambda t: t[2]), entries_by_marker, open_firsts, last_records, markers)


def _finish(copy: PartitionCopy | None, seg: Segment, data: bytes, active: bool,
            txn_entries: list[AbortedTxn] | None) -> int | None:
    """A cleaned segment written when there is a copy to write, with the .txnindex entries of the
    ABORT markers it kept (None: not cleaned, its own .txnindex as it is); a segment left empty
    is dropped unless active. Its size, or None when dropped."""
    if not data and not active:
        return None
    if copy is not None:
        copy.segment(seg.base_offset, bytes(data))
        if txn_entries is None and seg.txn_index is not None:
            copy.copy(seg.txn_index)
        elif txn_entries:
            copy.txn_index(seg.base_offset, txn_entries)
    return len(data)


def _legacy_horizon(part: Partition, first_dirty: int, config: CompactionConfig) -> int:
    """v0/v1 entries have no horizon of their own: tombstones stay in segments modified after the
    last clean segment's modification time less delete.retention.ms (0 when nothing is clean)."""
    clean = _below(part, first_dirty)
    return int(clean[-1].log.stat().st_mtime * 1000) - config.delete_retention_ms if clean else 0


def _legacy_deletes_stay(seg: Segment, horizon: int) -> bool:
    return int(seg.log.stat().st_mtime * 1000) > horizon


def _clean_legacy(b, latest: dict, deletes_stay: bool, report: CompactionReport):
    """A v0/v1 entry: True to keep it as it is, None to remove it, or a compressed wrapper rebuilt
    around the messages that stay (same codec and magic, their offsets and timestamps)."""
    records = b.records()
    kept = [r for r in records if r.key is not None and latest.get(r.key, -1) <= r.offset]
    if not deletes_stay:
        report.tombstones_removed += sum(1 for r in kept if r.value is None)
        kept = [r for r in kept if r.value is not None]
    report.records_removed += len(records) - len(kept)
    if len(kept) == len(records):
        return True
    if not kept:
        return None
    m = b.entry.message
    append_time = m.magic == 1 and bool(m.attributes & LOG_APPEND_TIME)
    return write_batch([Record(key=r.key, value=r.value, timestamp=r.timestamp, offset=r.offset) for r in kept],
                       magic=m.magic, compression=b.compression,
                       timestamp_type="LogAppendTime" if append_time else "CreateTime",
                       log_append_time=m.timestamp if append_time else None)


def _is_aborted(e: RecordBatch, aborted) -> bool:
    return e.is_transactional and any(pid == e.producer_id and first <= e.base_offset <= end
                                      for pid, first, end in aborted)


def _holds_producers_last(e: RecordBatch, last_records: dict) -> bool:
    """Whether the batch keeps its producer's state: it ends at the producer's last data offset,
    or the producer has none (a newer epoch came with a marker) and it is a control batch of the
    producer's epoch (Cleaner's isBatchLastRecordOfProducer)."""
    last = last_records.get(e.producer_id) if e.producer_id >= 0 else None
    if last is None:
        return False
    data_offset, epoch = last
    if data_offset is not None:
        return e.last_offset == data_offset
    return e.is_control and e.producer_epoch == epoch


def _clean_batch(e: RecordBatch, c: _Cleaning):
    """True to keep the batch as it is, None to remove it, or the bytes of its rebuilt form."""
    horizon = e.base_timestamp if e.has_delete_horizon else None
    past_horizon = horizon is not None and c.now_ms >= horizon
    keeps_state = _holds_producers_last(e, c.last_records)
    records = e.records.items
    if e.is_control:
        txn_gone = c.txns.marker_batch(e)
        if not records or (txn_gone and past_horizon):
            if records:
                c.report.markers_removed += len(records)
                c.removed_markers.add((e.producer_id, e.base_offset))
            return _empty(e) if keeps_state else None
        entry = c.aborted_entries.get((e.producer_id, e.base_offset))
        if entry is not None:  # an ABORT marker kept: its entry too
            c.txn_entries.append(entry)
        if txn_gone and horizon is None:
            return _rebuild(e, records, _horizon(c.now_ms, c.config))
        return True
    if c.txns.data_batch(e):  # of an aborted transaction
        kept = []
    else:
        kept = [r for r in records if r.key is not None and c.latest.get(r.key, -1) <= r.offset]
        if past_horizon:
            c.report.tombstones_removed += sum(1 for r in kept if r.value is None)
            kept = [r for r in kept if r.value is not None]
    c.report.records_removed += len(records) - len(kept)
    if not kept:
        return _empty(e) if keeps_state else None
    new_horizon = horizon
    if horizon is None and any(r.value is None for r in kept):
        new_horizon = _horizon(c.now_ms, c.config)
    if len(kept) == len(records) and new_horizon == horizon:
        return True
    return _rebuild(e, kept, new_horizon)


def _snapshots_kept(part: Partition, log_txns: _LogTransactions, c: _Cleaning) -> list:
    """The producer snapshots that still agree with the segments kept; those that do not are
    listed in the report with why."""
    sizes = c.report.segments
    kept_bases = [base for base, size in sizes.items() if size is not None]
    start = min(kept_bases, default=None)
    moved = start is not None and bool(part.segments) and start > part.segments[0].base_offset
    kept = []
    for offset, path in sorted(part.snapshots.items()):
        if sizes.get(offset, 0) is None:
            why = "its segment was left empty and dropped"
        elif moved and offset <= start:
            why = f"at or below the new log start offset {start}, Kafka's loader deletes it"
        else:
            why = _stale(offset, path, log_txns, c.removed_markers)
        if why is None:
            kept.append(path)
        else:
            c.report.snapshots_removed.append((path, why))
    return kept


def _stale(offset: int, path, log_txns: _LogTransactions, removed_markers: set) -> str | None:
    """Why a snapshot would hold a transaction open for good: the marker that ends it after the
    snapshot was removed. A snapshot that does not read stays as it is (verify reports it)."""
    if not removed_markers:
        return None
    try:
        state = ProducerState.from_snapshot(read_snapshot(path), offset)
    except (DecodeError, FileProblem):
        return None
    for pid, p in sorted(state.producers.items()):
        if p.txn_first_offset is None:
            continue
        offsets = log_txns.markers.get(pid, [])
        i = bisect_left(offsets, offset)
        if i < len(offsets) and (pid, offsets[i]) in removed_markers:
            return (f"holds producer {pid}'s transaction open from offset {p.txn_first_offset}, and its marker "
                    f"at {offsets[i]} is removed")
    return None


def _horizon(now_ms: int, config: CompactionConfig) -> int:
    """now + delete.retention.ms, held at the largest timestamp a batch can store (a retention
    that large keeps tombstones and markers for ever)."""
    return min(now_ms + config.delete_retention_ms, LONG_MAX)


def _rebuild(e: RecordBatch, kept: list, horizon: int | None) -> bytes:
    """The batch with only `kept` records: base offset, last offset delta and producer fields as
    they were; timestamps rebased onto the delete horizon when there is one."""
    stamps = [e.base_timestamp + r.timestamp_delta for r in kept]  # the stored ones, horizon or not
    base_ts = horizon if horizon is not None else stamps[0]
    attributes = e.attributes | (DELETE_HORIZON if horizon is not None else 0)
    max_ts = e.max_timestamp if e.attributes & LOG_APPEND_TIME else max(stamps)
    items = [RecordBatch.Record(attributes=r.attributes, timestamp_delta=ts - base_ts, offset_delta=r.offset_delta,
                                key=r.key, value=r.value, headers=[RecordBatch.Header(key=h.key, value=h.value)
                                                                   for h in r.headers])
             for r, ts in zip(kept, stamps)]
    return RecordBatch(base_offset=e.base_offset, partition_leader_epoch=e.partition_leader_epoch,
                       attributes=attributes, last_offset_delta=e.last_offset_delta, base_timestamp=base_ts,
                       max_timestamp=max_ts, producer_id=e.producer_id, producer_epoch=e.producer_epoch,
                       base_sequence=e.base_sequence, records=RecordBatch.Records(items=items)).to_bytes()


def _empty(e: RecordBatch) -> bytes:
    """A producer's last batch with no records left: its header alone keeps the producer's state,
    written as Kafka writes an empty batch (no codec, no base timestamp, the maximum kept)."""
    return RecordBatch(base_offset=e.base_offset, partition_leader_epoch=e.partition_leader_epoch,
                       attributes=e.attributes & ~(DELETE_HORIZON | CODEC_BITS),
                       last_offset_delta=e.last_offset_delta, base_timestamp=-1, max_timestamp=e.max_timestamp,
                       producer_id=e.producer_id, producer_epoch=e.producer_epoch, base_sequence=e.base_sequence,
                       records=RecordBatch.Records(items=[])).to_bytes()


def _first_uncleanable(part: Partition, config: CompactionConfig, now_ms: int, open_firsts: list[int]) -> int:
    if not part.segments:
        return 0
    bounds = [part.segments[-1].base_offset]
    for seg in part.segments:
        if now_ms - largest_timestamp(seg) < config.min_compaction_lag_ms:
            bounds.append(seg.base_offset)
            break
    return min(bounds + open_firsts)


def _below(part: Partition, offset: int) -> list[Segment]:
    """The segments wholly below `offset`: those whose next segment starts at or before it (the
    last segment, whose end is the log end, never)."""
    return [s for s, nxt in zip(part.segments, part.segments[1:]) if nxt.base_offset <= offset]


def _first_dirty(part: Partition, checkpoint: Path | None) -> int:
    start = part.segments[0].base_offset if part.segments else 0
    if checkpoint is not None and checkpoint.exists():
        return max(start, read_offset_checkpoint(checkpoint).get((part.topic, part.partition), start))
    return start
