"""The differential test of the two backends: one table of samples per type that the compiled
backend reads (the -hot types), each sample read as it is and mutated (a byte changed, the bytes
cut, bytes inserted or removed), under both backends: the same values, the same bytes written
back and the same size, or the same error (class, position, path and message)."""
import random

import pytest

from tests.support import damage
from tests.support.roundtrip import alike

from kafkacodec import write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.compiled import compiled_types

MUTATIONS_PER_SAMPLE = 25


def records(rng: random.Random, n: int, headers: bool = True) -> list[dict]:
    return [{"key": rng.choice([None, b"", b"key-%d" % i]), "value": rng.choice([None, b"", rng.randbytes(rng.randrange(1, 90))]),
             "timestamp": rng.choice([0, 1_700_000_000_000 + i, 2 ** 40]),
             "headers": [(rng.choice(["h", "trace-id", "clé"]), rng.choice([None, b"", b"x" * j]))
                         for j in range(rng.randrange(3) if headers else 0)]} for i in range(n)]


def v2_batches(rng: random.Random) -> list[bytes]:
    return [write_batch(records(rng, n), base_offset=rng.randrange(1 << 40), compression=codec,
                        log_append_time=1_700_000_000_000 if n == 3 else None)
            for n, codec in ((1, "none"), (3, "none"), (7, "gzip"), (5, "lz4"), (4, "zstd"), (6, "snappy"))]


def legacy_entries(rng: random.Random) -> list[bytes]:
    return [write_batch(records(rng, n, headers=False), magic=magic, base_offset=rng.randrange(1 << 30),
                        compression=codec)
            for magic in (0, 1) for n, codec in ((1, "none"), (4, "gzip"), (3, "snappy"))]


def table() -> dict[type, list[bytes]]:
    """Valid bytes of each hot type: whole batches and entries, and the parts they are made of."""
    rng = random.Random(20261126)
    batches, entries = v2_batches(rng), legacy_entries(rng)
    record_bytes, header_bytes = [], []
    for data in batches[:2]:
        for r in RecordBatch.from_bytes(data).records.items:
            record_bytes.append(r.to_bytes())
            header_bytes += [h.to_bytes() for h in r.headers]
    messages = [LegacyLogEntry.from_bytes(e).message.to_bytes() for e in entries]
    return {RecordBatch: batches, RecordBatch.Record: record_bytes, RecordBatch.Header: header_bytes,
            LegacyLogEntry: entries, LegacyLogEntry.LegacyMessage: messages,
            LegacyLogEntry.MessageSet: [b"".join(entries[:2]), b"".join(entries[3:5])]}


TABLE = table()
CASES = [(cls, i) for cls, samples in TABLE.items() for i in range(len(samples))]


def read_back(cls, data: bytes):
    """What reading `data` as `cls` gives, in the form compared between backends."""
    obj = cls.from_bytes(data, verify=False)
    return obj.to_dict(), obj.to_bytes(), obj.size(), repr(obj)


def test_the_table_covers_every_type_the_compiled_backend_reads():
    expected = {"RecordBatch", "RecordBatch.Records", "RecordBatch.Record", "RecordBatch.Header", "LegacyLogEntry",
                "LegacyLogEntry.LegacyMessage", "LegacyLogEntry.MessageSet"}
    assert set(compiled_types()) in (set(), expected)
    tabled = {c.__dict__.get("_qualname") or c.__qualname__ for c in TABLE}
    assert tabled == expected - {"RecordBatch.Records"}  # read only within its batch, which the table has
    assert all(TABLE.values())


@pytest.mark.parametrize("cls,index", CASES, ids=[f"{c.__dict__.get('_qualname') or c.__qualname__}-{i}"
                                                  for c, i in CASES])
def test_valid_and_mutated_samples_read_alike(cls, index, backend):
    data = TABLE[cls][index]
    _, written, size, _ = alike(lambda: read_back(cls, data), backend)
    assert written == data and size == len(data)
    rng = random.Random(index)
    for _ in range(MUTATIONS_PER_SAMPLE):
        damaged, case = damage.mutated(data, rng)
        alike(lambda: read_back(cls, damaged), backend, case=case)
