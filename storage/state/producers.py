"""Producer state as Kafka's ProducerStateManager keeps it: each idempotent or transactional
producer's last batch, epoch, coordinator epoch and open transaction. Replaying batches through
it yields the aborted transactions for the `.txnindex`; it reads and writes `.snapshot` files."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from kafkacodec.generated.producer_snapshot import ProducerSnapshot
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import DecodeError, InvalidValueError, LimitExceededError
from kafkacodec.runtime.limits import LIMITS

from . import control_rules
from ..layout import names
from ..layout.logdir import Partition
from ..diskio.safeio import open_regular, read_at
from ..segments.scan import iter_file_batches
from ..indexes.txnindex import AbortedTxn

NO_PRODUCER_ID = -1
ABORT, COMMIT = control_rules.MARKER_TYPES
INT32_MAX = 2 ** 31 - 1
SNAPSHOT_HEADER, SNAPSHOT_ENTRY = 10, 46  # version, CRC and count; one producer


@dataclass
class ProducerEntry:
    producer_id: int
    epoch: int = -1
    last_sequence: int = -1
    last_offset: int = -1  # of its last data batch; -1 when no batch is known
    offset_delta: int = 0
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int | None = None  # first offset of its open transaction

    @property
    def first_sequence(self) -> int:
        """First sequence of the last batch; sequences wrap from 2^31-1 to 0."""
        return decrement_sequence(self.last_sequence, self.offset_delta)


@dataclass(frozen=True)
class Marker:
    """An end-transaction marker: the first record of a control batch."""
    kind: int  # ABORT or COMMIT
    coordinator_epoch: int
    timestamp: int


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction its marker ended, with the last stable offset at that moment."""
    producer_id: int
    producer_epoch: int  # the marker's
    first_offset: int
    last_offset: int  # the marker's offset
    aborted: bool
    last_stable_offset: int

    @property
    def index_entry(self) -> AbortedTxn:
        return AbortedTxn(self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset)


CUT = "; a broker's recovery keeps this batch and cuts whatever follows it in the segment"


class MarkerRefused(InvalidValueError):
    """A marker Kafka refuses with an InvalidRecordException: its recovery keeps the batch and
    cuts the segment after it (storage.state.control_rules)."""


def marker_of(batch: RecordBatch) -> Marker | None:
    """The marker of a control batch, checked as Kafka checks it when it updates producer state;
    None for a control batch left empty by the cleaner. Raises MarkerRefused for a key or value
    Kafka refuses, an InvalidValueError for one that stops a broker (null, or no marker's type)."""
    records = batch.records.items
    if not records:
        return None
    r = records[0]
    if r.key is None or r.value is None:
        field = "key" if r.key is None else "value"
        raise InvalidValueError(f"null control record {field}: a broker's recovery stops on it", None,
                                f"record_batch/records/{field}")
    key_fields, why = control_rules.read_key(bytes(r.key))
    if why is not None:
        raise MarkerRefused(f"control record key: {why}{CUT}", None, "record_batch/records/key")
    kind = key_fields[1]
    if kind not in control_rules.MARKER_TYPES:
        raise InvalidValueError(f"control record type {kind} in a producer's batch is not a transaction marker",
                                None, "record_batch/records/key")
    value_fields, why = control_rules.read_marker_value(bytes(r.value))
    if why is not None:
        raise MarkerRefused(f"end transaction marker value: {why}{CUT}", None, "record_batch/records/value")
    return Marker(kind, value_fields[1], r.timestamp)


def check_marker(batch) -> None:
    """Raises as `marker_of` does for a producer's control batch (anything with `entry`, such as a
    scan's BatchInfo) whose marker a broker's recovery cannot read; other batches pass."""
    e = batch.entry
    if isinstance(e, RecordBatch) and e.producer_id != NO_PRODUCER_ID and e.is_control:
        marker_of(e)


def increment_sequence(base: int, delta: int) -> int:
    """The sequence `delta` after `base`: sequences wrap past 2^31-1 to 0."""
    return delta - (INT32_MAX - base) - 1 if base > INT32_MAX - delta else base + delta


def decrement_sequence(sequence: int, delta: int) -> int:
    """The sequence `delta` before `sequence`, wrapping back past 0 to 2^31-1."""
    return INT32_MAX - (delta - sequence) + 1 if sequence < delta else sequence - delta


def last_sequence(base: int, delta: int) -> int:
    """The sequence `delta` after `base`, -1 (none) for any negative base."""
    return -1 if base < 0 else increment_sequence(base, delta)


class ProducerState:
    """The producers at `end_offset`, the offset after the last batch applied."""

    def __init__(self, producers: dict[int, ProducerEntry] | None = None, end_offset: int = 0):
        self.producers = producers or {}
        self.end_offset = end_offset

    def copy(self) -> "ProducerState":
        return ProducerState({pid: replace(e) for pid, e in self.producers.items()}, self.end_offset)

    def last_stable_offset(self, completing_producer: int, marker_offset: int) -> int:
        """The first offset of the oldest transaction still open of another producer, else the offset
        after the marker (ProducerStateManager.lastStableOffset)."""
        open_firsts = [e.txn_first_offset for e in self.producers.values()
                       if e.txn_first_offset is not None and e.producer_id != completing_producer]
        return min(open_firsts, default=marker_offset + 1)

    def open_transactions(self) -> list[tuple[int, int]]:
        """(producer id, first offset) of each transaction open at end_offset, by first offset: the
        first one's is the last stable offset, where read_committed consumers stop."""
        return sorted(((e.producer_id, e.txn_first_offset) for e in self.producers.values()
                       if e.txn_first_offset is not None), key=lambda t: (t[1], t[0]))

    def follow(self, batch) -> CompletedTxn | None:
        """Follow one batch (anything with `entry` and `last_offset`, such as a scan's BatchInfo) as
        Kafka does on append and in recovery; returns the transaction its marker completes. A
        malformed marker raises before anything changes."""
        e = batch.entry
        completed = None
        if isinstance(e, RecordBatch) and e.producer_id != NO_PRODUCER_ID:
            if e.is_control:
                marker = marker_of(e)
                if marker is not None:
                    completed = self._end_transaction(e, marker)
            else:
                self._data_batch(e)
        self.end_offset = batch.last_offset + 1
        return completed

    def apply(self, batch) -> AbortedTxn | None:
        """`follow`, keeping only what the `.txnindex` records: an aborted transaction's entry."""
        completed = self.follow(batch)
        return completed.index_entry if completed is not None and completed.aborted else None

    def _entry(self, e: RecordBatch) -> ProducerEntry:
        p = self.producers.setdefault(e.producer_id, ProducerEntry(e.producer_id))
        if p.epoch != e.producer_epoch:  # a new epoch forgets the old epoch's batches
            p.epoch, p.last_sequence, p.last_offset, p.offset_delta = e.producer_epoch, -1, -1, 0
        return p

    def _data_batch(self, e: RecordBatch) -> None:
        p = self._entry(e)
        p.last_sequence = last_sequence(e.base_sequence, e.last_offset_delta)
        p.last_offset = e.last_offset
        p.offset_delta = e.last_offset_delta
        p.last_timestamp = e.max_timestamp
        if e.is_transactional and p.txn_first_offset is None:
            p.txn_first_offset = e.base_offset

    def _end_transaction(self, e: RecordBatch, marker: Marker) -> CompletedTxn | None:
        p = self.producers.get(e.producer_id)
        first = p.txn_first_offset if p is not None else None
        completed = None
        # a marker with no data before it completes nothing (and leaves no trace in the index)
        if first is not None:
            completed = CompletedTxn(e.producer_id, e.producer_epoch, first, e.base_offset, marker.kind == ABORT,
                                     self.last_stable_offset(e.producer_id, e.base_offset))
        p = self._entry(e)
        p.txn_first_offset = None
        p.coordinator_epoch = marker.coordinator_epoch
        p.last_timestamp = marker.timestamp
        return completed

    # -- snapshots -------------------------------------------------------------------------
    def to_snapshot(self) -> bytes:
        return ProducerSnapshot(producers=[
            ProducerSnapshot.ProducerEntry(
                producer_id=p.producer_id, producer_epoch=p.epoch, last_sequence=p.last_sequence,
                last_offset=p.last_offset, offset_delta=p.offset_delta, timestamp=p.last_timestamp,
                coordinator_epoch=p.coordinator_epoch,
                current_txn_first_offset=-1 if p.txn_first_offset is None else p.txn_first_offset)
            for p in sorted(self.producers.values(), key=lambda p: p.producer_id)]).to_bytes()

    @classmethod
    def from_snapshot(cls, data: bytes, end_offset: int) -> "ProducerState":
        """Raises a DecodeError for a snapshot Kafka would call corrupt (version, CRC, length)."""
        snap = ProducerSnapshot.from_bytes(data)
        producers = {}
        for s in snap.producers:
            known = s.last_offset >= 0  # Kafka keeps batch metadata only then
            producers[s.producer_id] = ProducerEntry(
                s.producer_id, s.producer_epoch, s.last_sequence if known else -1, s.last_offset if known else -1,
                s.offset_delta if known else 0, s.timestamp, s.coordinator_epoch,
                s.current_txn_first_offset if s.current_txn_first_offset >= 0 else None)
        return cls(producers, end_offset)


def read_snapshot(path: Path) -> bytes:
    """A snapshot file's bytes. One larger than a snapshot can be is refused as the decoder
    refuses more than LIMITS.max_items producers (LimitExceededError, so that it is passed over
    as a corrupt one is), before it is read into memory."""
    limit = SNAPSHOT_HEADER + SNAPSHOT_ENTRY * LIMITS.max_items
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise LimitExceededError(f"producer snapshot of {size:,} bytes holds more producers than the limit of "
                                     f"{LIMITS.max_items} (kafkacodec.runtime.limits.LIMITS.max_items)", limit,
                                     "producer_snapshot", str(path))
        return read_at(f, 0, size, path)


def snapshot_path(directory: Path, offset: int) -> Path:
    return directory / (names.segment_name(offset) + names.SNAPSHOT)


def latest_snapshot(part: Partition, at_most: int) -> tuple[ProducerState | None, list[tuple[Path, DecodeError]]]:
    """The state of the newest readable snapshot at or below `at_most`; corrupt ones are passed
    over for older ones, as Kafka's loader does, and returned with why."""
    bad = []
    for offset, path in sorted(part.snapshots.items(), reverse=True):
        if offset > at_most:
            continue
        try:
            return ProducerState.from_snapshot(read_snapshot(path), offset), bad
        except DecodeError as err:
            err.file = str(path)
            bad.append((path, err))
    return None, bad


def state_at(part: Partition, offset: int) -> tuple[ProducerState, bool]:
    """The producer state before `offset`: the newest snapshot at or below it, then the batches
    after the snapshot replayed. The flag says whether the state is complete: without a snapshot
    the replay starts at the log start, and a transaction opened in a deleted segment is unknown."""
    state, _ = latest_snapshot(part, offset)
    complete = state is not None or not part.segments or part.segments[0].base_offset == 0
    state = state or ProducerState(end_offset=part.segments[0].base_offset if part.segments else 0)
    bases = [s.base_offset for s in part.segments] + [None]
    for seg, next_base in zip(part.segments, bases[1:]):
        if seg.base_offset >= offset:
            break
        if next_base is not None and next_base <= state.end_offset:
            continue  # wholly before the snapshot
        _replay(seg.log, state, offset)
    return state, complete


def rebuild_txn_index(part: Partition, base_offset: int, batches) -> tuple[list[AbortedTxn], bool]:
    """The `.txnindex` entries Kafka's recovery writes for a segment's valid batches, from the
    producer state before it; the flag as for `state_at`. A malformed marker ends the segment
    there, as recovery truncates there."""
    state, complete = state_at(part, base_offset)
    out = []
    for b in batches:
        try:
            t = state.apply(b)
        except DecodeError:
            break
        if t is not None:
            out.append(t)
    return out, complete


def _replay(log: Path, state: ProducerState, stop_at: int) -> None:
    for b in iter_file_batches(log):
        if isinstance(b, DecodeError) or b.last_offset >= stop_at:
            return  # damage ends the segment's contribution, as in recovery
        if b.last_offset >= state.end_offset:
            try:
                state.apply(b)
            except DecodeError:
                return
