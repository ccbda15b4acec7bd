"""gzip (RFC 1952), concatenated members accepted as java.util.zip.GZIPInputStream does."""
from __future__ import annotations

import zlib

from ..errors import CompressionError, LimitExceededError

_CHUNK = 1 << 16


def decompress(data, limit: int, magic: int = 2) -> bytes:
    out = bytearray()
    rest = bytes(data)
    if not rest:
        raise CompressionError("gzip: empty stream")
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk = rest
        try:
            while True:
                piece = d.decompress(chunk, _CHUNK)
                out += piece
                if len(out) > limit:
                    raise LimitExceededError(f"gzip: decompressed size exceeds the limit of {limit} bytes")
                chunk = d.unconsumed_tail
                if d.eof or (not chunk and not piece):
                    break
        except zlib.error as e:
            raise CompressionError(f"gzip: {e}") from None
        if not d.eof:
            raise CompressionError("gzip: stream ends before the end of the member")
        rest = d.unused_data
    return bytes(out)


def compress(data: bytes, magic: int = 2, level: int = 6) -> bytes:
    # mtime 0 keeps output deterministic; zlib's gzip header differs from Java's only in the OS byte.
    c = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()
