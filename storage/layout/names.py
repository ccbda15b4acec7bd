"""Names of Kafka's log directories and files, and which of them a reader must pass over."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..diskio.safeio import open_regular, read_at

SEGMENT_DIGITS = 20
LOG, INDEX, TIME_INDEX, TXN_INDEX, SNAPSHOT = ".log", ".index", ".timeindex", ".txnindex", ".snapshot"
# Suffixes of files in flight: deletion pending, cleaner output being built, ready to swap in.
TRANSIENT_SUFFIXES = (".deleted", ".cleaned", ".swap")

TOPIC_CHARS = r"[A-Za-z0-9._-]"  # the characters Kafka allows in a topic name
MAX_TOPIC_LENGTH = 249

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_MARKED_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<uuid>[0-9a-f]{32})-(?P<kind>delete|future|stray)$")


def segment_name(base_offset: int) -> str:
    """The 20-digit zero-padded base offset that names a segment's files."""
    if base_offset < 0:
        raise ValueError(f"negative base offset {base_offset}")
    return f"{base_offset:0{SEGMENT_DIGITS}d}"


def offset_from_name(file_name: str) -> int:
    """The offset in a segment file's name: the text before the first dot, as Kafka parses it."""
    return int(file_name.split(".", 1)[0])


@dataclass(frozen=True)
class PartitionDir:
    topic: str
    partition: int
    kind: str = "live"  # live | delete | future | stray


def parse_partition_dir(name: str) -> PartitionDir | None:
    """`orders-0` -> live partition; `orders-0.<uuid>-delete|-future|-stray` -> marked; else None."""
    m = _MARKED_DIR.match(name)
    if m:
        return PartitionDir(m["topic"], int(m["partition"]), m["kind"])
    m = _PARTITION_DIR.match(name)  # greedy topic: the split is at the last '-'
    if m:
        return PartitionDir(m["topic"], int(m["partition"]))
    return None


# A segment's .log as Kafka names it (the offset before the first dot), in flight or not. Only such
# a file makes a directory a partition's: a broker's own server.log beside the partitions does not.
_SEGMENT_LOG = re.compile(r"^[0-9]+\.log(?:\.(?:deleted|cleaned|swap))?$")


def is_segment_log(file_name: str) -> bool:
    return _SEGMENT_LOG.match(file_name) is not None


def is_partition_listing(file_names, dir_names) -> bool:
    """Whether a directory holding these files and subdirectories is one partition's rather than a
    log-dirs root: it holds a segment's .log named by its offset, and is no log dir's root (a
    root holds directories named as partitions, or a broker's meta.properties, whatever files
    stand beside them). The one rule of every command (through storage.layout.logdir and
    storage.change.lock.log_root) and of the Spark source."""
    file_names = list(file_names)
    if is_log_dir_listing(file_names, dir_names):
        return False
    return any(is_segment_log(name) for name in file_names)


# What a broker writes at each log dir's root, never in a partition directory.
LOG_DIR_FILES = ("meta.properties",)


def is_log_dir_listing(file_names, dir_names) -> bool:
    """Whether a directory holding these files and subdirectories is a log dir's root: it holds a
    directory named as a partition's, or the meta.properties a broker writes there. One such
    found among a root's partitions (`/data/kafka-logs-1` in `/data`) is a log dir of its own,
    not a partition, whatever its name says."""
    return any(parse_partition_dir(name) is not None for name in dir_names) or \
        any(name in LOG_DIR_FILES for name in file_names)


METADATA_TOPIC = "__cluster_metadata"


def not_cleaned(topic: str) -> str | None:
    """Why Kafka's log cleaner and retention never touch a topic's partitions, or None: the KRaft
    metadata log's controller deletes only what its snapshots cover, and its records have no keys
    (compacted, every one of them would go; past retention.ms, the state after the latest
    snapshot with them)."""
    if topic == METADATA_TOPIC:
        return ("the KRaft metadata log is not cleaned by retention or compaction: its controller deletes only the "
                "segments its snapshots cover")
    return None


def is_transient(file_name: str) -> bool:
    """Files Kafka removes or renames at load time, which readers must not take for segments."""
    return file_name.endswith(TRANSIENT_SUFFIXES)


SEGMENT_SUFFIXES = (LOG, INDEX, TIME_INDEX, TXN_INDEX)


@dataclass
class PartitionFiles:
    """The files of a partition directory by role, as Kafka's loader sorts them (names only)."""
    segments: dict[int, dict[str, str]]  # base offset -> suffix -> file name, for segments with a .log
    snapshots: dict[int, str]  # offset -> file name
    skipped: list[tuple[str, str]]  # file name, why it is passed over


def sort_partition_files(file_names) -> PartitionFiles:
    """Segment files by base offset, snapshots by offset, and what is passed over: files in flight,
    names that are not offsets, indexes without a .log. Other files are not Kafka's to read."""
    out = PartitionFiles({}, {}, [])
    found: dict[int, dict[str, str]] = {}
    for name in sorted(file_names):
        if is_transient(name):
            out.skipped.append((name, "in flight (Kafka removes or renames it at load)"))
            continue
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        if suffix not in SEGMENT_SUFFIXES and suffix != SNAPSHOT:
            continue
        try:
            offset = offset_from_name(name)
        except ValueError:
            out.skipped.append((name, "name is not a 20-digit offset"))
            continue
        if suffix == SNAPSHOT:
            out.snapshots[offset] = name
        else:
            found.setdefault(offset, {})[suffix] = name
    for base in sorted(found):
        files = found[base]
        if LOG in files:
            out.segments[base] = files
        else:
            orphan = next(files[s] for s in SEGMENT_SUFFIXES if s in files)
            out.skipped.append((orphan, "index without a .log (orphan)"))
    return out


LOG_DIR_INSIDE = ("a log dir of its own (it holds partition directories or meta.properties), not a partition: "
                  "name it to read its partitions")


def partition_dir_skip(parsed: PartitionDir | None, listing=None) -> str | None:
    """Why a directory of a log-dirs root is not read as a partition, or None when it is;
    `listing`, its (file names, directory names) when known, tells a log dir named as a
    partition (see is_log_dir_listing)."""
    if parsed is None:
        return "not a partition directory"
    if parsed.kind != "live":
        return f"{parsed.kind} replica directory (not live data)"
    if listing is not None and is_log_dir_listing(*listing):
        return LOG_DIR_INSIDE
    return None


def first_offset_in(path) -> int:
    """The base offset of the first batch of a .log file, from its first 8 bytes (a v2 batch's
    base offset; a legacy entry's own offset), or 0 for a file too short to hold one."""
    with open_regular(path) as f:
        head = read_at(f, 0, 8, path)
    return first_offset_of(head)


def first_offset_of(data: bytes) -> int:
    """`first_offset_in` for the bytes of a segment."""
    return max(int.from_bytes(data[:8], "big", signed=True), 0) if len(data) >= 8 else 0


KRAFT_SNAPSHOT = ".checkpoint"
_KRAFT_SNAPSHOT = re.compile(r"^(?P<offset>\d{20})-(?P<epoch>\d{10})\.checkpoint$")


def kraft_snapshot_id(file_name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot named as Kafka names them
    (`<20-digit end offset>-<10-digit epoch>.checkpoint`); None for any other name, including
    snapshots being written (`.checkpoint.part`) or deleted (`.checkpoint.deleted`)."""
    m = _KRAFT_SNAPSHOT.match(file_name)
    return (int(m["offset"]), int(m["epoch"])) if m else None


def is_legal_topic(name: str) -> bool:
    """Whether Kafka accepts `name` as a topic: 1 to 249 of its characters, and not '.' or '..'."""
    return re.fullmatch(rf"{TOPIC_CHARS}{{1,{MAX_TOPIC_LENGTH}}}", name) is not None and name not in (".", "..")
