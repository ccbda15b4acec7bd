"""A batch larger than the recovery scan's window, checked as the scan checks one it holds (the
magic, the sizes of a legacy message's key and value, the CRC) without holding it: its header and
length fields come from small reads, the CRC from the rest read in chunks. The scan's memory so
stays bounded whatever the size of a batch. Errors are those the generated readers raise, with
positions in the file."""
from __future__ import annotations

import struct
import zlib
from typing import Callable

import crc32c

from kafkacodec.runtime.errors import ChecksumError, InvalidValueError, TruncatedError
from kafkacodec.runtime.support import short

from kafkacodec.codec.places import (LEGACY, LEGACY_CRC_AT, LEGACY_CRC_FROM, LEGACY_HEADER, LEGACY_TIMESTAMP,
                                     MAGIC_AT, V2, V2_CRC_FROM, V2_HEADER, layout_struct)

# the header fields the checks need, each read at its place in the schema's layout
_V2 = layout_struct(V2, {"base_offset": "q", "magic": "b", "crc": "I", "last_offset_delta": "i",
                         "max_timestamp": "q"})
_LEGACY = layout_struct(LEGACY, {"offset": "q", "crc": "I", "magic": "b", "attributes": "B"})
_INT32, _INT64 = struct.Struct(">i"), struct.Struct(">q")
_, _TIMESTAMP_WIDTH = LEGACY_TIMESTAMP["timestamp"]

Read = Callable[[int, int], bytes]  # (position, n) -> up to n bytes of the file at position


def _exactly(read: Read, pos: int, n: int, start: int, size: int) -> bytes:
    data = read(pos, n)
    if len(data) < n:  # the file shrank while the batch was read
        raise TruncatedError(f"batch of {size} bytes extends past the end of the file "
                             f"({pos + len(data) - start} bytes left)", start, "log")
    return data


def _crc(read: Read, start: int, stop: int, update, batch: int, size: int, chunk_bytes: int) -> int:
    value, pos = 0, start
    while pos < stop:
        chunk = _exactly(read, pos, min(chunk_bytes, stop - pos), batch, size)
        value = update(chunk, value)
        pos += len(chunk)
    return value


def check_large_batch(read: Read, pos: int, size: int, verify: bool, chunk_bytes: int) -> tuple[int, int, int]:
    """(magic, last offset, largest timestamp) of the batch of `size` bytes (offset and size
    fields included, checked by the framing already) at `pos`, the CRC computed `chunk_bytes` at a
    time; a DecodeError where it is invalid."""
    magic = _exactly(read, pos + MAGIC_AT, 1, pos, size)[0]
    if magic < 2:
        return _legacy(read, pos, size, verify, chunk_bytes)
    base_offset, signed_magic, stored, last_delta, max_timestamp = _V2.unpack_from(
        _exactly(read, pos, V2_HEADER, pos, size))
    if signed_magic != 2:
        raise InvalidValueError(f"value {signed_magic} must be 2", pos + MAGIC_AT, "record_batch/magic")
    if verify:
        computed = _crc(read, pos + V2_CRC_FROM, pos + size, crc32c.crc32c, pos, size, chunk_bytes)
        if computed != stored:
            raise ChecksumError(f"stored crc = {stored}, computed crc = {computed}", pos, "record_batch/crc",
                                stored=stored, computed=computed)
    return 2, base_offset + last_delta, max_timestamp


def _legacy(read: Read, pos: int, size: int, verify: bool, chunk_bytes: int) -> tuple[int, int, int]:
    """A v0/v1 entry: offset, size, then the message: crc, magic, attributes, [timestamp], key
    length and key, value length and value, which must end where the size says."""
    offset, stored, magic, _ = _LEGACY.unpack_from(_exactly(read, pos, LEGACY_HEADER, pos, size))
    path = "legacy_log_entry/legacy_message"
    if magic not in (0, 1):
        raise InvalidValueError(f"value {magic} must be one of (0, 1)", pos + MAGIC_AT, f"{path}/magic")
    at, end = pos + LEGACY_HEADER, pos + size
    timestamp = -1
    if magic == 1:  # the entry is larger than a window: the fixed fields are there
        timestamp, = _INT64.unpack(_exactly(read, at, _TIMESTAMP_WIDTH, pos, size))
        at += _TIMESTAMP_WIDTH
    for name in ("key", "value"):
        if end - at < 4:
            raise TruncatedError(f"needs 4 bytes, {max(0, end - at)} left", at, f"{path}/{name}_length")
        length, = _INT32.unpack(_exactly(read, at, 4, pos, size))
        at += 4
        if length > end - at:
            raise short(at, end, length, f"{path}/{name}")
        at += max(length, 0)  # -1 is null
    if at != end:
        raise InvalidValueError(f"{end - at} bytes left unread at the end of the field", at, "legacy_log_entry/message")
    if verify:
        computed = _crc(read, pos + LEGACY_CRC_FROM, end, zlib.crc32, pos, size, chunk_bytes)
        if computed != stored:
            raise ChecksumError(f"stored crc = {stored}, computed crc = {computed}", pos + LEGACY_CRC_AT, f"{path}/crc",
                                stored=stored, computed=computed)
    return magic, offset, -1 if magic == 0 else timestamp
