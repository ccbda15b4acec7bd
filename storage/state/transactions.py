"""A partition's transactions, from its control markers, and the read-committed view of its
records that a consumer with isolation.level=read_committed gets: no aborted record, nothing at
or past the last stable offset."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from kafkacodec.runtime.errors import DecodeError

from ..layout.logdir import Partition
from ..segments.reader import log_end_offset
from .producers import ProducerState, state_at
from ..segments.reader import OnDamage, partition_batches
from ..diskio.safeio import check_regular
from ..indexes.txnindex import read_txn_index_file


@dataclass(frozen=True)
class Transaction:
    producer_id: int
    producer_epoch: int
    first_offset: int
    end_offset: int | None  # the marker's offset; None while the transaction is open
    outcome: str  # COMMIT, ABORT or OPEN


def partition_transactions(part: Partition, on_damage: OnDamage | None = None) -> list[Transaction]:
    """Every transaction of the partition in the order they ended (open ones last), as the
    producers' state follows them: from a producer's first transactional batch to its marker."""
    state = ProducerState()
    out = []
    for _, batch in partition_batches(part, on_damage=on_damage):
        try:
            t = state.follow(batch)
        except DecodeError:
            continue  # a malformed marker: recovery would truncate here; a reader passes over it
        if t is not None:
            out.append(Transaction(t.producer_id, t.producer_epoch, t.first_offset, t.last_offset,
                                   "ABORT" if t.aborted else "COMMIT"))
    out += [Transaction(p.producer_id, p.epoch, p.txn_first_offset, None, "OPEN")
            for p in state.producers.values() if p.txn_first_offset is not None]
    return out


def aborted_ranges(part: Partition) -> list[tuple[int, int, int]]:
    """(producer id, first offset, marker offset) of every aborted transaction, from the
    `.txnindex` files as a fetch reads them, and from the markers where an index lacks one."""
    found = set()
    for seg in part.segments:
        if seg.txn_index is not None:
            entries = read_txn_index_file(seg.txn_index, check_regular(seg.log))
            found |= {(t.producer_id, t.first_offset, t.last_offset) for t in entries}
    found |= {(t.producer_id, t.first_offset, t.end_offset) for t in partition_transactions(part)
              if t.outcome == "ABORT"}
    return sorted(found, key=lambda t: t[2])


def open_at_end(part: Partition) -> list[tuple[int, int]]:
    """(producer id, first offset) of each transaction open at the log end, by first offset, from
    the producer state there (the newest snapshot, then the batches after it). The first one's
    first offset is the last stable offset: read_committed consumers read nothing at or past it."""
    end = log_end_offset(part)
    return [] if end is None else state_at(part, end)[0].open_transactions()


def read_committed(part: Partition, on_damage: OnDamage | None = None) -> Iterator[tuple[object, object]]:
    """(batch, record) pairs a read-committed consumer sees: no control records, nothing of an
    aborted transaction, and nothing at or past the last stable offset (the first offset of the
    earliest transaction still open, see open_at_end), where such a consumer waits."""
    aborted = aborted_ranges(part)
    still_open = open_at_end(part)
    stable = still_open[0][1] if still_open else None
    for _, batch in partition_batches(part, on_damage=on_damage):
        if stable is not None and batch.base_offset >= stable:
            return
        if not batch.is_legacy:
            e = batch.entry
            if e.is_control:
                continue
            if e.is_transactional and any(pid == e.producer_id and first <= e.base_offset <= end
                                          for pid, first, end in aborted):
                continue
        for record in batch:
            if stable is not None and record.offset >= stable:
                return
            yield batch, record
