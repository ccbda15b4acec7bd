"""A partition's last stable offset on any filesystem pyarrow reaches: read_committed consumers
read nothing at or past the first offset of the earliest transaction still open at the log end
(no COMMIT or ABORT marker yet). The producer state there is storage.state.producers' ProducerState:
the partition's newest readable snapshot at or below the log end, then the batches after it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from kafkacodec.runtime.errors import DecodeError, LimitExceededError
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.storage.indexes import index
from kafkacodec.storage.state.producers import SNAPSHOT_ENTRY, SNAPSHOT_HEADER, ProducerState

from .files import PartitionFiles, filesystem, read_at
from .segment_reads import batches_from, log_end_offset, read_indexes


@dataclass(frozen=True)
class StableEnd:
    log_end: int
    still_open: list[tuple[int, int]]  # (producer id, first offset) of each open transaction, by first offset
    bad_snapshots: list[tuple[str, str]] = field(default_factory=list)  # (path, why) passed over for older ones

    @property
    def offset(self) -> int:
        """The last stable offset."""
        return self.still_open[0][1] if self.still_open else self.log_end


def stable_end(uri: str, part: PartitionFiles) -> StableEnd | None:
    """The partition's state at its log end; None for a partition with no segment. A segment
    loaded alone is part of its partition, whose transactions may end in later segments."""
    whole = replace(part, segments=part.log_segments or part.segments)
    end = log_end_offset(uri, whole)
    if end is None:
        return None
    state, bad = _newest_snapshot(uri, whole, end)
    _replay(uri, whole, state)
    return StableEnd(end, state.open_transactions(), bad)


def _newest_snapshot(uri: str, part: PartitionFiles, end: int) -> tuple[ProducerState, list[tuple[str, str]]]:
    """The state of the newest readable snapshot at or below `end` (one past it belongs to a log
    since cut back, which Kafka deletes), else the empty state at the log start; damaged ones are
    passed over for older ones, as Kafka's loader does."""
    fs, _ = filesystem(uri)
    bad = []
    limit = SNAPSHOT_HEADER + SNAPSHOT_ENTRY * LIMITS.max_items  # as storage.state.producers.read_snapshot
    for offset, path in sorted(part.snapshots.items(), reverse=True):
        if offset > end:
            continue
        try:
            with fs.open_input_file(path) as f:
                size = f.size()
                if size > limit:
                    raise LimitExceededError(f"producer snapshot of {size:,} bytes holds more producers than the "
                                             f"limit of {LIMITS.max_items}", limit, "producer_snapshot", path)
                return ProducerState.from_snapshot(read_at(f, size, 0), offset), bad
        except DecodeError as err:
            bad.append((path, str(err)))
    return ProducerState(end_offset=part.segments[0].base_offset), bad


def _replay(uri: str, part: PartitionFiles, state: ProducerState) -> None:
    """The batches after the state's offset applied to it; damage ends a segment's part, as in
    recovery, and a malformed marker too."""
    nexts = [s.base_offset for s in part.segments[1:]] + [None]
    for seg, next_base in zip(part.segments, nexts):
        if next_base is not None and next_base <= state.end_offset:
            continue  # wholly before it
        start = 0
        if state.end_offset > seg.base_offset:
            start = index.lookup_offset(read_indexes(uri, seg)[0], seg.base_offset, state.end_offset).position
        for batch in batches_from(uri, seg, start):
            if batch.last_offset < state.end_offset:
                continue
            try:
                state.follow(batch)
            except DecodeError:
                break
