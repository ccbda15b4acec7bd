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


def bind_facade(batch_cls: type, record_cls: type) -> None:
    """Name the classes of batches and records to make (the facade's)."""
    global _batch_cls, _record_cls
    _batch_cls, _record_cls = batch_cls, record_cls


def _plain_entry(buf: bytes, pos: int, end: int, verify: bool):
    """(end, offset, magic, attributes, timestamp, key, value) of the log entry at `pos` holding
    one uncompressed v0/v1 message; None for anything else."""
    found = _READ(buf, pos, end)
    if found is None:
        return None
    stop, f = found
    attributes = f[_ATTRIBUTES]
    if attributes & COMPRESSION:
        return None
    if verify and zlib.crc32(buf[f[_CRC_FROM]:f[_CRC_END]]) != f[_CRC]:
        return None
    key = buf[f[_KEY]:f[_KEY] + f[_KEY_SIZE]] if f[_KEY_SIZE] >= 0 else None
    value = buf[f[_VALUE]:f[_VALUE] + f[_VALUE_SIZE]] if f[_VALUE_SIZE] >= 0 else None
    return (stop, f[_OFFSET], f[_MAGIC], attributes, f[_TIMESTAMP] if f[_TIMESTAMP_PRESENT] else -1, key, value,
            f[_SIZE])


def legacy_plain_entries(buf: bytes, pos: int, end: int, verify: bool, max_batch_bytes: int, max_entries: int):
    """What the kernel of this name does: (batches, position after them)."""
    out = []
    new_batch, new_record = _batch_cls.__new__, _record_cls
    while pos < end and len(out) < max_entries:
        found = _plain_entry(buf, pos, end, verify)
        if found is None or found[-1] > max_batch_bytes:  # the Python reader names it
            break
        after, offset, magic, attributes, timestamp, key, value, _ = found
        batch = new_batch(_batch_cls)
        batch._entry, batch.position, batch.size, batch.verify = None, pos, after - pos, verify
        batch._buffer, batch._at = buf, pos
        batch._record = new_record(key, value, timestamp, offset, [],
                                   (attributes >> TIMESTAMP_TYPE_AT) & 1 if magic else -1)
        out.append(batch)
        pos = after
    return out, pos


def legacy_wrapped_records(data, wrapper_offset: int, wrapper_magic: int, append_time: int, log_append: bool,
                           verify: bool):
    """What the kernel of this name does: the records, or None."""
    data = bytes(data)
    found, pos, end = [], 0, len(data)
    while pos < end:
        entry = _plain_entry(data, pos, end, verify)
        if entry is None:
            return None
        found.append(entry)
        pos = entry[0]
    if not found:
        return None
    base = 0
    if wrapper_magic >= 1 and wrapper_offset != 0:  # inner offsets relative to the first
        base = wrapper_offset - found[-1][1]
        if base < 0:
            return None
    new_record = _record_cls
    if log_append:
        return [new_record(key, value, append_time, base + offset, [], 1)
                for _, offset, _, _, _, key, value, _ in found]
    return [new_record(key, value, timestamp, base + offset, [], (attributes >> TIMESTAMP_TYPE_AT) & 1) if magic
            else new_record(key, value, -1, base + offset, [], -1)
            for _, offset, magic, attributes, timestamp, key, value, _ in found]
