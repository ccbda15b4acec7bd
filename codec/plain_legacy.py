"""v0/v1 messages read straight into records, without entry objects: the Python twins of the
compiled kernels (runtime/_facade.pyx), used when they are not built. Each reads only what is
regular (uncompressed messages, well framed, CRCs matching when checked) and leaves the rest to
the generated reader, which names what is wrong; the kernels and these give the same batches.
"""
from __future__ import annotations

import struct
import zlib

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from .attribute_bits import COMPRESSION, TIMESTAMP_TYPE_AT
from .places import LEGACY_MIN_MESSAGE, LOG_OVERHEAD, SIZE_AT, layout_end

_HEAD = struct.Struct(">qiIBB")  # offset, message size, crc, magic, attributes
_INT32 = struct.Struct(">i")
_TIMESTAMP_KEY_LENGTH = struct.Struct(">qi")
# in the message (after the entry's LOG_OVERHEAD), where its CRC starts counting and where its
# fixed fields end, from the schema's LAYOUT
_CRC_FROM, _ = LegacyLogEntry.LegacyMessage.LAYOUT["magic"]
_FIXED = layout_end(LegacyLogEntry.LegacyMessage.LAYOUT)
_MIN_ENTRY = LOG_OVERHEAD + LEGACY_MIN_MESSAGE
_V0_KEY_AT, _V1_KEY_AT = _FIXED + _INT32.size, _FIXED + _TIMESTAMP_KEY_LENGTH.size  # after the key's length
if _HEAD.size != LOG_OVERHEAD + _FIXED:
    raise ImportError("the legacy entry's leading fields are not those _HEAD reads")
_batch_cls = _record_cls = None


def bind_facade(batch_cls: type, record_cls: type) -> None:
    """Name the classes of batches and records to make (the facade's)."""
    global _batch_cls, _record_cls
    _batch_cls, _record_cls = batch_cls, record_cls


def _plain_entry(buf: bytes, pos: int, end: int, verify: bool):
    """(end, offset, magic, attributes, timestamp, key, value) of the log entry at `pos` holding
    one uncompressed v0/v1 message; None for anything else."""
    if end - pos < _MIN_ENTRY:
        return None
    offset, size, crc, magic, attributes = _HEAD.unpack_from(buf, pos)
    if size < LEGACY_MIN_MESSAGE or size > end - pos - LOG_OVERHEAD or magic > 1 or attributes & COMPRESSION:
        return None
    start, stop = pos + LOG_OVERHEAD, pos + LOG_OVERHEAD + size
    if magic:
        if size < _V1_KEY_AT:
            return None
        timestamp, key_length = _TIMESTAMP_KEY_LENGTH.unpack_from(buf, start + _FIXED)
        q = start + _V1_KEY_AT
    else:
        key_length, = _INT32.unpack_from(buf, start + _FIXED)
        timestamp, q = -1, start + _V0_KEY_AT
    if key_length >= 0:
        if key_length > stop - q:
            return None
        key = buf[q:q + key_length]
        q += key_length
    else:
        key = None
    if q + 4 > stop:
        return None
    value_length, = _INT32.unpack_from(buf, q)
    q += 4
    if (q + value_length if value_length >= 0 else q) != stop:  # the value ends the message
        return None
    if verify and zlib.crc32(buf[start + _CRC_FROM:stop]) != crc:
        return None
    return stop, offset, magic, attributes, timestamp, key, buf[q:stop] if value_length >= 0 else None


def legacy_plain_entries(buf: bytes, pos: int, end: int, verify: bool, max_batch_bytes: int, max_entries: int):
    """What the kernel of this name does: (batches, position after them)."""
    out = []
    new_batch, new_record = _batch_cls.__new__, _record_cls
    while pos < end and len(out) < max_entries:
        if end - pos >= LOG_OVERHEAD and _INT32.unpack_from(buf, pos + SIZE_AT)[0] > max_batch_bytes:
            break
        found = _plain_entry(buf, pos, end, verify)
        if found is None:
            break
        after, offset, magic, attributes, timestamp, key, value = found
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
                for _, offset, _, _, _, key, value in found]
    return [new_record(key, value, timestamp, base + offset, [], (attributes >> TIMESTAMP_TYPE_AT) & 1) if magic
            else new_record(key, value, -1, base + offset, [], -1)
            for _, offset, magic, attributes, timestamp, key, value in found]
