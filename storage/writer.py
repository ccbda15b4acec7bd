"""Append batches to a partition directory as a broker would: assign offsets, roll segments,
write index entries by Kafka's append rule, a `.txnindex` entry for each aborted transaction and
a producer-state `.snapshot` at each roll and at close.

Every write appends; nothing written is rewritten (snapshots are new files, renamed into place).
A crash part-way leaves a .log whose valid prefix (found by the recovery scan) holds every batch
written completely, and indexes that are at worst short of their last entries, which `reindex`
restores.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from kafkacodec import write_batch
from kafkacodec.records import Batch
from kafkacodec.runtime.errors import KafkaCodecError

from . import index, names
from .files import write_atomically
from .logdir import open_partition
from .producers import ProducerState, marker_of, snapshot_path, state_at
from .scan import scan_bytes, scan_file
from .txnindex import encode_txn_index

DEFAULT_SEGMENT_BYTES = 1 << 30
DEFAULT_INDEX_BYTES = 10 * 1024 * 1024
MAX_RELATIVE_OFFSET = 2 ** 31 - 1


class WriteRefused(KafkaCodecError):
    """The directory holds something the writer will not append to (a damaged tail)."""


class PartitionWriter:
    def __init__(self, path: str | Path, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = index.INDEX_INTERVAL_BYTES,
                 segment_index_bytes: int = DEFAULT_INDEX_BYTES, fsync: bool = False, start_offset: int = 0):
        """`start_offset` is where an empty partition starts (a partition with segments goes on
        from its log end)."""
        self.path = Path(path)
        self.start_offset = start_offset
        self.path.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.interval = index_interval_bytes
        self.max_offset_entries = segment_index_bytes // index.OFFSET_ENTRY
        self.max_time_entries = segment_index_bytes // index.TIME_ENTRY - 1  # one slot kept for the roll
        self.fsync = fsync
        self._open_active()

    # -- state ---------------------------------------------------------------------------
    def _open_active(self) -> None:
        part = open_partition(self.path)
        self.last_snapshot = max(part.snapshots, default=-1)
        if not part.segments:
            self.producers = ProducerState(end_offset=self.start_offset)
            self._start_segment(self.start_offset)
            return
        seg = part.segments[-1]
        scan = scan_file(seg.log)
        if not scan.is_valid:
            raise WriteRefused(f"{seg.log}: damaged from byte {scan.valid_bytes} ({scan.error}); "
                               "recover it before appending")
        self.base = seg.base_offset
        self.size = scan.valid_bytes
        offsets, times = index.rebuild(scan.batches, self.base, self.interval)
        self.offset_entries, self.time_entries = len(offsets), len(times)
        self.last_entry_at = offsets[-1].position if offsets else 0
        self.max_ts, self.max_ts_offset = max(((b.max_timestamp, b.last_offset) for b in scan.batches),
                                              default=(index.NO_TIMESTAMP, -1), key=lambda t: t[0])
        self.last_time = times[-1].timestamp if times else index.NO_TIMESTAMP
        self.next_offset = scan.batches[-1].last_offset + 1 if scan.batches else self.base
        self._write_file(".index", index.encode_offset_index(offsets, self.base), replace=True)
        self._write_file(".timeindex", index.encode_time_index(times, self.base), replace=True)
        self.producers, _ = state_at(part, self.base)
        try:
            aborted = [t for b in scan.batches if (t := self.producers.apply(b)) is not None]
        except KafkaCodecError as err:
            raise WriteRefused(f"{seg.log}: {err}; recover it before appending") from err
        if aborted or self._file(".txnindex").exists():
            self._write_file(".txnindex", encode_txn_index(aborted), replace=True)

    def _start_segment(self, base: int) -> None:
        self.base = self.next_offset = base
        self.size = self.offset_entries = self.time_entries = self.last_entry_at = 0
        self.max_ts, self.max_ts_offset, self.last_time = index.NO_TIMESTAMP, -1, index.NO_TIMESTAMP
        for suffix in (".log", ".index", ".timeindex"):
            self._file(suffix).touch(exist_ok=False)  # never overwrite an existing segment

    def _file(self, suffix: str) -> Path:
        return self.path / (names.segment_name(self.base) + suffix)

    def _write_file(self, suffix: str, data: bytes, replace: bool = False) -> None:
        path = self._file(suffix)
        if replace:
            write_atomically(path, data)
            return
        with open(path, "ab") as f:
            f.write(data)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())

    # -- appending -----------------------------------------------------------------------
    def append(self, records: Iterable, **batch_options) -> tuple[int, int]:
        """Write the records at the next offsets as one v2 batch (or, with magic=0/1, legacy
        entries); returns the (first, last) offset. Records may carry their own offsets (as after
        compaction): they must rise and start at or after the next offset."""
        data = write_batch(records, base_offset=self.next_offset, **batch_options)
        written = scan_bytes(data).batches  # what recovery will read back: last offsets, max timestamps
        first_written = _first_offset(written[0])
        if first_written < self.next_offset:
            raise ValueError(f"offset {first_written} is below the partition's next offset {self.next_offset}")
        for b in written:  # a malformed transaction marker is refused before anything is written
            if b.magic >= 2 and b.entry.is_control and b.entry.producer_id >= 0:
                marker_of(b.entry)
        first, last = first_written, written[-1].last_offset
        if self._must_roll(len(data), last):
            self.close_segment()
            self._start_segment(first)
            self._snapshot()
        position = self.size
        self._write_file(".log", data)
        # the writer's state moves only once the batch is written (markers were checked above)
        for b in written:
            if b.max_timestamp > self.max_ts:
                self.max_ts, self.max_ts_offset = b.max_timestamp, b.last_offset
        aborted = [t for b in written if (t := self.producers.apply(b)) is not None]
        self.size += len(data)
        self.next_offset = last + 1
        if aborted:  # created on the first abort, as Kafka creates it
            self._write_file(".txnindex", encode_txn_index(aborted))
        if position - self.last_entry_at > self.interval:  # checked before this batch's size counts
            self._write_file(".index", index.encode_offset_index([index.OffsetEntry(last, position)], self.base))
            self.offset_entries += 1
            self.last_entry_at = position
            self._maybe_time_entry()
        return first, last

    def _must_roll(self, size: int, last_offset: int) -> bool:
        return self.size > 0 and (
            size > self.segment_bytes - self.size
            or self.offset_entries >= self.max_offset_entries
            or self.time_entries >= self.max_time_entries
            or last_offset - self.base > MAX_RELATIVE_OFFSET)

    def _maybe_time_entry(self) -> None:
        if self.max_ts > self.last_time:  # only when the maximum grows
            entry = index.TimeEntry(self.max_ts, self.max_ts_offset)
            self._write_file(".timeindex", index.encode_time_index([entry], self.base))
            self.time_entries += 1
            self.last_time = self.max_ts

    def close_segment(self) -> None:
        """The final time-index entry Kafka writes when a segment is rolled or closed."""
        self._maybe_time_entry()

    def _snapshot(self) -> None:
        """The producer state at the log end, as Kafka snapshots it on roll and at shutdown."""
        offset = self.producers.end_offset
        if offset > self.last_snapshot:
            write_atomically(snapshot_path(self.path, offset), self.producers.to_snapshot())
            self.last_snapshot = offset

    def close(self) -> None:
        self.close_segment()
        self._snapshot()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_offset(info) -> int:
    e = info.entry
    if info.magic >= 2:
        return e.base_offset
    return Batch(e, info.position, info.size).base_offset
