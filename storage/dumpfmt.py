"""The lines Kafka 3.x's kafka-dump-log prints (DumpLogSegments), so outputs can be diffed."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from kafkacodec.records import TIMESTAMP_TYPES, Batch, read_batches
from kafkacodec.runtime.errors import DecodeError

from . import index
from .names import offset_from_name

INT_MAX = 2 ** 31 - 1


def _bool(value) -> str:
    return "true" if value else "false"


def _sequence(base: int, delta: int) -> int:
    """Producer sequences wrap past Integer.MAX_VALUE to 0; -1 means none."""
    if base < 0:
        return -1
    return base + delta - INT_MAX - 1 if base > INT_MAX - delta else base + delta


def batch_line(batch: Batch) -> str:
    e = batch.entry
    if batch.is_legacy:
        m = e.message
        return (f"offset: {e.offset} position: {batch.position} {TIMESTAMP_TYPES[int(m.timestamp_type)]}: "
                f"{-1 if m.magic == 0 else m.timestamp} size: {batch.size} magic: {m.magic} "
                f"compresscodec: {batch.compression} crc: {m.crc} isvalid: {_bool(m.crc_valid)}")
    horizon = f"OptionalLong[{e.base_timestamp}]" if e.has_delete_horizon else "OptionalLong.empty"
    return (f"baseOffset: {e.base_offset} lastOffset: {e.last_offset} count: {e.records_count} "
            f"baseSequence: {e.base_sequence} lastSequence: {_sequence(e.base_sequence, e.last_offset_delta)} "
            f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
            f"partitionLeaderEpoch: {e.partition_leader_epoch} isTransactional: {_bool(e.is_transactional)} "
            f"isControl: {_bool(e.is_control)} deleteHorizonMs: {horizon} position: {batch.position} "
            f"{TIMESTAMP_TYPES[int(e.timestamp_type)]}: {e.max_timestamp} size: {batch.size} magic: {e.magic} "
            f"compresscodec: {batch.compression} crc: {e.crc} isvalid: {_bool(e.crc_valid)}")


def _text(data: bytes) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _control(record) -> str:
    key, value = record.key or b"", record.value or b""
    if len(key) < 4:
        return " controlType: UNKNOWN(-1)"
    kind = int.from_bytes(key[2:4], "big", signed=True)
    if kind in (0, 1) and len(value) >= 6:
        return f" endTxnMarker: {'ABORT' if kind == 0 else 'COMMIT'} coordinatorEpoch: " \
               f"{int.from_bytes(value[2:6], 'big', signed=True)}"
    names = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
    return f" controlType: {names.get(kind, 'UNKNOWN')}({kind if kind in names else -1})"


def record_lines(batch: Batch, print_data: bool) -> Iterator[str]:
    e = batch.entry
    if batch.is_legacy:
        m = e.message
        messages = [x.message for x in m.value.entries] if m.compression else [m]
        for record, msg in zip(batch, messages):
            line = (f"| offset: {record.offset} {TIMESTAMP_TYPES[record.timestamp_type]}: {record.timestamp} "
                    f"keySize: {-1 if record.key is None else len(record.key)} "
                    f"valueSize: {-1 if record.value is None else len(record.value)} "
                    f"isValid: {_bool(msg.crc_valid)} crc: {msg.crc}}}")  # the stray '}' is Kafka's
            yield line + _data(record, print_data)
        return
    ts_type = TIMESTAMP_TYPES[int(e.timestamp_type)]
    for record in batch:
        line = (f"| offset: {record.offset} {ts_type}: {record.timestamp} "
                f"keySize: {-1 if record.key is None else len(record.key)} "
                f"valueSize: {-1 if record.value is None else len(record.value)} "
                f"sequence: {_sequence(e.base_sequence, record.offset_delta)} "
                f"headerKeys: [{','.join(h.key for h in record.headers)}]")
        if e.is_control:
            yield line + _control(record)  # never the data of a control record
        else:
            yield line + _data(record, print_data)


def _data(record, print_data: bool) -> str:
    if not print_data:
        return ""
    return (f" key: {_text(record.key)}" if record.key is not None else "") + \
           (f" payload: {_text(record.value)}" if record.value is not None else "")


def dump_log(path: Path, shown_as: str, deep: bool, print_data: bool, max_bytes: int | None,
             damage: list | None = None) -> Iterator[str]:
    """The lines for a .log; the first damage found, if any, is appended to `damage`."""
    data = path.read_bytes()
    yield f"Dumping {shown_as}"
    yield f"Log starting offset: {offset_from_name(path.name)}"
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    valid = 0
    try:
        for batch in read_batches(data, end=end, verify=False):
            valid = batch.position + batch.size
            yield batch_line(batch)
            if deep or print_data:
                yield from record_lines(batch, print_data)
    except DecodeError as err:  # what follows the valid batches counts as invalid bytes, as in Kafka
        if damage is not None:
            err.file = err.file or shown_as
            damage.append(err)
    if max_bytes is None and valid < len(data):
        yield f"Found {len(data) - valid} invalid bytes at the end of {path.name}"


def dump_index(path: Path, shown_as: str) -> Iterator[str]:
    base = offset_from_name(path.name)
    yield f"Dumping {shown_as}"
    if path.suffix == ".index":
        entries = index.read_offset_index(path.read_bytes(), base)
        lines = [f"offset: {e.offset} position: {e.position}" for e in entries]
    else:
        times = index.read_time_index(path.read_bytes(), base)
        lines = [f"timestamp: {e.timestamp} offset: {e.offset}" for e in times]
    if not lines:
        yield f"{shown_as} is empty."
    yield from lines
