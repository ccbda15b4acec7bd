"""Kafka's LZ4 frame (Lz4BlockOutputStream): 64 KiB independent blocks, no checksums written.

Magic 0 writers hash magic+FLG+BD into the header checksum by mistake, so the checksum is
written that way for magic 0 and not verified when reading magic 0, as Kafka does.
"""
from __future__ import annotations

import struct

import lz4.block
from xxhash import xxh32_intdigest as xxh32

from ..errors import CompressionError, LimitExceededError

MAGIC = b"\x04\x22\x4d\x18"
FLG = 0x60  # version 01, independent blocks
BD = 0x40  # 64 KiB maximum block size
BLOCK_SIZE = 64 * 1024


def _header_checksum(frame: bytes, descriptor_end: int, magic: int) -> int:
    start = 0 if magic == 0 else 4
    return (xxh32(frame[start:descriptor_end]) >> 8) & 0xFF


def decompress(data, limit: int, magic: int = 2) -> bytes:
    data = memoryview(data).cast("B")  # blocks are read in place, not copied
    n = len(data)
    if n < 7 or data[:4] != MAGIC:
        raise CompressionError("lz4: stream unsupported (invalid magic bytes)")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise CompressionError("lz4: unsupported frame version")
    if flg & 0x03 or bd & 0x8F:
        raise CompressionError("lz4: reserved bits set in the frame descriptor")
    if not flg & 0x20:
        raise CompressionError("lz4: dependent block stream is unsupported")
    block_checksum, content_size = flg & 0x10, flg & 0x08
    code = (bd >> 4) & 0x07
    if code < 4:
        raise CompressionError(f"lz4: unsupported block size code {code}")
    max_block = 1 << (2 * code + 8)
    pos = 6 + (8 if content_size else 0)
    if pos >= n:
        raise CompressionError("lz4: stream ended prematurely")
    if magic != 0 and data[pos] != _header_checksum(data, pos, magic):
        raise CompressionError("lz4: stream frame descriptor corrupted")
    pos += 1
    blocks, total = [], 0  # joined once at the end: a batch's records are most often one block
    while True:
        if pos + 4 > n:
            raise CompressionError("lz4: stream ended prematurely")
        (size,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if size == 0:
            break
        stored = size & 0x80000000
        size &= 0x7FFFFFFF
        if size > max_block:
            raise CompressionError(f"lz4: block size {size} exceeded max: {max_block}")
        if pos + size > n:
            raise CompressionError("lz4: stream ended prematurely")
        block = data[pos:pos + size]
        pos += size
        if block_checksum:
            if pos + 4 > n:
                raise CompressionError("lz4: stream ended prematurely")
            if struct.unpack_from("<I", data, pos)[0] != xxh32(block):
                raise CompressionError("lz4: block checksum mismatch")
            pos += 4
        if stored:
            blocks.append(bytes(block))
        else:
            try:
                blocks.append(lz4.block.decompress(block, uncompressed_size=max_block))
            except lz4.block.LZ4BlockError as e:
                raise CompressionError(f"lz4: {e}") from None
        total += len(blocks[-1])
        if total > limit:
            raise LimitExceededError(f"lz4: decompressed size exceeds the limit of {limit} bytes")
    # A content checksum, if flagged, follows the end mark; Kafka reads but does not verify it.
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


def compress(data: bytes, magic: int = 2) -> bytes:
    frame = bytearray(MAGIC)
    frame += bytes((FLG, BD))
    frame.append(_header_checksum(bytes(frame), 6, magic))
    for i in range(0, len(data), BLOCK_SIZE):
        raw = data[i:i + BLOCK_SIZE]
        block = lz4.block.compress(raw, store_size=False)
        if len(block) >= len(raw):
            frame += struct.pack("<I", len(raw) | 0x80000000)
            frame += raw
        else:
            frame += struct.pack("<I", len(block))
            frame += block
    frame += b"\x00\x00\x00\x00"
    return bytes(frame)
