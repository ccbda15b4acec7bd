"""Decoding every record of batches whose framing and CRC are valid, to prove that they read: a
CRC only says the bytes are the ones written, not that what was written can be read (an over-long
varint, a wrong record count, a damaged compressed stream, a decompression bomb all pass it).

v2 batches are decoded by columns, many at once (storage.columnar: the same checks as the
record-by-record reader, without an object per record); when a group fails, its batches are
decoded one by one to find the first that does not read. Legacy entries are expanded as readers
expand them (wrappers decompressed, inner messages read).
"""
from __future__ import annotations

from kafkacodec.records import Batch
from kafkacodec.runtime.errors import DecodeError

from .columnar import RECORDS_OFFSET, batch_columns
from .scan import BatchInfo

GROUP_BYTES = 4 << 20  # batches decoded together: large enough to amortise, small enough for cache


def decoded_records(batches: list[BatchInfo]) -> tuple[int, int | None, DecodeError | None]:
    """(records read, index of the first batch whose records do not read or None, its error)."""
    v2 = [b for b in batches if b.magic >= 2]
    if len(v2) == len(batches):
        try:
            return len(batch_columns([b.entry for b in v2])), None, None
        except DecodeError:
            pass  # found below, batch by batch
    count = 0
    for i, b in enumerate(batches):
        try:
            count += _records_of(b)
        except DecodeError as err:
            return count, i, err
    return count, None, None


def _records_of(b: BatchInfo) -> int:
    if b.magic >= 2:
        return len(batch_columns([b.entry]))
    return sum(1 for _ in Batch(b.entry, b.position, b.size))


def placed(err: DecodeError, b: BatchInfo, path) -> DecodeError:
    """The error of a batch's records, placed in the file. Positions in an uncompressed v2 batch's
    records become file positions; in a compressed batch they are in its decompressed records, so
    the message says so and the batch's own position stands."""
    compressed = int(b.entry.attributes & 0x07) if b.magic >= 2 else int(b.entry.message.compression)
    if b.magic >= 2 and not compressed and err.position is not None:
        err.position += b.position + RECORDS_OFFSET
    else:
        where = f" (byte {err.position} of its decompressed records)" if err.position is not None else ""
        err.message = f"batch at byte {b.position}{where}: {err.message}"
        err.position = b.position
    err.file = str(path)
    err.in_records = True  # recovery, which reads no records, would keep this batch
    return err
