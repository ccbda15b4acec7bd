"""xxHash32, needed only for the LZ4 frame's header and block checksums (a few bytes each)."""
from __future__ import annotations

import struct

P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
M = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * P2) & M, 13) * P1) & M


def xxh32(data, seed: int = 0) -> int:
    data = bytes(data)
    n = len(data)
    pos = 0
    if n >= 16:
        v1, v2, v3, v4 = (seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M
        stop = n - 16
        while pos <= stop:
            a, b, c, d = struct.unpack_from("<4I", data, pos)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            pos += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while pos + 4 <= n:
        (w,) = struct.unpack_from("<I", data, pos)
        h = (_rotl((h + w * P3) & M, 17) * P4) & M
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * P5) & M, 11) * P1) & M
        pos += 1
    h ^= h >> 15
    h = (h * P2) & M
    h ^= h >> 13
    h = (h * P3) & M
    h ^= h >> 16
    return h
