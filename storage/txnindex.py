"""The transaction index (.txnindex): the aborted transactions whose ABORT marker lies in the
segment. Read as Kafka's TransactionIndex reads it: whole 34-byte entries only, version checked
on the first byte of the field."""
from __future__ import annotations

from dataclasses import dataclass

from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.runtime.errors import InvalidValueError

ENTRY_SIZE = 34


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
