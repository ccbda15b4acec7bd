"""Zstandard frames: a single frame that declares its size (as producers write them) in one step,
within the limit; any other input fed in small steps, so frames without a content size, several
frames or damage stay bounded too."""
from __future__ import annotations

import threading

import zstandard

from ..errors import CompressionError, LimitExceededError

# At most ~128 KiB of output per 4 input bytes (an RLE block), so 256-byte steps bound each
# step's output to a few MiB before the limit is checked.
_STEP = 256


_LOCAL = threading.local()  # a decompression context per thread: making one costs more than a batch


def _context() -> zstandard.ZstdDecompressor:
    dctx = getattr(_LOCAL, "dctx", None)
    if dctx is None:
        dctx = _LOCAL.dctx = zstandard.ZstdDecompressor()
    return dctx


def decompress(data, limit: int, magic: int = 2) -> bytes:
    if magic < 2:
        raise CompressionError(f"zstd is not valid for magic {magic}")
    rest = bytes(data)
    if not rest:
        raise CompressionError("zstd: empty stream")
    dctx = _context()
    try:
        if 0 <= zstandard.frame_content_size(rest) <= limit:  # one frame whose size is known: in one step
            return dctx.decompress(rest, allow_extra_data=False)
    except zstandard.ZstdError:
        pass  # more frames, or damage: the steps below read them, or name it
    out = bytearray()
    try:
        while rest:
            d = dctx.decompressobj()
            pos = 0
            while not d.eof and pos < len(rest):
                out += d.decompress(rest[pos:pos + _STEP])
                pos += _STEP
                if len(out) > limit:
                    raise LimitExceededError(f"zstd: decompressed size exceeds the limit of {limit} bytes")
            if not d.eof:
                raise CompressionError("zstd: stream ends inside a frame")
            rest = d.unused_data + rest[pos:]
    except zstandard.ZstdError as e:
        raise CompressionError(f"zstd: {e}") from None
    return bytes(out)


def compress(data: bytes, magic: int = 2, level: int = 3) -> bytes:
    if magic < 2:
        raise ValueError(f"zstd is not valid for magic {magic}")
    return zstandard.ZstdCompressor(level=level).compress(data)
