"""Kafka's small text files: offset checkpoints, the leader-epoch checkpoint, partition.metadata
and meta.properties. Readers raise InvalidValueError naming the file and line, as Kafka would
refuse the file."""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

from kafkacodec.runtime.errors import InvalidValueError

from .files import write_atomically

OFFSET_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"


def _bad(path, line_no: int | None, message: str) -> InvalidValueError:
    return InvalidValueError(message + (f" (line {line_no})" if line_no else ""), None, None, str(path))


def read_checkpoint(path: str | Path, version: int = 0, fields: int = 3) -> list[list[str]]:
    """Entries of a CheckpointFile: a version line, a count line, then one entry per line."""
    text = Path(path).read_text(encoding="utf-8")
    if not text.strip():
        return []  # an empty file means no entries
    lines = text.splitlines()
    if lines[0].strip() != str(version):
        raise _bad(path, 1, f"unrecognised version: {lines[0].strip()!r}")
    if len(lines) < 2 or not re.fullmatch(r"\d+", lines[1].strip()):
        raise _bad(path, 2, "malformed entry count")
    expected = int(lines[1])
    entries = []
    for n, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != fields:
            raise _bad(path, n, f"malformed line in checkpoint file: {line!r}")
        entries.append(parts)
    if len(entries) != expected:
        raise _bad(path, None, f"expected {expected} entries in checkpoint file, but found only {len(entries)}")
    return entries


def read_offset_checkpoint(path: str | Path) -> dict[tuple[str, int], int]:
    """`topic partition offset` entries as {(topic, partition): offset}."""
    out = {}
    for n, (topic, partition, offset) in enumerate(read_checkpoint(path), start=3):
        try:
            out[(topic, int(partition))] = int(offset)
        except ValueError:
            raise _bad(path, n, f"malformed line in checkpoint file: {topic} {partition} {offset}") from None
    return out


def read_leader_epoch_checkpoint(path: str | Path) -> list[tuple[int, int]]:
    """`epoch startOffset` entries in file order."""
    try:
        return [(int(epoch), int(start)) for epoch, start in read_checkpoint(path, fields=2)]
    except ValueError:
        raise _bad(path, None, "malformed leader epoch entry") from None


def write_checkpoint(path: str | Path, entries: list[list[object]], version: int = 0) -> None:
    """Write to `<file>.tmp` and rename into place, as Kafka does."""
    lines = [str(version), str(len(entries))] + [" ".join(map(str, e)) for e in entries]
    write_atomically(path, "\n".join(lines) + "\n")


@dataclass(frozen=True)
class PartitionMetadata:
    version: int
    topic_id: str  # Kafka's base64 (URL-safe, unpadded) form


def read_partition_metadata(path: str | Path) -> PartitionMetadata:
    fields = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = re.split(r":\s+", line, maxsplit=1)  # Kafka splits each line on ":\s+"
        if len(parts) != 2:
            raise _bad(path, n, f"malformed line {line!r}")
        fields[parts[0]] = parts[1]
    try:
        version = int(fields["version"])
        topic_id = fields["topic_id"]
    except (KeyError, ValueError):
        raise _bad(path, None, "partition.metadata needs 'version' and 'topic_id'") from None
    if version < 0:
        raise _bad(path, 1, f"invalid version {version}")
    try:
        raw = base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise _bad(path, 2, f"topic_id {topic_id!r} is not a base64 UUID")
    if raw == bytes(16):
        raise _bad(path, 2, "topic_id is the zero UUID")
    return PartitionMetadata(version, topic_id)


def read_properties(path: str | Path) -> dict[str, str]:
    """meta.properties as java.util.Properties.store writes it: comments, then key=value lines
    (':' or whitespace may also separate, as Properties.load accepts)."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]?\s*(.*)$", line)
        out[m.group(1)] = m.group(2)
    return out
