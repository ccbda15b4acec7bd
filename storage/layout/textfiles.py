"""Kafka's small text files: offset checkpoints, the leader-epoch checkpoint, partition.metadata
and meta.properties. Readers raise InvalidValueError naming the file and line, as Kafka would
refuse the file (bytes that do not decode, counts beyond the lines there, negative or out-of-range
numbers), and a FileProblem for a file that is not a small regular file."""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from kafkacodec.runtime.errors import InvalidValueError

from ..diskio.durable import write_atomically
from ..diskio.safeio import read_bounded

OFFSET_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                      "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"
# Kafka's own are a few KiB; a file this large is not one of them, and is not read into memory.
MAX_TEXT_FILE_BYTES = 64 << 20
INT32_MAX, INT64_MAX = 2 ** 31 - 1, 2 ** 63 - 1
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_JAVA_SPACE = " \t\x0b\f"  # what Java's \s matches, less the line breaks
_FIELD_SEPARATOR = re.compile(f"[{_JAVA_SPACE}]+")


def _bad(path, line_no: int | None, message: str) -> InvalidValueError:
    return InvalidValueError(message + (f" (line {line_no})" if line_no else ""), None, None, str(path))


def _clip(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _read_lines(path: str | Path, encoding: str = "utf-8") -> list[str]:
    """The file's lines as Java's readLine splits them (on \\n, \\r or \\r\\n); a FileProblem for a
    file that is not a small regular file, an InvalidValueError naming the line of a byte that
    does not decode."""
    data = read_bounded(path, MAX_TEXT_FILE_BYTES, "text file")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        raise _bad(path, data.count(b"\n", 0, err.start) + 1, f"byte {err.start} is not {encoding} text") from None
    return _LINE_BREAK.split(text)


def _number(path, line_no: int, text: str, what: str, high: int) -> int:
    """A decimal field of at most `high`, refused (negative, not a number, too large) with its line."""
    if not re.fullmatch(r"-?[0-9]+", text):
        why = "is not a number"
    elif text.startswith("-"):
        why = "is negative"
    elif len(text.lstrip("0")) > len(str(high)) or int(text) > high:
        why = f"is larger than {high}"
    else:
        return int(text)
    raise _bad(path, line_no, f"malformed line in checkpoint file: {what} {_clip(text)} {why}")


def _checkpoint_entries(path: str | Path, version: int, fields: int) -> list[tuple[int, list[str]]]:
    """(line number, fields) of each entry of a CheckpointFile: a version line, a count line, then
    one entry per line. The count is checked against the lines there before it is relied on."""
    lines = _read_lines(path)
    if not any(line.strip() for line in lines):
        return []  # an empty file means no entries
    if lines[0].strip() != str(version):
        raise _bad(path, 1, f"unrecognised version: {_clip(lines[0].strip())}")
    if len(lines) < 2 or not re.fullmatch(r"[0-9]+", lines[1].strip()):
        raise _bad(path, 2, "malformed entry count" + (f" {_clip(lines[1].strip())}" if len(lines) > 1 else ""))
    present = sum(1 for line in lines[2:] if line.strip())
    digits = lines[1].strip().lstrip("0") or "0"
    if len(digits) > len(str(present)) or int(digits) > present:  # compared as text first: it may be huge
        shown = digits if len(digits) <= 30 else digits[:27] + "..."
        raise _bad(path, 2, f"expected {shown} entries in checkpoint file, but found only {present}")
    count = int(digits)
    entries = []
    for n, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        parts = _FIELD_SEPARATOR.split(line.strip(_JAVA_SPACE))
        if len(parts) != fields:
            raise _bad(path, n, f"malformed line in checkpoint file: {_clip(line)}")
        entries.append((n, parts))
    if len(entries) != count:
        raise _bad(path, None, f"expected {count} entries in checkpoint file, but found {len(entries)}")
    return entries


def read_checkpoint(path: str | Path, version: int = 0, fields: int = 3) -> list[list[str]]:
    """Entries of a CheckpointFile: a version line, a count line, then one entry per line."""
    return [parts for _, parts in _checkpoint_entries(path, version, fields)]


def read_offset_checkpoint(path: str | Path) -> dict[tuple[str, int], int]:
    """`topic partition offset` entries as {(topic, partition): offset}."""
    out = {}
    for n, (topic, partition, offset) in _checkpoint_entries(path, 0, 3):
        out[(topic, _number(path, n, partition, "partition", INT32_MAX))] = _number(path, n, offset, "offset",
                                                                                    INT64_MAX)
    return out


def read_leader_epoch_checkpoint(path: str | Path) -> list[tuple[int, int]]:
    """`epoch startOffset` entries in file order."""
    return [(_number(path, n, epoch, "leader epoch", INT32_MAX), _number(path, n, start, "start offset", INT64_MAX))
            for n, (epoch, start) in _checkpoint_entries(path, 0, 2)]


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
    for n, line in enumerate(_read_lines(path), start=1):
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
    for line in _read_lines(path, "latin-1"):  # Properties.load reads ISO 8859-1
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]*)\s*[=:\s]?\s*(.*)$", line)  # "=x" is the empty key, as Java reads it
        out[m.group(1)] = m.group(2)
    return out


QUORUM_STATE = "quorum-state"
# QuorumStateData's fields at each data_version: name -> JSON type
QUORUM_STATE_FIELDS = {
    0: {"clusterId": str, "leaderId": int, "leaderEpoch": int, "votedId": int, "appliedOffset": int,
        "currentVoters": (list, type(None))},
    1: {"leaderId": int, "leaderEpoch": int, "votedId": int, "votedDirectoryId": str},
}


def read_quorum_state(path: str | Path) -> dict:
    """A KRaft voter's `quorum-state`: its first line, a JSON object with `data_version` 0 or 1
    and the election state of that version (the leader and epoch it knows, whom it voted for)."""
    line = _read_lines(path)[0]
    try:
        state = json.loads(line)
    except ValueError as err:  # json's errors, and numbers too long to convert
        raise _bad(path, 1, f"not JSON: {err}") from None
    except RecursionError:
        raise _bad(path, 1, "not JSON Kafka writes: nested deeper than Python's JSON reader goes") from None
    if not isinstance(state, dict):
        raise _bad(path, 1, f"not a JSON object: {_clip(line)}")
    version = state.get("data_version")
    if version not in QUORUM_STATE_FIELDS or isinstance(version, bool):
        raise _bad(path, 1, f"data_version {version!r} is not within the supported versions 0 and 1")
    for name, kind in QUORUM_STATE_FIELDS[version].items():
        if name in state and (not isinstance(state[name], kind) or isinstance(state[name], bool)):
            raise _bad(path, 1, f"{name} {_clip(json.dumps(state[name]))} is not of its type")
    return state
