"""Records and offsets a partition's files give for a key, an offset or a time, as a broker's
fetch and ListOffsets would give them: through the .index and .timeindex where they exist
(storage.indexes.lookup), from segment to segment in offset order."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from kafkacodec.runtime.errors import DecodeError

from ..dump_log.record_text import utf8
from ..layout.logdir import Partition
from ..indexes.lookup import find_offset, find_timestamp
from ..segments.reader import Damage, log_end_offset, segment_batches
from ..segments.scan import iter_file_batches
from ..layout.textfiles import read_offset_checkpoint
from .times import iso_millis

LOG_START_CHECKPOINT = "log-start-offset-checkpoint"


@dataclass
class Hit:
    """A record found, where it is, and a note when it is not quite what was asked for."""
    topic: str
    partition: int
    file: str
    position: int  # of its batch
    record: object
    note: str | None = None

    def to_json(self) -> dict:
        r = self.record

        def b64(data):
            return None if data is None else base64.b64encode(bytes(data)).decode("ascii")

        return {"topic": self.topic, "partition": self.partition, "file": self.file, "position": self.position,
                "offset": r.offset, "timestamp": r.timestamp, "time": iso_millis(r.timestamp),
                "key": b64(r.key), "value": b64(r.value),
                "headers": [[h.key, b64(h.value)] for h in r.headers], "note": self.note}

    def line(self) -> str:
        key, value = utf8(self.record)
        when = iso_millis(self.record.timestamp)
        text = (f"{self.topic}-{self.partition} offset: {self.record.offset} timestamp: {self.record.timestamp} "
                + (f"({when}) " if when else "") +
                f"file: {self.file} position: {self.position} key: {key} payload: {value}")
        return text + (f" ({self.note})" if self.note else "")


def _hit(part: Partition, log: Path, batch, record, note: str | None = None) -> Hit:
    return Hit(part.topic, part.partition, str(log), batch.position, record, note)


def records_at_offset(part: Partition, target: int, use_index: bool = True) -> Iterator[Hit]:
    """The record at `target`, or the first after it when the cleaner removed it; none below the
    first segment's base offset, as a fetch there is out of range. Without `use_index`, found by
    reading the log, for when the offset index is doubted."""
    if not part.segments or target < part.segments[0].base_offset:
        return
    floor = max(i for i, s in enumerate(part.segments) if s.base_offset <= target)
    if not use_index:  # the segments named below the one holding the target are not read
        yield from _first_by_scan(part, part.segments[floor:], lambda record: record.offset >= target)
        return
    for seg in part.segments[floor:]:
        batch = find_offset(seg, target)
        if batch is None:
            continue
        for record in batch:
            if record.offset == target:
                yield _hit(part, seg.log, batch, record)
                return
            if record.offset > target:  # gone, or the index led past it: the log alone says which
                yield _by_scan(part, seg, target) or _hit(part, seg.log, batch, record,
                                                          f"offset {target} is not in the log; this is the next")
                return
    for seg in part.segments[floor:]:  # nothing through the index: it may be wrong
        exact = _by_scan(part, seg, target)
        if exact is not None:
            yield exact
            return


def _by_scan(part: Partition, seg, target: int) -> Hit | None:
    """The record at `target` found by reading the segment from its start, without the index."""
    for item in segment_batches(seg):
        if isinstance(item, Damage):
            return None
        if item.last_offset >= target:
            for record in item:
                if record.offset == target:
                    return _hit(part, seg.log, item, record, "found by reading the log: its .index misleads")
            return None
    return None


def records_at_time(part: Partition, target: int, use_index: bool = True) -> Iterator[Hit]:
    """The first record whose timestamp is at or after `target` (ListOffsets by time); without
    `use_index`, found by reading the log, for when the time index is doubted."""
    if not use_index:
        yield from _first_by_scan(part, part.segments, lambda record: record.timestamp >= target)
        return
    for seg in part.segments:
        found = find_timestamp(seg, target)
        if found is None:
            continue
        _, offset = found
        batch = find_offset(seg, offset)
        for record in batch or ():
            if record.offset == offset:
                yield _hit(part, seg.log, batch, record)
                return


def _first_by_scan(part: Partition, segments, wanted: Callable) -> Iterator[Hit]:
    """The first record of `segments`, in offset order, that is `wanted`, reading every batch;
    damage ends the search, as it ends Kafka's reading there, and is raised."""
    for seg in segments:
        for item in segment_batches(seg):
            if isinstance(item, Damage):
                raise item.error
            for record in item:
                if wanted(record):
                    yield _hit(part, seg.log, item, record, "found by reading the log")
                    return


def records_with_key(part: Partition, key: bytes, advance: Callable[[int], None] = lambda n: None,
                     on_damage: Callable[[Damage], None] | None = None) -> Iterator[Hit]:
    """Every record whose key is `key`, in offset order; damage goes to `on_damage` and ends its
    segment, as it ends Kafka's reading there."""
    for seg in part.segments:
        for item in segment_batches(seg):
            if isinstance(item, Damage):
                if on_damage is not None:
                    on_damage(item)
                break
            try:
                records = list(item)
            except DecodeError as err:
                if on_damage is not None:
                    on_damage(Damage(seg, item.position, err))
                break
            for record in records:
                if record.key is not None and bytes(record.key) == key:
                    yield _hit(part, seg.log, item, record)
        advance(seg.log.stat().st_size)


def log_start_offset(part: Partition, root: Path) -> int | None:
    """The first segment's base offset, or the log dir's checkpointed start when that is later
    (retention or a delete-records request moved it into the segment)."""
    if not part.segments:
        return None
    start = part.segments[0].base_offset
    checkpoint = Path(root) / LOG_START_CHECKPOINT
    if checkpoint.is_file():
        start = max(start, read_offset_checkpoint(checkpoint).get((part.topic, part.partition), start))
    return start


def offset_of_max_timestamp(part: Partition) -> int | None:
    """The offset of the first record with the largest timestamp (ListOffsets' max-timestamp)."""
    best = None  # (timestamp, segment, the batch's last offset)
    for seg in part.segments:
        for item in iter_file_batches(seg.log, verify=False):
            if isinstance(item, DecodeError):
                break
            if item.max_timestamp >= 0 and (best is None or item.max_timestamp > best[0]):
                best = (item.max_timestamp, seg, item.last_offset)
    if best is None:
        return None
    timestamp, seg, last_offset = best
    batch = find_offset(seg, last_offset)
    return next((r.offset for r in batch if r.timestamp == timestamp), None) if batch is not None else None


def offset_for(part: Partition, kind: str, target: int | None, root: Path) -> int | None:
    """kafka-get-offsets' answer for one partition; None where Kafka's is unknown (-1)."""
    if kind == "latest":
        return log_end_offset(part)
    if kind in ("earliest", "earliest-local"):
        return log_start_offset(part, root)
    if kind == "max-timestamp":
        return offset_of_max_timestamp(part)
    if kind == "timestamp":
        hit = next(records_at_time(part, target), None)
        return None if hit is None else hit.record.offset
    return None  # latest-tiered: nothing of a local copy is known to be tiered
