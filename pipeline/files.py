"""Find Kafka's files under a path on any filesystem pyarrow reaches (local, s3://, gs://,
hdfs://, ...), and read byte ranges of them. Everything here is picklable by value: a task gets
the URI it was planned from and opens the filesystem itself."""
from __future__ import annotations

import functools
import json
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from kafkacodec.storage.layout import names
from kafkacodec.codec.places import SIZE_AT
from kafkacodec.storage.segments.scan import LOG_OVERHEAD, MIN_RECORD_OVERHEAD

log = logging.getLogger("kafkacodec.pipeline")


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
    snapshots: dict[int, str] = field(default_factory=dict)  # producer state (.snapshot), by offset
    # every segment of the partition, where `segments` holds only the one loaded (a .log named alone)
    log_segments: list[SegmentFiles] | None = None


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


def _partition(fs, path: str, topic: str, partition: int, skipped: list,
               children: list[pafs.FileInfo] | None = None) -> PartitionFiles:
    part = PartitionFiles(topic, partition, path)
    infos = {i.base_name: i for i in (_children(fs, path) if children is None else children)
             if i.type == pafs.FileType.File}
    remote = {name: m for name in infos if (m := _REMOTE_FILE.match(name))}
    files = names.sort_partition_files([name for name in infos if name not in remote])
    part.snapshots = {offset: infos[name].path for offset, name in files.snapshots.items()}
    found = []
    for base, by_suffix in files.segments.items():
        log = infos[by_suffix[names.LOG]]
        found.append(SegmentFiles(base, log.path, log.size,
                                  *(infos[by_suffix[s]].path if s in by_suffix else None
                                    for s in (names.INDEX, names.TIME_INDEX, names.TXN_INDEX))))
    skipped += [(infos[name].path, why) for name, why in files.skipped]
    found += _remote_segments(fs, infos, remote, skipped)
    # one segment per base offset: a name of Kafka's own first, then the largest copy
    found.sort(key=lambda s: (s.base_offset, _REMOTE_FILE.match(os.path.basename(s.log)) is not None, -s.size, s.log))
    for seg in found:
        if part.segments and part.segments[-1].base_offset == seg.base_offset:
            skipped.append((seg.log, f"another copy of the segment at base offset {seg.base_offset} "
                                     f"(which copy is current only __remote_log_metadata says)"))
        else:
            part.segments.append(seg)
    return part


# Tiered storage: remote segments as RemoteStorageManager plugins lay them out, read where the
# .log object holds the segment's bytes as they are. Both layouts below name a segment's objects
# `<base offset>-<segment id><suffix>`, the ids being Kafka Uuids as text (16 bytes in URL-safe
# base64 without padding: 22 characters, '-' and '_' among them).
#   Kafka's LocalTieredStorage (its tests' RSM): <root>/<topic>-<partition>-<topic id>/<offset>-<id>.log
#     beside .index, .timeindex, .txnindex, .snapshot, .leader_epoch_checkpoint (copies of Kafka's files)
#   Aiven's tiered-storage-for-apache-kafka: <prefix><topic>-<topic id>/<partition>/<20-digit offset>-<id>.log
#     beside .indexes (the indexes packed into one object) and .rsm-manifest (JSON: compression, encryption)
_UUID = r"[A-Za-z0-9_-]{22}"
_TOPIC = names.TOPIC_CHARS + "+"
_REMOTE_FILE = re.compile(rf"^(?P<offset>[0-9]+)-(?P<id>{_UUID})(?P<suffix>\.[a-z_-]+)$")
_PARTITION_ID_DIR = re.compile(rf"^(?P<topic>{_TOPIC})-(?P<partition>[0-9]+)-(?P<id>{_UUID})$")
_TOPIC_ID_DIR = re.compile(rf"^(?P<topic>{_TOPIC})-(?P<id>{_UUID})$")
_PARTITION_NUMBER = re.compile(r"^[0-9]+$")
_MANIFEST = ".rsm-manifest"


def _remote_segments(fs, infos: dict, remote: dict, skipped: list) -> list[SegmentFiles]:
    """The segments of a tiered copy's objects (`remote`: name -> _REMOTE_FILE match), grouped by
    offset and segment id. Kafka's own index files are named; Aiven's packed .indexes is not (the
    readers scan batches instead). A segment whose Aiven manifest says its .log was compressed or
    encrypted chunk by chunk is passed over."""
    groups: dict[tuple[int, str], dict[str, pafs.FileInfo]] = {}
    for name, m in remote.items():
        groups.setdefault((int(m["offset"]), m["id"]), {})[m["suffix"]] = infos[name]
    manifests = [g[_MANIFEST].path for g in groups.values() if names.LOG in g and _MANIFEST in g]
    why_not = {}
    if manifests:  # small objects, one request each: read side by side
        with ThreadPoolExecutor(max_workers=min(16, len(manifests))) as pool:
            why_not = dict(zip(manifests, pool.map(lambda p: _manifest_refusal(fs, p), manifests)))
    out = []
    for (base, _), by_suffix in sorted(groups.items()):
        log = by_suffix.get(names.LOG)
        if log is None:
            orphan = next(iter(sorted(by_suffix.values(), key=lambda i: i.path)))
            skipped.append((orphan.path, "tiered copy without its .log (orphan)"))
            continue
        why = why_not.get(by_suffix[_MANIFEST].path) if _MANIFEST in by_suffix else None
        if why is not None:
            skipped.append((log.path, why))
            continue
        out.append(SegmentFiles(base, log.path, log.size,
                                *(by_suffix[s].path if s in by_suffix else None
                                  for s in (names.INDEX, names.TIME_INDEX, names.TXN_INDEX))))
    return out


def _manifest_refusal(fs, path: str) -> str | None:
    """Why the .log beside an Aiven segment manifest is not the segment's bytes, or None when it is."""
    try:
        with fs.open_input_file(path) as f:
            manifest = json.loads(read_at(f, f.size(), 0))
    except (OSError, ValueError) as e:
        return f"its segment manifest is unreadable ({e})"
    except RecursionError:  # nested deeper than json reads: no manifest the plugin writes
        return "its segment manifest is unreadable (JSON nested too deep)"
    if not isinstance(manifest, dict):
        return "its segment manifest is not a JSON object"
    if manifest.get("encryption") is not None:
        return "encrypted by the tiered storage plugin (chunks of AES-GCM ciphertext; the key is the broker's)"
    if manifest.get("compression") is not False:
        return "compressed by the tiered storage plugin (zstd chunks, found through the manifest's chunk index)"
    return None


def _remote_partition_name(path: str) -> tuple[str, int] | None:
    """Topic and partition of a directory of remote segments from its name (`<topic>-<partition>-<topic
    id>`) or, for a partition-numbered directory, its parent's (`<topic>-<topic id>`)."""
    base = os.path.basename(path.rstrip("/"))
    if m := _PARTITION_ID_DIR.match(base):
        return m["topic"], int(m["partition"])
    if _PARTITION_NUMBER.match(base) and (m := _TOPIC_ID_DIR.match(os.path.basename(os.path.dirname(path.rstrip("/"))))):
        return m["topic"], int(base)
    return None


def _dir_name(path: str, children) -> tuple[str, int]:
    """Topic and partition of a directory holding segments, (its name, -1) when its name says neither."""
    if any(c.type == pafs.FileType.File and _is_remote_log(c.base_name) for c in children):
        named = _remote_partition_name(path)
        if named is not None:
            return named
    parsed = names.parse_partition_dir(os.path.basename(path.rstrip("/")))
    return (parsed.topic, parsed.partition) if parsed else (os.path.basename(path.rstrip("/")), -1)


def _is_remote_log(name: str) -> bool:
    m = _REMOTE_FILE.match(name)
    return m is not None and m["suffix"] == names.LOG


def _topic_partitions(fs, path: str, topic: str, children, skipped: list) -> list[PartitionFiles]:
    """The partitions of an Aiven topic directory: its subdirectories named by partition number."""
    out = []
    for c in children:
        if c.type != pafs.FileType.Directory:
            continue
        if _PARTITION_NUMBER.match(c.base_name):
            out.append(_partition(fs, c.path, topic, int(c.base_name), skipped))
        else:
            skipped.append((c.path, "not a partition directory"))
    return out


def _is_topic_dir(name: str, children) -> bool:
    """An Aiven topic directory: `<topic>-<topic id>` holding partition-numbered directories."""
    return _TOPIC_ID_DIR.match(name) is not None and any(
        c.type == pafs.FileType.Directory and _PARTITION_NUMBER.match(c.base_name) for c in children)


def list_log(uri: str) -> Listing:
    """What `uri` holds: one segment (.log), a partition directory, or a log-dirs root; or the same
    in a tiered storage copy (see _REMOTE_FILE): a remote segment, a partition's or a topic's
    directory, or the root of the copy."""
    fs, path = filesystem(uri)
    info = fs.get_file_info(path)
    skipped: list[tuple[str, str]] = []
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(uri)
    if info.type == pafs.FileType.File:
        parent = os.path.dirname(path)
        siblings = _children(fs, parent)
        topic, partition = _dir_name(parent, [info])
        passed: list[tuple[str, str]] = []
        whole = _partition(fs, parent, topic, partition, passed, siblings)
        whole.log_segments = whole.segments
        whole.segments = [s for s in whole.segments if s.log == info.path]
        if not whole.segments:
            why = next((w for p, w in passed if p == info.path), None)
            raise ValueError(f"{uri}: " + (why or "not a segment (.log with a 20-digit base offset, or a tiered "
                                                  "copy's <offset>-<segment id>.log)"))
        return Listing([whole], skipped)
    children = _children(fs, path)
    files = [c.base_name for c in children if c.type == pafs.FileType.File]
    if names.is_partition_listing(files, (c.base_name for c in children if c.type == pafs.FileType.Directory)) \
            or any(_is_remote_log(name) for name in files):
        topic, partition = _dir_name(path, children)
        return Listing([_partition(fs, path, topic, partition, skipped, children)], skipped)
    name = os.path.basename(path.rstrip("/"))
    if _is_topic_dir(name, children):
        partitions = _topic_partitions(fs, path, _TOPIC_ID_DIR.match(name)["topic"], children, skipped)
        return Listing(sorted(partitions, key=lambda p: p.partition), skipped)
    partitions = []
    for c in children:
        if c.type != pafs.FileType.Directory:
            continue
        if _TOPIC_ID_DIR.match(c.base_name):  # maybe a tiered copy's topic or partition: look inside
            inside = _children(fs, c.path)
            if _is_topic_dir(c.base_name, inside):
                partitions += _topic_partitions(fs, c.path, _TOPIC_ID_DIR.match(c.base_name)["topic"], inside,
                                                skipped)
                continue
            named = _remote_partition_name(c.path)
            if named is not None and any(i.type == pafs.FileType.File and _is_remote_log(i.base_name)
                                         for i in inside):
                partitions.append(_partition(fs, c.path, *named, skipped, inside))
                continue
        parsed = names.parse_partition_dir(c.base_name)
        inside = _children(fs, c.path) if parsed is not None else None
        why = names.partition_dir_skip(parsed, _listing(inside) if inside is not None else None)
        if why is None:
            partitions.append(_partition(fs, c.path, parsed.topic, parsed.partition, skipped, inside))
            continue
        skipped.append((c.path, why))
        if why == names.LOG_DIR_INSIDE:  # its records are read only when it is named: say so
            log.warning("kafka-log: skipped %s: %s", c.path, why)
    partitions.sort(key=lambda p: (p.topic, p.partition))
    return Listing(partitions, skipped)


def _listing(children: list[pafs.FileInfo]) -> tuple[list[str], list[str]]:
    """The names of a directory's entries and of its subdirectories, as names.is_log_dir_listing
    takes them."""
    return ([c.base_name for c in children],
            [c.base_name for c in children if c.type == pafs.FileType.Directory])


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
    size = int.from_bytes(data[at + SIZE_AT:at + LOG_OVERHEAD], "big", signed=True)
    return LOG_OVERHEAD + size if size >= MIN_RECORD_OVERHEAD else None  # as frame_size refuses it


def _whole_batches(data) -> int:
    """How many leading bytes of `data` are whole batches."""
    cut = 0
    while (size := _frame(data, cut)) is not None and cut + size <= len(data):
        cut += size
    return cut
