"""Append batches to a partition directory as a broker would: assign offsets, roll segments,
write index entries by Kafka's append rule, a `.txnindex` entry for each aborted transaction and
a producer-state `.snapshot` at each roll and at close.

Every write appends to what earlier appends wrote (snapshots are new files, renamed into place);
only a failed append's own bytes are cut back, and reopening rewrites the active segment's indexes
from its log. A crash part-way leaves a .log whose valid prefix (found by the recovery scan) holds every batch
written completely, and indexes that are at worst short of their last entries, which `reindex`
restores.

An append is all or nothing: when one of its writes fails (a full disk, a file system gone
read-only), the files are cut back to their sizes before it, the files it created are removed,
and the writer's state is as before, so it never acknowledges a record it cannot read back and
never writes behind a torn batch. If that taking back fails too, the writer refuses every
further append (WriterFailed) until the partition is recovered.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from kafkacodec.codec.records import Batch, write_batch
from kafkacodec.runtime.errors import KafkaCodecError

from ..indexes import index
from ..layout import names
from ..diskio.durable import fsync_dir, fsync_file, write_atomically, write_fully
from ..layout.logdir import open_partition
from ..state.producers import ProducerState, marker_of, snapshot_path, state_at
from ..diskio.safeio import FileProblem, os_problem
from ..segments.scan import scan_bytes, scan_file
from ..indexes.txnindex import encode_txn_index

DEFAULT_SEGMENT_BYTES = 1 << 30
DEFAULT_INDEX_BYTES = 10 * 1024 * 1024
MAX_RELATIVE_OFFSET = 2 ** 31 - 1
# What the files and the acknowledged offsets depend on; saved before an append, restored if it fails.
_STATE = ("base", "next_offset", "size", "offset_entries", "time_entries", "last_entry_at", "max_ts",
          "max_ts_offset", "last_time", "last_snapshot", "txn_bytes")


class WriteRefused(KafkaCodecError):
    """The directory holds something the writer will not append to (a damaged tail)."""


class AppendFailed(FileProblem):
    """A write of an append failed (the file is named); the files were taken back to their state
    before the append and nothing of it was acknowledged. Appends may go on once the cause is gone."""


class WriterFailed(FileProblem, WriteRefused):
    """A failed write could not be taken back, so the partition may end in a torn batch: the
    writer refuses every append. Recover the partition (`kafkacodec recover`), then open a new one."""


class PartitionWriter:
    def __init__(self, path: str | Path, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = index.INDEX_INTERVAL_BYTES,
                 segment_index_bytes: int = DEFAULT_INDEX_BYTES, fsync: bool = False, start_offset: int = 0):
        """`start_offset` is where an empty partition starts (a partition with segments goes on
        from its log end). With `fsync`, every append is on the disk when it returns: the files
        written are flushed, and the directory whenever a file is created in it."""
        self.path = Path(path)
        self.start_offset = start_offset
        self.segment_bytes = segment_bytes
        self.interval = index_interval_bytes
        self.max_offset_entries = segment_index_bytes // index.OFFSET_ENTRY
        self.max_time_entries = segment_index_bytes // index.TIME_ENTRY - 1  # one slot kept for the roll
        self.fsync = fsync
        self.failed: WriterFailed | None = None
        self._created: list[Path] = []
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise os_problem(self.path, err) from None
        self._open_active()

    # -- state ---------------------------------------------------------------------------
    def _open_active(self) -> None:
        part = open_partition(self.path)
        self.last_snapshot = max(part.snapshots, default=-1)
        self.txn_bytes = None
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
        self._replace(".index", index.encode_offset_index(offsets, self.base))
        self._replace(".timeindex", index.encode_time_index(times, self.base))
        self.producers, _ = state_at(part, self.base)
        try:
            aborted = [t for b in scan.batches if (t := self.producers.apply(b)) is not None]
        except KafkaCodecError as err:
            raise WriteRefused(f"{seg.log}: {err}; recover it before appending") from err
        if aborted or self._file(".txnindex").exists():
            data = encode_txn_index(aborted)
            self._replace(".txnindex", data)
            self.txn_bytes = len(data)

    def _start_segment(self, base: int) -> None:
        self.base = self.next_offset = base
        self.size = self.offset_entries = self.time_entries = self.last_entry_at = 0
        self.max_ts, self.max_ts_offset, self.last_time = index.NO_TIMESTAMP, -1, index.NO_TIMESTAMP
        self.txn_bytes = None
        for suffix in (".log", ".index", ".timeindex"):
            path = self._file(suffix)
            try:
                path.touch(exist_ok=False)  # never overwrite an existing segment
            except OSError as err:
                raise os_problem(path, err) from None
            self._created.append(path)
        self._sync_directory()

    def _file(self, suffix: str, base: int | None = None) -> Path:
        return self.path / (names.segment_name(self.base if base is None else base) + suffix)

    def _replace(self, suffix: str, data: bytes) -> None:
        write_atomically(self._file(suffix), data, durable=self.fsync)

    def _append_to(self, suffix: str, data: bytes) -> None:
        path = self._file(suffix)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as err:
            raise os_problem(path, err) from None
        try:
            write_fully(fd, data, path)
            if self.fsync:
                os.fsync(fd)
        except OSError as err:
            raise os_problem(path, err) from None
        finally:
            os.close(fd)

    def _sync_directory(self) -> None:
        if self.fsync:
            fsync_dir(self.path)

    # -- all or nothing ------------------------------------------------------------------
    @contextmanager
    def _all_or_nothing(self, written=()):
        """Whatever fails inside leaves the files and the state as they were before (or, if the
        files cannot be taken back, a writer that refuses every append)."""
        self._refuse_if_failed()
        saved = {name: getattr(self, name) for name in _STATE}
        pids = {b.entry.producer_id for b in written if b.magic >= 2 and b.entry.producer_id >= 0}
        producers = {pid: replace(p) if (p := self.producers.producers.get(pid)) else None for pid in pids}
        end_offset = self.producers.end_offset
        self._created = []
        try:
            yield
        except BaseException as err:
            created, self._created = self._created, []
            for name, value in saved.items():
                setattr(self, name, value)
            for pid, entry in producers.items():
                if entry is None:
                    self.producers.producers.pop(pid, None)
                else:
                    self.producers.producers[pid] = entry
            self.producers.end_offset = end_offset
            try:
                self._take_back_files(created)
            except FileProblem as again:
                cause = f"{err.message} in {err.file}" if isinstance(err, FileProblem) else str(err)
                self.failed = WriterFailed(again.file, f"{again.message} while taking back an append "
                                                       f"that failed ({cause}); the partition may end in a torn "
                                                       "batch: recover it before appending")
                raise self.failed from err
            if isinstance(err, FileProblem):
                raise AppendFailed(err.file, f"{err.message}; nothing of the append was kept") from err
            raise

    def _refuse_if_failed(self) -> None:
        if self.failed is not None:
            raise WriterFailed(self.failed.file, f"{self.failed.message} (no append is taken after that)")

    def _take_back_files(self, created: list[Path]) -> None:
        """The active segment's files cut back to the sizes the (restored) state gives them, and
        the files created since the state was saved removed; raises the FileProblem of a failure."""
        sizes = {".log": self.size, ".index": self.offset_entries * index.OFFSET_ENTRY,
                 ".timeindex": self.time_entries * index.TIME_ENTRY, ".txnindex": self.txn_bytes}
        for suffix, size in sizes.items():
            path = self._file(suffix)
            if size is None or path in created:
                continue
            try:  # untouched files are left alone (a read-only disk refuses any cut)
                cut = os.stat(path).st_size != size
                if cut:
                    os.truncate(path, size)
            except OSError as err:
                raise os_problem(path, err) from None
            if cut and self.fsync:
                fsync_file(path)
        for path in reversed(created):
            try:
                path.unlink(missing_ok=True)
            except OSError as err:
                raise os_problem(path, err) from None
        if created and self.fsync:
            fsync_dir(self.path)

    # -- appending -----------------------------------------------------------------------
    def append(self, records: Iterable, **batch_options) -> tuple[int, int]:
        """Write the records at the next offsets as one v2 batch (or, with magic=0/1, legacy
        entries); returns the (first, last) offset. Records may carry their own offsets (as after
        compaction): they must rise and start at or after the next offset. A write that fails
        raises AppendFailed naming the file, with nothing of the batch kept."""
        self._refuse_if_failed()
        data = write_batch(records, base_offset=self.next_offset, **batch_options)
        written = scan_bytes(data).batches  # what recovery will read back: last offsets, max timestamps
        first_written = _first_offset(written[0])
        if first_written < self.next_offset:
            raise ValueError(f"offset {first_written} is below the partition's next offset {self.next_offset}")
        for b in written:  # a malformed transaction marker is refused before anything is written
            if b.magic >= 2 and b.entry.is_control and b.entry.producer_id >= 0:
                marker_of(b.entry)
        first, last = first_written, written[-1].last_offset
        with self._all_or_nothing(written):
            if self._must_roll(len(data), last):
                self._maybe_time_entry()  # the closing entry of the rolled segment
                self._start_segment(first)
                self._snapshot()
            position = self.size
            self._append_to(".log", data)
            for b in written:
                if b.max_timestamp > self.max_ts:
                    self.max_ts, self.max_ts_offset = b.max_timestamp, b.last_offset
            aborted = [t for b in written if (t := self.producers.apply(b)) is not None]
            self.size += len(data)
            self.next_offset = last + 1
            if aborted:  # created on the first abort, as Kafka creates it
                self._append_txn_entries(encode_txn_index(aborted))
            if position - self.last_entry_at > self.interval:  # checked before this batch's size counts
                self._append_to(".index",
                                index.encode_offset_index([index.OffsetEntry(last, position)], self.base))
                self.offset_entries += 1
                self.last_entry_at = position
                self._maybe_time_entry()
        return first, last

    def _append_txn_entries(self, data: bytes) -> None:
        if self.txn_bytes is None:
            self._created.append(self._file(".txnindex"))
        self._append_to(".txnindex", data)
        if self.txn_bytes is None:
            self._sync_directory()
        self.txn_bytes = (self.txn_bytes or 0) + len(data)

    def _must_roll(self, size: int, last_offset: int) -> bool:
        return self.size > 0 and (
            size > self.segment_bytes - self.size
            or self.offset_entries >= self.max_offset_entries
            or self.time_entries >= self.max_time_entries
            or last_offset - self.base > MAX_RELATIVE_OFFSET)

    def _maybe_time_entry(self) -> None:
        if self.max_ts > self.last_time:  # only when the maximum grows
            entry = index.TimeEntry(self.max_ts, self.max_ts_offset)
            self._append_to(".timeindex", index.encode_time_index([entry], self.base))
            self.time_entries += 1
            self.last_time = self.max_ts

    def roll(self) -> None:
        """Start a new segment at the next offset, as a broker rolls one; nothing when the active
        segment is empty."""
        self._refuse_if_failed()
        if self.size == 0:
            return
        with self._all_or_nothing():
            self._maybe_time_entry()
            self._start_segment(self.next_offset)
            self._snapshot()

    def close_segment(self) -> None:
        """The final time-index entry Kafka writes when a segment is rolled or closed."""
        with self._all_or_nothing():
            self._maybe_time_entry()

    def _snapshot(self) -> None:
        """The producer state at the log end, as Kafka snapshots it on roll and at shutdown."""
        offset = self.producers.end_offset
        if offset > self.last_snapshot:
            path = snapshot_path(self.path, offset)
            if not path.exists():
                self._created.append(path)
            write_atomically(path, self.producers.to_snapshot(), durable=self.fsync)
            self.last_snapshot = offset

    def close(self) -> None:
        """The closing time-index entry and a snapshot; nothing for a writer that failed (its
        partition needs recovery first)."""
        if self.failed is not None:
            return
        with self._all_or_nothing():
            self._maybe_time_entry()
            self._snapshot()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
            return
        try:  # the error on its way out says what went wrong; a close failing after it would hide it
            self.close()
        except KafkaCodecError:
            pass


def _first_offset(info) -> int:
    e = info.entry
    if info.magic >= 2:
        return e.base_offset
    return Batch(e, info.position, info.size).base_offset
