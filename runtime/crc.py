"""Checksums by name, as schemas name them in their `-checksum` extension key."""
from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32(data) -> int:
    """CRC-32/IEEE (java.util.zip.CRC32), as legacy messages use."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data) -> int:
    """CRC-32C (Castagnoli), as v2 record batches use."""
    return _crc32c.crc32c(data)


ALGORITHMS = {"crc32": crc32, "crc32c": crc32c}


def get(name: str):
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise KeyError(f"unknown checksum algorithm {name!r}; known: {sorted(ALGORITHMS)}") from None
