"""The current value of every key of a partition, as a compacted topic's consumer ends up with it
after reading the whole log: the latest record per key wins, a tombstone (null value) deletes the
key, records without a key and control records are not values. Read-committed by default: records
of aborted transactions never count, nor does anything at or past the last stable offset (as in
transactions.read_committed)."""
from __future__ import annotations

from dataclasses import dataclass

from ..layout.logdir import Partition
from ..segments.reader import OnDamage, partition_records
from .transactions import read_committed as committed_records


@dataclass(frozen=True)
class Latest:
    offset: int
    timestamp: int
    value: bytes
    headers: tuple


def latest_values(part: Partition, read_committed: bool = True,
                  on_damage: OnDamage | None = None) -> dict[bytes, Latest]:
    """key -> its latest value, in the order keys were last written."""
    pairs = committed_records(part, on_damage) if read_committed else partition_records(part, on_damage=on_damage)
    out: dict[bytes, Latest] = {}
    for batch, r in pairs:
        if r.key is None or (not batch.is_legacy and batch.entry.is_control):
            continue
        out.pop(r.key, None)  # re-inserted at the end: the order of last writes
        if r.value is not None:
            out[r.key] = Latest(r.offset, r.timestamp, r.value, tuple((h.key, h.value) for h in r.headers))
    return out
