"""Checksums by name, as schemas name them in their `-checksum` extension key."""
from __future__ import annotations

import zlib

import crc32c as _crc32c


# the C functions themselves, not wrappers: a batch's CRC is checked on every read, where a
# Python frame more is a measurable part of a small batch's cost
crc32 = zlib.crc32  # CRC-32/IEEE (java.util.zip.CRC32), as legacy messages use; unsigned in Python 3
crc32c = _crc32c.crc32c  # CRC-32C (Castagnoli), as v2 record batches use


ALGORITHMS = {"crc32": crc32, "crc32c": crc32c}


def get(name: str):
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise KeyError(f"unknown checksum algorithm {name!r}; known: {sorted(ALGORITHMS)}") from None
