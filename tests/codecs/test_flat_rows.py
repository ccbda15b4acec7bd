"""The generated compiled flat reader of many instances (`_flat_rows_compiled`) against the
generated Python flat reader of one (`_flat`), on the same bytes, valid and mutated; and the
columnar reader's path through it (batch headers read flat, no object each) against its careful
path: the same columns, the same first error."""
import random

import numpy as np
import pytest

from kafkacodec import write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.segments import columnar
from kafkacodec.storage.segments.scan import batch_positions

pytestmark = pytest.mark.skipif(RecordBatch._flat_rows_compiled is None, reason="the compiled readers are not built")


def segment(rng: random.Random, magic: int) -> bytes:
    out, base = [], 0
    for _ in range(rng.randrange(1, 12)):
        n = rng.randrange(1, 6)
        records = [{"key": rng.choice([None, b"k%d" % i]), "value": rng.choice([None, b"", bytes(rng.randrange(90))]),
                    "timestamp": 1_700_000_000_000 + i} for i in range(n)]
        out.append(write_batch(records, base_offset=base, magic=magic))
        base += n
    return b"".join(out)


def python_rows(cls, buf: bytes, starts: list[int]):
    """What _flat_rows_compiled gives, from the Python reader of one instance."""
    rows, after = [], []
    for p in starts:
        found = cls._flat(buf, p, len(buf))
        if found is None:
            return None
        after.append(found[0])
        rows.append(list(found[1]))
    return rows, after


@pytest.mark.parametrize("cls, magic", [(RecordBatch, 2), (LegacyLogEntry, 1), (LegacyLogEntry, 0)])
@pytest.mark.parametrize("seed", range(15))
def test_flat_rows_equal_the_python_flat_reader_valid_and_mutated(cls, magic, seed):
    rng = random.Random(seed)
    clean = segment(rng, magic)
    starts = batch_positions(clean)
    for case in range(60):
        buf = bytearray(clean)
        for _ in range(0 if case == 0 else rng.choice([1, 3])):
            buf[rng.randrange(len(buf))] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        buf = bytes(buf)
        u8 = np.frombuffer(buf, np.uint8)
        got = cls._flat_rows_compiled(u8, np.array(starts, np.int64), np.full(len(starts), len(buf), np.int64))
        want = python_rows(cls, buf, starts)
        assert (None if got is None else (got[0].tolist(), got[1].tolist())) == want, case


def test_flat_rows_refuse_ranges_outside_the_buffer():
    buf = write_batch([{"value": b"v"}])
    u8 = np.frombuffer(buf, np.uint8)
    for start, end in ((-1, len(buf)), (0, len(buf) + 1), (5, 4)):
        assert RecordBatch._flat_rows_compiled(u8, np.array([start], np.int64), np.array([end], np.int64)) is None
    with pytest.raises(ValueError):
        RecordBatch._flat_rows_compiled(u8, np.array([0], np.int64), np.array([], np.int64))


def columns(buf: bytes, positions, verify: bool):
    try:
        c = columnar.read_columns(buf, positions, verify=verify)
    except DecodeError as err:
        return type(err).__name__, err.position, err.path, str(err)
    return (c.batch.tolist(), c.offset.tolist(), c.timestamp.tolist(), c.arrow_bytes("key").to_pylist(),
            c.arrow_bytes("value").to_pylist(), c.arrow_headers().to_pylist())


@pytest.mark.parametrize("grouped", [False, True], ids=["one walk", "group by group"])
@pytest.mark.parametrize("seed", range(12))
def test_the_flat_path_gives_what_the_careful_path_gives(seed, grouped, monkeypatch):
    if grouped:  # CRCs checked and records walked a few batches at a time, as in a large segment
        monkeypatch.setattr(columnar, "WALK_BYTES", 300)
        monkeypatch.setattr(columnar, "ONE_WALK_BYTES", 300)
    rng = random.Random(seed)
    clean = segment(rng, 2)
    positions = batch_positions(clean)
    for case in range(40):
        buf = bytearray(clean)
        for _ in range(0 if case == 0 else rng.choice([1, 2])):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        buf = bytes(buf)
        for verify in (True, False):
            flat = columns(buf, positions, verify)
            with monkeypatch.context() as m:
                m.setattr(columnar, "_flat_columns", lambda *args: None)
                careful = columns(buf, positions, verify)
            assert flat == careful, (case, verify)


def test_regular_batches_are_read_without_a_batch_object(monkeypatch):
    rng = random.Random(1)
    buf = segment(rng, 2)
    monkeypatch.setattr(columnar, "_headers", lambda *args: pytest.fail("a batch object was read"))
    c = columnar.read_columns(buf, batch_positions(buf))
    assert c.offset.tolist() == list(range(len(c)))
