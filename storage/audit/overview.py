"""What a log dir holds, in one pass over each segment's batches: offsets, times, records, codecs,
producers, transactions and damage, per segment and per partition — the first questions of an
incident, answered without a broker.

Batches are read as `verify --quick` reads them (framing and CRCs); a v2 batch's records are
counted from its header, a compressed v0/v1 wrapper's by expanding it. Times are Kafka's: a
batch's first timestamp (the first record's; for a LogAppendTime batch, or one carrying a delete
horizon, its max timestamp) and its max timestamp, -1 meaning none.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kafkacodec.runtime.errors import DecodeError

from ..layout.logdir import Partition, Segment
from ..state.producers import ProducerState
from ..segments.reader import Damage, segment_batches


@dataclass
class SegmentSummary:
    file: str
    base_offset: int
    bytes: int
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: Counter = field(default_factory=Counter)  # batches per codec
    magics: Counter = field(default_factory=Counter)  # batches per message format
    control_batches: int = 0
    missing_indexes: list[str] = field(default_factory=list)
    damage: str | None = None  # the first problem: where and what
    damaged_bytes: int = 0  # from the damage to the end of the file

    def damaged_at(self, position: int, why: str) -> None:
        self.damage, self.damaged_bytes = f"byte {position}: {why}", self.bytes - position

    def to_json(self) -> dict:
        return {"file": self.file, "baseOffset": self.base_offset, "bytes": self.bytes, "batches": self.batches,
                "records": self.records, "firstOffset": self.first_offset, "lastOffset": self.last_offset,
                "firstTimestamp": self.first_timestamp, "maxTimestamp": self.max_timestamp,
                "codecs": dict(sorted(self.codecs.items())), "magics": {str(k): v for k, v in sorted(self.magics.items())},
                "controlBatches": self.control_batches, "missingIndexes": self.missing_indexes,
                "damage": self.damage, "damagedBytes": self.damaged_bytes}


@dataclass
class TransactionCounts:
    committed: int = 0
    aborted: int = 0
    open: list[tuple[int, int]] = field(default_factory=list)  # (producer id, first offset) of each open one


@dataclass
class PartitionSummary:
    topic: str
    partition: int
    path: str
    segments: list[SegmentSummary] = field(default_factory=list)
    producers: set = field(default_factory=set)  # ids of producers with batches here
    transactional_producers: set = field(default_factory=set)
    transactions: TransactionCounts = field(default_factory=TransactionCounts)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.segments)

    def _extreme(self, name: str, pick):
        values = [getattr(s, name) for s in self.segments if getattr(s, name) is not None]
        return pick(values) if values else None

    @property
    def first_offset(self) -> int | None:
        return self._extreme("first_offset", min)

    @property
    def last_offset(self) -> int | None:
        return self._extreme("last_offset", max)

    @property
    def first_timestamp(self) -> int | None:
        return self._extreme("first_timestamp", min)

    @property
    def max_timestamp(self) -> int | None:
        return self._extreme("max_timestamp", max)

    @property
    def codecs(self) -> Counter:
        return sum((s.codecs for s in self.segments), Counter())

    @property
    def damaged(self) -> list[SegmentSummary]:
        return [s for s in self.segments if s.damage]

    def to_json(self) -> dict:
        t = self.transactions
        return {"topic": self.topic, "partition": self.partition, "path": self.path,
                "segments": [s.to_json() for s in self.segments], "bytes": self.total("bytes"),
                "batches": self.total("batches"), "records": self.total("records"),
                "firstOffset": self.first_offset, "lastOffset": self.last_offset,
                "firstTimestamp": self.first_timestamp, "maxTimestamp": self.max_timestamp,
                "codecs": dict(sorted(self.codecs.items())), "producers": sorted(self.producers),
                "transactionalProducers": sorted(self.transactional_producers),
                "transactions": {"committed": t.committed, "aborted": t.aborted,
                                 "open": [{"producerId": p, "firstOffset": o} for p, o in t.open]},
                "skipped": [{"path": p, "why": w} for p, w in self.skipped]}


def _first_timestamp(batch) -> int:
    e = batch.entry
    if batch.is_legacy:
        return e.message.timestamp if e.message.magic >= 1 else -1
    return e.max_timestamp if int(e.timestamp_type) == 1 or e.has_delete_horizon else e.base_timestamp


def _earliest(a: int | None, b: int) -> int | None:
    if b < 0:
        return a
    return b if a is None else min(a, b)


def summarise_segment(seg: Segment, state: ProducerState, out: PartitionSummary) -> SegmentSummary:
    s = SegmentSummary(str(seg.log), seg.base_offset, seg.log.stat().st_size)
    s.missing_indexes = [name for name, present in ((".index", seg.index), (".timeindex", seg.time_index))
                         if present is None]
    for item in segment_batches(seg):
        if isinstance(item, Damage):
            s.damaged_at(item.position, _why(item.error))
            break
        batch = item
        try:
            if batch.is_legacy:  # a wrapper's messages are expanded once, for their count and first offset
                expanded = list(batch)
                records, first = len(expanded), expanded[0].offset if expanded else batch.last_offset
            else:
                records, first = batch.entry.records_count, batch.base_offset
        except DecodeError as err:  # a compressed wrapper whose messages do not read
            s.damaged_at(batch.position, _why(err))
            break
        previous = out.segments[-1].last_offset if out.segments and s.last_offset is None else s.last_offset
        if previous is not None and first <= previous:  # as verify --quick checks it
            s.damaged_at(batch.position, f"batch holds offsets {first}..{batch.last_offset}, not after the "
                                         f"previous batch's last offset {previous}")
            break
        s.batches += 1
        s.records += records
        s.first_offset = first if s.first_offset is None else s.first_offset
        s.last_offset = batch.last_offset
        s.first_timestamp = _earliest(s.first_timestamp, _first_timestamp(batch))
        max_ts = batch.entry.max_timestamp if not batch.is_legacy else _first_timestamp(batch)
        s.max_timestamp = max_ts if s.max_timestamp is None or max_ts > s.max_timestamp else s.max_timestamp
        s.codecs[batch.compression] += 1
        s.magics[batch.magic] += 1
        _follow_producer(batch, state, out)
        if not batch.is_legacy:
            s.control_batches += batch.entry.is_control
    return s


def _why(err: DecodeError) -> str:
    """An error's text without its file and byte: the batch's start is named instead (as `verify`
    names it)."""
    err.file = None
    why = str(err)
    return why[why.index(": ") + 2:] if why.startswith("byte ") else why


def _follow_producer(batch, state: ProducerState, out: PartitionSummary) -> None:
    e = batch.entry
    if not batch.is_legacy and e.producer_id >= 0:
        out.producers.add(e.producer_id)
        if e.is_transactional:
            out.transactional_producers.add(e.producer_id)
    try:
        done = state.follow(batch)
    except DecodeError:
        return  # a malformed marker: verify names it; the overview counts what it can
    if done is not None:
        if done.aborted:
            out.transactions.aborted += 1
        else:
            out.transactions.committed += 1


def summarise_partition(part: Partition) -> PartitionSummary:
    out = PartitionSummary(part.topic, part.partition, str(part.path),
                           skipped=[(str(p), why) for p, why in part.skipped])
    state = ProducerState()
    for seg in part.segments:  # each read whole, those after a damaged one too: nothing is hidden
        out.segments.append(summarise_segment(seg, state, out))
    out.transactions.open = sorted((p.producer_id, p.txn_first_offset) for p in state.producers.values()
                                   if p.txn_first_offset is not None)
    return out


@dataclass
class Totals:
    """The sums of several partitions (a topic's, or a log dir's): sizes and counts added, time
    ranges spanned, producers counted once however many partitions they wrote to."""
    partitions: int = 0
    segments: int = 0
    bytes: int = 0
    records: int = 0
    first_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: Counter = field(default_factory=Counter)
    producers: set = field(default_factory=set)
    transactional_producers: set = field(default_factory=set)
    committed: int = 0
    aborted: int = 0
    open: int = 0
    damaged_segments: int = 0

    def add(self, p: PartitionSummary) -> None:
        self.partitions += 1
        self.segments += len(p.segments)
        self.bytes += p.total("bytes")
        self.records += p.total("records")
        for name, pick in (("first_timestamp", min), ("max_timestamp", max)):
            values = [v for v in (getattr(self, name), getattr(p, name)) if v is not None]
            setattr(self, name, pick(values) if values else None)
        self.codecs += p.codecs
        self.producers |= p.producers
        self.transactional_producers |= p.transactional_producers
        self.committed += p.transactions.committed
        self.aborted += p.transactions.aborted
        self.open += len(p.transactions.open)
        self.damaged_segments += len(p.damaged)


def totals(summaries: list[PartitionSummary]) -> tuple[dict[str, Totals], Totals]:
    """Per topic (in the order the topics come), and over all of them."""
    by_topic: dict[str, Totals] = {}
    everything = Totals()
    for p in summaries:
        by_topic.setdefault(p.topic, Totals()).add(p)
        everything.add(p)
    return by_topic, everything
