"""The transaction index (.txnindex): the aborted transactions whose ABORT marker lies in the
segment. Read as Kafka's TransactionIndex reads it: whole 34-byte entries only, version checked
on the first byte of the field."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.runtime.errors import DecodeError, InvalidValueError, TruncatedError

from . import index
from ..diskio.safeio import open_regular, read_at

ENTRY_SIZE = 34
CHUNK_ENTRIES = 8192


@dataclass(frozen=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's offset
    last_stable_offset: int
    version: int = 0


def read_txn_index(data: bytes) -> list[AbortedTxn]:
    """Every whole entry; a torn final entry is ignored, as Kafka ignores it. An entry of an
    unknown version is an error, as in Kafka."""
    whole = len(data) - len(data) % ENTRY_SIZE
    out = []
    for i, e in enumerate(TransactionIndex.from_bytes(data[:whole]).entries):
        if data[i * ENTRY_SIZE] > 0:
            raise InvalidValueError(f"unexpected aborted transaction version {data[i * ENTRY_SIZE]}, "
                                    "current version is 0", i * ENTRY_SIZE, "transaction_index/version")
        out.append(AbortedTxn(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset, e.version))
    return out


def iter_txn_index(path: str | Path, max_entries: int | None, read: index.Read | None = None,
                   size: int | None = None) -> Iterator[AbortedTxn]:
    """The entries of a .txnindex file as read_txn_index gives those of its bytes, read in chunks.
    A file of more than `max_entries` entries is refused before anything is read: an entry stands
    for an ABORT marker in the segment, so a segment explains at most one per batch
    (index.max_entries); None for no bound (the reader's memory stays bounded either way). A file
    that is not local is read with `read` and has `size` bytes, as for index.iter_offset_index."""
    if read is not None:
        yield from _entries(read, size, path, max_entries)
        return
    with open_regular(path) as f:
        yield from _entries(lambda pos, n: read_at(f, pos, n, path), os.fstat(f.fileno()).st_size, path, max_entries)


def _entries(read: index.Read, size: int, path, max_entries: int | None) -> Iterator[AbortedTxn]:
    if max_entries is not None and size // ENTRY_SIZE > max_entries:
        raise index.too_many_entries(path, "transaction index", max_entries, ENTRY_SIZE)
    whole = size - size % ENTRY_SIZE
    for pos in range(0, whole, CHUNK_ENTRIES * ENTRY_SIZE):
        want = min(CHUNK_ENTRIES * ENTRY_SIZE, whole - pos)
        chunk = read(pos, want)
        if len(chunk) < want:
            raise TruncatedError(f"transaction index ended at byte {pos + len(chunk)} while it was read (it had "
                                 f"{size} bytes)", pos + len(chunk), "transaction_index", str(path))
        try:
            yield from read_txn_index(chunk)
        except DecodeError as err:
            raise err.with_context(file=str(path), offset=pos)


def read_txn_index_file(path: str | Path, segment_size: int) -> list[AbortedTxn]:
    """Every entry of the .txnindex of a segment of `segment_size` bytes (iter_txn_index)."""
    return list(iter_txn_index(path, index.max_entries(segment_size)))


def encode_txn_index(entries: list[AbortedTxn]) -> bytes:
    return TransactionIndex(entries=[
        TransactionIndex.AbortedTxn(version=t.version, producer_id=t.producer_id, first_offset=t.first_offset,
                                    last_offset=t.last_offset, last_stable_offset=t.last_stable_offset)
        for t in entries]).to_bytes()


def check_txn_index(entries: list[AbortedTxn], base_offset: int) -> list[str]:
    """Kafka's sanity check (no marker before the segment) and its append rule (markers in order)."""
    problems, last = [], None
    for t in entries:
        if t.last_offset < base_offset:
            problems.append(f"transaction index: last offset {t.last_offset} of producer {t.producer_id} "
                            f"is below the base offset {base_offset}")
        if last is not None and t.last_offset <= last:
            problems.append(f"transaction index: last offset {t.last_offset} does not follow {last}")
        if t.first_offset > t.last_offset:
            problems.append(f"transaction index: first offset {t.first_offset} is after last offset {t.last_offset}")
        last = t.last_offset
    return problems
