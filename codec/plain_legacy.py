"""v0/v1 messages read straight into records, without entry objects: the Python twins of the
compiled kernels (codec/_facade.pyx), used when they are not built. Each reads entries with
the generated flat reader (LegacyLogEntry._flat), takes only what is regular (uncompressed
messages, CRCs matching when checked) and leaves the rest to the generated reader, which names
what is wrong; the kernels and these give the same batches.
"""
from __future__ import annotations

import zlib

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from .attribute_bits import COMPRESSION, TIMESTAMP_TYPE_AT

_READ = LegacyLogEntry._flat
_SLOT = LegacyLogEntry.FLAT_SLOTS
_OFFSET, _SIZE, _CRC, _CRC_FROM, _CRC_END = (_SLOT["offset"], _SLOT["message_size"], _SLOT["message.crc"],
                                             _SLOT["message.crc.from"], _SLOT["message.crc.end"])
_MAGIC, _ATTRIBUTES = _SLOT["message.magic"], _SLOT["message.attributes"]
_TIMESTAMP, _TIMESTAMP_PRESENT = _SLOT["message.timestamp"], _SLOT["message.timestamp.present"]
_KEY, _KEY_SIZE, _VALUE, _VALUE_SIZE = (_SLOT["message.key"], _SLOT["message.key.size"], _SLOT["message.value"],
                                        _SLOT["message.value.size"])
_batch_cls = _record_cls = None
_new_record = object.__new__


def bind_facade(batch_cls: type, record_cls: type) -> None:
    """Name the classes of batches and records to make (the facade's)."""
    global _batch_cls, _record_cls
    _batch_cls, _record_cls = batch_cls, record_cls


def _plain(buf: bytes, pos: int, end: int, verify: bool, log_append_time: int | None = None):
    """(end, slots, record) of the log entry at `pos` holding one uncompressed v0/v1 message,
    its slots as the flat reader gives them, its record stamped `log_append_time` when given;
    None for anything else."""
    found = _READ(buf, pos, end)
    if found is None:
        return None
    after, f = found
    if f[_ATTRIBUTES] & COMPRESSION or verify and zlib.crc32(buf[f[_CRC_FROM]:f[_CRC_END]]) != f[_CRC]:
        return None
    record = _new_record(_record_cls)  # fields set one by one: cheaper than the dataclass's __init__
    record.key = buf[f[_KEY]:f[_KEY] + f[_KEY_SIZE]] if f[_KEY_SIZE] >= 0 else None
    record.value = buf[f[_VALUE]:f[_VALUE] + f[_VALUE_SIZE]] if f[_VALUE_SIZE] >= 0 else None
    record.offset, record.headers = f[_OFFSET], []
    if log_append_time is not None:
        record.timestamp, record.timestamp_type = log_append_time, 1
    elif f[_MAGIC]:
        record.timestamp = f[_TIMESTAMP] if f[_TIMESTAMP_PRESENT] else -1
        record.timestamp_type = (f[_ATTRIBUTES] >> TIMESTAMP_TYPE_AT) & 1
    else:
        record.timestamp, record.timestamp_type = -1, -1
    return after, f, record


def legacy_plain_entries(buf: bytes, pos: int, end: int, verify: bool, max_batch_bytes: int, max_entries: int):
    """What the kernel of this name does: (batches, position after them)."""
    out = []
    new_batch = _batch_cls.__new__
    while pos < end and len(out) < max_entries:
        found = _plain(buf, pos, end, verify)
        if found is None or found[1][_SIZE] > max_batch_bytes:  # the Python reader names it
            break
        after, _, record = found
        batch = new_batch(_batch_cls)
        batch._entry, batch.position, batch.size, batch.verify = None, pos, after - pos, verify
        batch._buffer, batch._at, batch._record = buf, pos, record
        out.append(batch)
        pos = after
    return out, pos


def legacy_wrapped_records(data, wrapper_offset: int, wrapper_magic: int, append_time: int, log_append: bool,
                           verify: bool):
    """What the kernel of this name does: the records, or None."""
    data = bytes(data)
    stamp = append_time if log_append else None
    out, pos, end, last = [], 0, len(data), 0
    while pos < end:  # offsets as stored: the base is known only at the last message
        found = _plain(data, pos, end, verify, stamp)
        if found is None:
            return None
        pos, _, record = found
        last = record.offset
        out.append(record)
    if not out:
        return None
    if wrapper_magic >= 1 and wrapper_offset != 0:  # inner offsets relative to the first
        base = wrapper_offset - last
        if base < 0:
            return None
        for record in out:
            record.offset += base
    return out
