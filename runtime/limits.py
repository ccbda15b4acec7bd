"""Resource limits applied while decoding untrusted bytes; change them on `LIMITS`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Limits:
    # Upper bound on the bytes one compressed section may inflate to (decompression bombs).
    max_decompressed_bytes: int = 64 * 1024 * 1024


LIMITS = Limits()
