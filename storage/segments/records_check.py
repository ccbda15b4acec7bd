"""Decoding every record of batches whose framing and CRC are valid, to prove that they read: a
CRC only says the bytes are the ones written, not that what was written can be read (an over-long
varint, a wrong record count, a damaged compressed stream, a decompression bomb all pass it).

v2 batches are decoded by columns, many at once (storage.segments.columnar: the same checks as the
record-by-record reader, without an object per record); when a group fails, its batches are
decoded one by one to find the first that does not read. Legacy entries are expanded as readers
expand them (wrappers decompressed, inner messages read).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kafkacodec.codec.attribute_bits import COMPRESSION
from kafkacodec.codec.records import Batch
from kafkacodec.runtime.errors import DecodeError, InvalidValueError, LimitExceededError

from .columnar import batch_columns
from kafkacodec.codec.places import V2_HEADER
from .scan import BatchInfo

# batches decoded together: enough to amortise a columnar pass, few enough to stay in cache (and,
# for small batches, not to keep many objects alive for the garbage collector to walk)
GROUP_BYTES, GROUP_BATCHES = 4 << 20, 512
INT64_MAX = 2 ** 63 - 1


@dataclass
class Decoded:
    """What decoding a list of batches found: the records read, the first batch whose records do
    not read (its index and error), and the batches not decoded because they exceed a limit
    (LIMITS: a decompression bomb, or just larger than this run allows). Those are not damage:
    a larger limit reads them, so nothing may cut or skip them."""
    records: int = 0
    bad: int | None = None
    error: DecodeError | None = None
    over_limit: list[tuple[BatchInfo, LimitExceededError]] = field(default_factory=list)


def decoded_records(batches: list[BatchInfo]) -> Decoded:
    """Every record of the batches decoded, up to the first batch whose records do not read."""
    if all(b.magic >= 2 for b in batches):
        try:
            return Decoded(_v2_records(batches))
        except DecodeError:
            pass  # found below, batch by batch
    out = Decoded()
    for i, b in enumerate(batches):
        try:
            out.records += _records_of(b)
        except LimitExceededError as err:
            out.over_limit.append((b, err))
        except DecodeError as err:
            out.bad, out.error = i, err
            return out
    return out


def _records_of(b: BatchInfo) -> int:
    if b.magic >= 2:
        return _v2_records([b])
    return sum(1 for _ in Batch(b.entry, b.position, b.size))


def _v2_records(batches: list[BatchInfo]) -> int:
    """The records of v2 batches, decoded by columns; their offsets must rise within each batch
    from its base offset to at most its last offset (compaction leaves gaps, never disorder), or a
    consumer would be handed offsets that belong to other batches."""
    entries = [b.entry for b in batches]
    for e in entries:  # the base offset is outside the CRC: damage there can make offsets no int64 holds
        if e.base_offset + max(e.last_offset_delta, 0) > INT64_MAX:
            raise InvalidValueError(f"base offset {e.base_offset} and last offset delta {e.last_offset_delta} make "
                                    "offsets beyond 2^63-1", None, "record_batch/base_offset")
    cols = batch_columns(entries)
    offsets, owner = cols.offset, cols.batch
    if len(offsets):
        first = np.ones(len(offsets), bool)
        first[1:] = owner[1:] != owner[:-1]
        base = np.array([e.base_offset for e in entries], np.int64)[owner]
        last = np.array([e.base_offset + e.last_offset_delta for e in entries], np.int64)[owner]
        rising = np.ones(len(offsets), bool)
        rising[1:] = offsets[1:] > offsets[:-1]
        bad = ~((first | rising) & (offsets >= base) & (offsets <= last))
        if bad.any():
            i = int(np.argmax(bad))
            e = entries[owner[i]]
            raise InvalidValueError(f"record offset delta {int(offsets[i] - e.base_offset)} does not rise from the "
                                    f"record before it within 0..{e.last_offset_delta} (the batch's last offset delta)",
                                    None, "record_batch/record/offset_delta")
    return len(cols)


def placed(err: DecodeError, b: BatchInfo, path) -> DecodeError:
    """The error of a batch's records, placed in the file. Positions in an uncompressed v2 batch's
    records become file positions; in a compressed batch they are in its decompressed records, so
    the message says so and the batch's own position stands."""
    compressed = int(b.entry.attributes & COMPRESSION) if b.magic >= 2 else int(b.entry.message.compression)
    if b.magic >= 2 and not compressed and err.position is not None:
        err.position += b.position + V2_HEADER
    else:
        where = f" (byte {err.position} of its decompressed records)" if err.position is not None else ""
        err.message = f"batch at byte {b.position}{where}: {err.message}"
        err.position = b.position
    err.file = str(path)
    err.in_records = True  # recovery, which reads no records, would keep this batch
    return err
