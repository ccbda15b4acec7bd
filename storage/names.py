"""Names of Kafka's log directories and files, and which of them a reader must pass over."""
from __future__ import annotations

import re
from dataclasses import dataclass

SEGMENT_DIGITS = 20
LOG, INDEX, TIME_INDEX, TXN_INDEX, SNAPSHOT = ".log", ".index", ".timeindex", ".txnindex", ".snapshot"
# Suffixes of files in flight: deletion pending, cleaner output being built, ready to swap in.
TRANSIENT_SUFFIXES = (".deleted", ".cleaned", ".swap")

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


def is_transient(file_name: str) -> bool:
    """Files Kafka removes or renames at load time, which readers must not take for segments."""
    return file_name.endswith(TRANSIENT_SUFFIXES)
