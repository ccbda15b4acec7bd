"""Resource limits applied while decoding untrusted bytes; change them on `LIMITS`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Limits:
    # Upper bound on the bytes one compressed section may inflate to (decompression bombs).
    max_decompressed_bytes: int = 64 * 1024 * 1024
    # Upper bound on one batch or legacy entry that is decoded (its size field); Kafka's own
    # limit, max.message.bytes, is 1 MiB by default. The recovery scan does not apply it: Kafka's
    # recovery does not either.
    max_batch_bytes: int = 64 * 1024 * 1024
    # Upper bound on the items of one counted list: records in a batch, headers in a record,
    # entries of a message array. Each decoded item is a Python object, so this bounds memory.
    max_items: int = 1 << 20


LIMITS = Limits()
