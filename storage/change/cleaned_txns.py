"""The transactions a cleaning walks through, as Kafka's CleanedTransactionMetadata follows them
batch by batch over the cleaned segments: whether a data batch belongs to an aborted
transaction (its records go), and whether a marker's transaction has no batch left in what was
walked (only then may the marker have a delete horizon, and go once it has passed)."""
from __future__ import annotations

from dataclasses import dataclass

from kafkacodec.generated.record_batch import RecordBatch

from ..state.control_rules import ControlType, read_key


@dataclass
class _Aborted:
    marker: int  # the offset of the ABORT marker that ends it, there or gone
    walked: bool = False  # a batch of it was walked


class CleanedTransactions:
    """Feed it the cleaned batches in offset order; `aborted` holds (producer id, first offset,
    marker offset) of every aborted transaction of the partition."""

    def __init__(self, aborted):
        self._pending = sorted((first, pid, marker) for pid, first, marker in aborted)
        self._next = 0  # the first of _pending not reached yet
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _Aborted] = {}

    def data_batch(self, e: RecordBatch) -> bool:
        """A data batch walked; True when it belongs to an aborted transaction."""
        self._reach(e.last_offset)
        if not e.is_transactional:
            return False
        aborted = self._ongoing(e.producer_id, e.base_offset)
        if aborted is not None:
            aborted.walked = True
            return True
        self._ongoing_committed.add(e.producer_id)
        return False

    def marker_batch(self, e: RecordBatch) -> bool:
        """A control batch walked; True when no batch of its transaction was walked (a control
        batch emptied by an earlier cleaning ends nothing: True too). A control record that is
        no transaction marker, or cannot be read as one, stays."""
        self._reach(e.last_offset)
        if not e.records.items:
            return True
        kind = _control_type(e.records.items[0].key)
        if kind == ControlType.abort:
            aborted = self._ongoing(e.producer_id, e.base_offset)
            self._ongoing_aborted.pop(e.producer_id, None)
            return aborted is None or not aborted.walked
        if kind == ControlType.commit:
            walked = e.producer_id in self._ongoing_committed
            self._ongoing_committed.discard(e.producer_id)
            return not walked
        return False

    def _ongoing(self, producer_id: int, offset: int) -> _Aborted | None:
        """The producer's aborted transaction `offset` is in. One whose marker is before it ended
        there though an earlier cleaning removed the marker (its .txnindex entry may outlive it):
        the producer's batches after it are of later transactions."""
        aborted = self._ongoing_aborted.get(producer_id)
        if aborted is not None and aborted.marker < offset:
            del self._ongoing_aborted[producer_id]
            return None
        return aborted

    def _reach(self, offset: int) -> None:
        """Aborted transactions that have begun by `offset` become ongoing for their producer."""
        while self._next < len(self._pending) and self._pending[self._next][0] <= offset:
            first, pid, marker = self._pending[self._next]
            if self._ongoing(pid, first) is None:
                self._ongoing_aborted[pid] = _Aborted(marker)
            self._next += 1


def _control_type(key: bytes | None) -> int | None:
    """The type of a control record's key, None when Kafka cannot read it."""
    if key is None:
        return None
    fields, refused = read_key(bytes(key))
    return None if refused is not None else fields[1]
