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
- Tombstones and transaction markers stay until their batch's delete horizon has passed; a batch
  that keeps one and has no horizon yet gets one, now + delete.retention.ms, stored in its base
  timestamp with the delete-horizon attribute bit (timestamps are rebased onto it). v0/v1
  tombstones stay in segments modified after the last clean segment's modification time less
  delete.retention.ms (all of them when nothing was cleaned before), as the cleaner decides.
- A compressed v0/v1 wrapper that loses some messages is written again around the rest (same
  codec and magic, the wrapper's offset the last one's).
- A rebuilt batch keeps its base offset, last offset delta, producer id, epoch, base sequence,
  leader epoch and codec; a batch left empty is removed, unless it is its producer's last batch
  in the log, which stays (with no records) so that the producer's state survives.
- A segment left empty is dropped (the active one stays); indexes are rebuilt, .txnindex files
  and producer snapshots are kept.
Not implemented: the cleaner's grouping of small segments into one, the checkpoint's update, and
the removal of a marker only once its transaction's data is gone (here a marker goes when its
horizon has passed, as a tombstone does).
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.records import Record, write_batch
from kafkacodec.runtime.errors import DecodeError

from .guarded import SkippedBytes, partition_batches, read_segment, segment_batches
from .logdir import Partition, Segment
from .producers import ProducerState
from .retention import largest_timestamp
from .safeio import read_bounded
from .staging import PartitionCopy, segment_files
from .textfiles import read_offset_checkpoint
from .txnindex import read_txn_index

DELETE_HORIZON = 0x40
LOG_APPEND_TIME = 0x08
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


def compact(part: Partition, config: CompactionConfig, now_ms: int, checkpoint: Path | None = None,
            out: Path | None = None, skip_corrupt: bool = False) -> CompactionReport:
    """What cleaning the partition now would do; with `out`, the cleaned partition is written to
    out/<partition directory> (through a temporary directory: a failure leaves nothing). Damage
    raises a DecodeError naming the file and byte, unless `skip_corrupt`: then the damaged bytes
    are left out of the cleaned segments, listed in the report and kept in the copy, each in a
    file of its own (`<segment>.log.corrupt-<position>`). Three passes over the log (producers,
    the offset map, the cleaned segments); one segment, and its cleaned bytes, in memory at a time."""
    skipped: list[SkippedBytes] = []
    aborted, open_firsts, last_of_producer = _producers(part, skip_corrupt, skipped.append)
    first_uncleanable = _first_uncleanable(part, config, now_ms, open_firsts)
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
    legacy_horizon = _legacy_horizon(part, first_dirty, config)
    all_segment_files = {p for seg in part.segments for p in segment_files(seg)}
    with (PartitionCopy(part, out, all_segment_files) if out is not None else nullcontext()) as copy:
        last = part.segments[-1] if part.segments else None
        for seg in part.segments:  # pass 3: the cleaned segments
            raw_log = read_segment(seg.log)
            data = bytearray()
            deletes_stay = _legacy_deletes_stay(seg, legacy_horizon)
            for b in segment_batches(seg, raw_log, skip_corrupt):
                if isinstance(b, SkippedBytes):
                    if copy is not None:
                        kept = copy.keep(f"{seg.log.name}.corrupt-{b.start}", raw_log[b.start:b.end])
                        report.kept_files.append(copy.target / kept.name)
                    continue
                e = b.entry
                raw = raw_log[b.position:b.position + b.size]
                if not due or b.last_offset >= first_uncleanable or seg.base_offset not in cleanable:
                    data += raw
                    continue
                if b.is_legacy:
                    kept = _clean_legacy(b, latest, deletes_stay, report)
                else:
                    kept = _clean_batch(e, latest, aborted, config, now_ms, report,
                                        last_of_producer.get(e.producer_id) == e.base_offset)
                if kept is None:
                    report.batches_removed += 1
                else:
                    data += raw if kept is True else kept
            report.segments[seg.base_offset] = _finish(copy, seg, data, seg is last)
    report.bytes_after = sum(n for n in report.segments.values() if n is not None)
    return report


def _producers(part: Partition, skip_corrupt: bool, on_skip) -> tuple[list, list[int], dict[int, int]]:
    """Pass 1: the aborted transactions ((producer id, first offset, marker offset), from the
    .txnindex files and from the markers), the first offsets of the transactions still open, and
    the base offset of each producer's last batch in the log."""
    found = set()
    for seg in part.segments:
        if seg.txn_index is not None:
            try:
                entries = read_txn_index(read_bounded(seg.txn_index, MAX_TXN_INDEX_BYTES, "transaction index"))
            except DecodeError as err:
                raise err.with_context(file=str(seg.txn_index)) from None
            found |= {(t.producer_id, t.first_offset, t.last_offset) for t in entries}
    state = ProducerState()
    last_of_producer: dict[int, int] = {}
    for _, b in partition_batches(part, skip_corrupt, on_skip):
        if not b.is_legacy and b.entry.producer_id >= 0:
            last_of_producer[b.entry.producer_id] = b.entry.base_offset
        try:
            t = state.follow(b)
        except DecodeError:
            continue  # a malformed marker ends no transaction; the batch itself stays as it is
        if t is not None and t.aborted:
            found.add((t.producer_id, t.first_offset, t.last_offset))
    open_firsts = [p.txn_first_offset for p in state.producers.values() if p.txn_first_offset is not None]
    return sorted(found, key=lambda t: t[2]), open_firsts, last_of_producer


def _finish(copy: PartitionCopy | None, seg: Segment, data: bytes, active: bool) -> int | None:
    """A cleaned segment written (with its .txnindex kept) when there is a copy to write; a segment
    left empty is dropped unless active. Its size, or None when dropped."""
    if not data and not active:
        return None
    if copy is not None:
        copy.segment(seg.base_offset, bytes(data))
        if seg.txn_index is not None:
            copy.copy(seg.txn_index)
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
    append_time = m.magic == 1 and (m.attributes >> 3) & 1
    return write_batch([Record(key=r.key, value=r.value, timestamp=r.timestamp, offset=r.offset) for r in kept],
                       magic=m.magic, compression=b.compression,
                       timestamp_type="LogAppendTime" if append_time else "CreateTime",
                       log_append_time=m.timestamp if append_time else None)


def _is_aborted(e: RecordBatch, aborted) -> bool:
    return e.is_transactional and any(pid == e.producer_id and first <= e.base_offset <= end
                                      for pid, first, end in aborted)


def _clean_batch(e: RecordBatch, latest: dict, aborted, config: CompactionConfig, now_ms: int,
                 report: CompactionReport, producers_last: bool):
    """True to keep the batch as it is, None to remove it, or the bytes of its rebuilt form."""
    horizon = e.base_timestamp if e.has_delete_horizon else None
    records = e.records.items
    if e.is_control:
        if horizon is not None and now_ms >= horizon:
            report.markers_removed += len(records)
            return _empty(e) if producers_last else None
        return True if horizon is not None else _rebuild(e, records, _horizon(now_ms, config))
    if _is_aborted(e, aborted):
        kept = []
    else:
        kept = [r for r in records if r.key is not None and latest.get(r.key, -1) <= r.offset]
        if horizon is not None and now_ms >= horizon:
            report.tombstones_removed += sum(1 for r in kept if r.value is None)
            kept = [r for r in kept if r.value is not None]
    report.records_removed += len(records) - len(kept)
    if not kept:
        return _empty(e) if producers_last and e.producer_id >= 0 else None
    new_horizon = horizon
    if horizon is None and any(r.value is None for r in kept):
        new_horizon = _horizon(now_ms, config)
    if len(kept) == len(records) and new_horizon == horizon:
        return True
    return _rebuild(e, kept, new_horizon)


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
    """A producer's last batch with no records left: its header alone keeps the producer's state."""
    return RecordBatch(base_offset=e.base_offset, partition_leader_epoch=e.partition_leader_epoch,
                       attributes=e.attributes & ~DELETE_HORIZON, last_offset_delta=e.last_offset_delta,
                       base_timestamp=-1,
                       max_timestamp=e.max_timestamp, producer_id=e.producer_id, producer_epoch=e.producer_epoch,
                       base_sequence=e.base_sequence, records=RecordBatch.Records(items=[])).to_bytes()


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
