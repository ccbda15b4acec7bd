"""Snappy in snappy-java's (xerial) stream framing, with the raw-block fallback Kafka accepts."""
from __future__ import annotations

import struct

import cramjam

from ..errors import CompressionError, LimitExceededError

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_MAGIC_WORD = struct.unpack(">i", XERIAL_MAGIC[:4])[0]
BLOCK_SIZE = 32 * 1024
MAX_CHUNK = 512 * 1024 * 1024


def _raw_length(block) -> int:
    """The uncompressed length a raw Snappy block declares in its leading varint."""
    value = shift = 0
    for i in range(min(5, len(block))):
        b = block[i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value
        shift += 7
    raise CompressionError("snappy: bad block length")


def _raw_block(block, budget: int) -> bytes:
    if _raw_length(block) > budget:
        raise LimitExceededError("snappy: decompressed size exceeds the limit")
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as e:  # cramjam raises its own DecompressionError type
        raise CompressionError(f"snappy: {e}") from None


def decompress(data, limit: int, magic: int = 2) -> bytes:
    data = memoryview(data).cast("B")  # chunks are read in place, not copied
    if not data:
        raise CompressionError("snappy: cannot decompress empty stream")
    if len(data) < 16 or data[:8] != XERIAL_MAGIC:
        return _raw_block(data, limit)
    chunks, total = [], 0
    pos = 16
    while pos < len(data):
        if pos + 4 > len(data):
            raise CompressionError("snappy: stream ends inside a chunk length")
        (n,) = struct.unpack_from(">i", data, pos)
        if n == _MAGIC_WORD and data[pos:pos + 8] == XERIAL_MAGIC:
            pos += 16  # a concatenated stream's header
            continue
        pos += 4
        if n < 0 or n > MAX_CHUNK:
            raise CompressionError(f"snappy: invalid chunk length {n}")
        if pos + n > len(data):
            raise CompressionError("snappy: stream ends inside a chunk")
        chunks.append(_raw_block(data[pos:pos + n], limit - total))
        total += len(chunks[-1])
        pos += n
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def compress(data: bytes, magic: int = 2) -> bytes:
    out = bytearray(XERIAL_HEADER)
    for i in range(0, len(data), BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[i:i + BLOCK_SIZE]))
        out += struct.pack(">i", len(block))
        out += block
    return bytes(out)
