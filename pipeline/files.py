"""Find Kafka's files under a path on any filesystem pyarrow reaches (local, s3://, gs://,
hdfs://, ...), and read byte ranges of them. Everything here is picklable by value: a task gets
the URI it was planned from and opens the filesystem itself."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from kafkacodec.storage import names
from kafkacodec.storage.scan import LOG_OVERHEAD, MIN_RECORD_OVERHEAD


@dataclass(frozen=True)
class SegmentFiles:
    base_offset: int
    log: str
    size: int
    index: str | None = None
    time_index: str | None = None
    txn_index: str | None = None


@dataclass
class PartitionFiles:
    topic: str
    partition: int
    path: str
    segments: list[SegmentFiles] = field(default_factory=list)


@dataclass
class Listing:
    partitions: list[PartitionFiles]
    skipped: list[tuple[str, str]]


@functools.lru_cache(maxsize=8)
def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and the path inside it; a plain path is local."""
    if "://" in uri and not uri.startswith("file://"):
        return pafs.FileSystem.from_uri(uri)
    path = uri[len("file://"):] if uri.startswith("file://") else uri
    return pafs.LocalFileSystem(), os.path.abspath(path)


def read_at(f, nbytes: int, position: int) -> bytes:
    """`nbytes` from `position` of an open pyarrow file (local files give bytes, others Buffers)."""
    data = f.read_at(nbytes, position)
    return data if isinstance(data, bytes) else data.to_pybytes()


def read_range(uri: str, path: str, start: int = 0, end: int | None = None) -> bytes:
    fs, _ = filesystem(uri)
    with fs.open_input_file(path) as f:
        size = f.size()
        end = size if end is None else min(end, size)
        return read_at(f, end - start, start) if end > start else b""


def _children(fs: pafs.FileSystem, path: str) -> list[pafs.FileInfo]:
    return sorted(fs.get_file_info(pafs.FileSelector(path, allow_not_found=False)), key=lambda i: i.path)


def _partition(fs, path: str, topic: str, partition: int, skipped: list) -> PartitionFiles:
    part = PartitionFiles(topic, partition, path)
    infos = {i.base_name: i for i in _children(fs, path) if i.type == pafs.FileType.File}
    files = names.sort_partition_files(infos)
    for base, by_suffix in files.segments.items():
        log = infos[by_suffix[names.LOG]]
        part.segments.append(SegmentFiles(base, log.path, log.size,
                                          *(infos[by_suffix[s]].path if s in by_suffix else None
                                            for s in (names.INDEX, names.TIME_INDEX, names.TXN_INDEX))))
    skipped += [(infos[name].path, why) for name, why in files.skipped]
    return part


def list_log(uri: str) -> Listing:
    """What `uri` holds: one segment (.log), a partition directory, or a log-dirs root."""
    fs, path = filesystem(uri)
    info = fs.get_file_info(path)
    skipped: list[tuple[str, str]] = []
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(uri)
    if info.type == pafs.FileType.File:
        parent = os.path.dirname(path)
        parsed = names.parse_partition_dir(os.path.basename(parent))
        topic, partition = (parsed.topic, parsed.partition) if parsed else (os.path.basename(parent), -1)
        whole = _partition(fs, parent, topic, partition, [])
        whole.segments = [s for s in whole.segments if s.log == info.path]
        if not whole.segments:
            raise ValueError(f"{uri}: not a segment (.log with a 20-digit base offset)")
        return Listing([whole], skipped)
    children = _children(fs, path)
    if any(c.type == pafs.FileType.File and c.base_name.endswith(names.LOG) for c in children):
        parsed = names.parse_partition_dir(os.path.basename(path.rstrip("/")))
        topic, partition = (parsed.topic, parsed.partition) if parsed else (os.path.basename(path), -1)
        return Listing([_partition(fs, path, topic, partition, skipped)], skipped)
    partitions = []
    for c in children:
        if c.type != pafs.FileType.Directory:
            continue
        parsed = names.parse_partition_dir(c.base_name)
        why = names.partition_dir_skip(parsed)
        if why is not None:
            skipped.append((c.path, why))
        else:
            partitions.append(_partition(fs, c.path, parsed.topic, parsed.partition, skipped))
    partitions.sort(key=lambda p: (p.topic, p.partition))
    return Listing(partitions, skipped)


WINDOW_BYTES = 16 << 20  # what a task reads at once
DAMAGE_READ_BYTES = 64 << 20


def windows(s, window: int = WINDOW_BYTES):
    """A decode.Slice's bytes as (position, bytes) pieces of whole batches, about `window` bytes each (a
    larger batch alone), so that a task holds one piece at a time; bytes whose framing is broken
    end the last piece, where decode_slice finds the damage."""
    fs, _ = filesystem(s.uri)
    with fs.open_input_file(s.path) as f:
        end = f.size() if s.end_pos is None else min(s.end_pos, f.size())
        pos = s.start_pos
        while pos < end:
            data = read_at(f, min(max(window, LOG_OVERHEAD), end - pos), pos)
            cut = _whole_batches(data)
            if cut == 0:
                size = _frame(data, 0)
                if size is None or pos + size > end:  # damage at its start, which decode_slice reports from
                    yield pos, read_at(f, min(end - pos, DAMAGE_READ_BYTES), pos)  # the bytes left (bounded)
                    return
                data, cut = read_at(f, size, pos), size
            yield pos, data[:cut]
            pos += cut


def _frame(data, at: int) -> int | None:
    """The size of the batch at `at` from its size field, None when it is no possible size."""
    if at + LOG_OVERHEAD > len(data):
        return None
    size = int.from_bytes(data[at + 8:at + 12], "big", signed=True)
    return LOG_OVERHEAD + size if size >= MIN_RECORD_OVERHEAD else None  # as frame_size refuses it


def _whole_batches(data) -> int:
    """How many leading bytes of `data` are whole batches."""
    cut = 0
    while (size := _frame(data, cut)) is not None and cut + size <= len(data):
        cut += size
    return cut
