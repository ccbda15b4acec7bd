"""The columnar path: generated `_columns` readers and the log layer's read_columns give exactly
what the scalar readers and kafka-python give, and damage is a DecodeError, never anything else."""
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from tests.support import TESTS
from kafkacodec import Record, write_batch
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.generator.compile import compile_dir
from kafkacodec.runtime import vectors
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.runtime.varint import encode_zigzag32, encode_zigzag64
from kafkacodec.storage.segments.columnar import read_columns, segment_columns
from kafkacodec.storage.segments.scan import batch_positions, frame_size
from tests.generator.test_generator import load_module

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


positions = batch_positions


def columns_as_rows(seg: bytes, verify: bool = True) -> list[tuple]:
    c = read_columns(seg, positions(seg), verify=verify)
    keys, values = c.arrow_bytes("key").to_pylist(), c.arrow_bytes("value").to_pylist()
    headers = c.arrow_headers().to_pylist()
    return [(o, t, k, v, [(h["key"], h["value"]) for h in hs])
            for o, t, k, v, hs in zip(c.offset.tolist(), c.timestamp.tolist(), keys, values, headers)]


def scalar_rows(seg: bytes, verify: bool = True) -> list[tuple]:
    out = []
    for p in positions(seg):
        b, _ = RecordBatch.read(seg, p, verify=verify)
        out += [(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
                for r in b.records.items]
    return out


def kafka_python_batch(records, codec, base_offset=0, log_append_time=None):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=CODECS[codec], is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for off, ts, key, value, headers in records:
        b.append(off, timestamp=ts, key=key, value=value, headers=headers)
    data = bytearray(b.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    return bytes(data)


def varied_records(rng: random.Random, n: int, large: bool = True) -> list[tuple]:
    """Nulls, empty and large keys and values (one-, two- and, when `large`, three-byte lengths),
    negative and large timestamp deltas, zero to three headers with null values."""
    out = []
    for i in range(n):
        key = rng.choice([None, b"", b"k%d" % i, bytes(rng.randrange(200))])
        value = rng.choice([None, b"", b"v" * rng.randrange(60), bytes(rng.randrange(9000, 20000) if large else 300)])
        headers = [("h%d" % j, rng.choice([None, b"", b"x" * rng.randrange(300)]))
                   for j in range(rng.choice([0, 0, 1, 3]))]
        out.append((i, 1_700_000_000_000 + rng.choice([0, -5, 70_000, -(1 << 40), i]), key, value, headers))
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_every_field_equals_kafka_python(codec):
    rng = random.Random(codec)
    batches = [varied_records(rng, rng.choice([0, 1, 7, 120])) for _ in range(40)]
    seg = b"".join(kafka_python_batch(recs, codec, base_offset=1000 * i) for i, recs in enumerate(batches) if recs)
    expected = []
    for p in positions(seg):
        batch = DefaultRecordBatch(seg[p:p + frame_size(seg, p, len(seg))])
        expected += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    assert columns_as_rows(seg) == expected
    assert columns_as_rows(seg) == scalar_rows(seg)


@pytest.mark.parametrize("value_size", [50, 9000], ids=["lean steps", "careful steps"])
def test_one_long_batch_among_short_ones_and_empty_batches(value_size):
    """Lockstep stops when few batches are left; the long one finishes record by record. Records
    of 8 KiB and more have three-byte lengths, which the lean step leaves to the careful one."""
    rng = random.Random(5)
    parts = [write_batch([Record(key=b"k", value=b"v" * rng.randrange(value_size), timestamp=1, offset=o)
                          for o in range(n)], base_offset=10_000 * i) if n else
             RecordBatch(base_offset=10_000 * i, records=RecordBatch.Records(items=[])).to_bytes()
             for i, n in enumerate([3] * 100 + [0, 0, 500, 2])]
    seg = b"".join(parts)
    assert columns_as_rows(seg) == scalar_rows(seg)
    assert len(read_columns(seg, positions(seg))) == 100 * 3 + 500 + 2


def test_batches_in_any_order_read_in_the_order_given():
    seg = b"".join(write_batch([Record(key=b"%d" % b, value=b"x" * i, timestamp=i) for i in range(5)],
                               base_offset=5 * b) for b in range(4))
    at = positions(seg)
    order = [at[2], at[0], at[3], at[0]]
    assert read_columns(seg, order).offset.tolist() == [10, 11, 12, 13, 14, 0, 1, 2, 3, 4, 15, 16, 17, 18, 19,
                                                        0, 1, 2, 3, 4]
    assert read_columns(seg, order).arrow_bytes("key").to_pylist() == [b"2"] * 5 + [b"0"] * 5 + [b"3"] * 5 + [b"0"] * 5


def test_log_append_time_batches_take_the_batch_max_timestamp():
    seg = write_batch([Record(key=None, value=b"a", timestamp=5), Record(key=None, value=b"b", timestamp=9)])
    b = RecordBatch.from_bytes(seg)
    b.attributes |= 0x08
    b.max_timestamp = 777
    seg = b.to_bytes() + write_batch([Record(key=None, value=b"c", timestamp=3)], base_offset=2)
    assert read_columns(seg, positions(seg)).timestamp.tolist() == [777, 777, 3]


def test_records_in_a_memory_map(tmp_path):
    seg = b"".join(write_batch([Record(key=b"%d" % i, value=b"x" * i, timestamp=i) for i in range(50)],
                               base_offset=50 * b) for b in range(30))
    (tmp_path / "s.log").write_bytes(seg)
    import mmap
    with open(tmp_path / "s.log", "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        c = read_columns(m, positions(seg))
        assert c.arrow_bytes("value").to_pylist() == [b"x" * i for _ in range(30) for i in range(50)]
        del c


@pytest.mark.parametrize("batches, per_batch, large", [(20, 30, True), (90, 6, True), (90, 6, False)],
                         ids=["one by one", "in lockstep", "in lean lockstep"])
def test_every_damage_is_a_decode_error_and_agrees_with_the_scalar_reader(batches, per_batch, large):
    """Mutated segments, CRC checks off so that the damage reaches the records: wherever the scalar
    reader fails the columnar one fails too, and where it reads, both read the same. Few batches
    are followed record by record; many step together, first by the lean step."""
    rng = random.Random(7)
    clean = b"".join(kafka_python_batch(varied_records(rng, per_batch, large), "none", base_offset=100 * i)
                     for i in range(batches))
    frames = positions(clean)
    for _ in range(300):
        seg = bytearray(clean)
        for _ in range(rng.choice([1, 2, 5])):
            at = rng.randrange(len(seg))
            if rng.random() < 0.5 and not any(p <= at < p + 61 for p in frames):
                seg[at] = rng.randrange(256)
            else:
                seg[at] ^= 1 << rng.randrange(8)
        seg = bytes(seg)
        try:
            want = scalar_rows(seg, verify=False)
        except DecodeError:
            want = DecodeError
        try:
            got = columns_as_rows(seg, verify=False)
        except DecodeError:
            got = DecodeError
        if want is not DecodeError and got is not DecodeError:
            # a header key that is not UTF-8 reads as U+FFFD in Arrow, escaped in Python
            got = [(o, t, k, v, [(hk.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), hv)
                                 for hk, hv in hs]) for o, t, k, v, hs in got]
            want = [(o, t, k, v, [(hk.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), hv)
                                  for hk, hv in hs]) for o, t, k, v, hs in want]
        assert got == want


@pytest.mark.parametrize("field, value", [("records_count", 1 << 30), ("records_count", -3),
                                          ("headers_count", 1 << 29)])
def test_absurd_counts_are_refused_before_anything_is_allocated(field, value):
    if field == "records_count":
        seg = bytearray(write_batch([Record(key=b"k", value=b"v" * 30, timestamp=1)] * 3))
        seg[57:61] = value.to_bytes(4, "big", signed=True)
    else:  # one record, built by hand, whose headers count says 2^29
        body = b"\x00" + b"\x00" + b"\x00" + b"\x02k" + b"\x02v" + encode_zigzag32(value)
        seg = bytearray(RecordBatch(records=RecordBatch.Records(items=[])).to_bytes())
        seg[57:61] = (1).to_bytes(4, "big")
        seg += encode_zigzag32(len(body)) + body
        seg[8:12] = (len(seg) - 12).to_bytes(4, "big")
    with pytest.raises(DecodeError, match="items|count"):
        read_columns(bytes(seg), [0], verify=False)


@given(st.lists(st.tuples(st.sampled_from([5, 10]), st.integers(-(1 << 63), (1 << 63) - 1), st.integers(0, 3)),
                min_size=1, max_size=60))
def test_varints_equal_the_scalar_reader(items):
    buf, pos, want = bytearray(), [], []
    for max_bytes, value, gap in items:
        if max_bytes == 5:
            value = value % (1 << 32) - (1 << 31)
        pos.append(len(buf))
        buf += encode_zigzag32(value) if max_bytes == 5 else encode_zigzag64(value)
        buf += bytes(gap)
        want.append(value)
    u8 = np.frombuffer(bytes(buf), np.uint8)
    for max_bytes in (5, 10):
        picked = [i for i, (m, _, _) in enumerate(items) if m == max_bytes]
        at = np.array([pos[i] for i in picked], np.int32)
        values, after = vectors.varints(u8, at, len(buf), max_bytes, True, "x")
        assert values.tolist() == [want[i] for i in picked]
        assert after.tolist() == [pos[i] + len(encode_zigzag64(want[i])) for i in picked]


def test_varints_past_their_bounds_fail_with_the_first_position():
    u8 = np.frombuffer(b"\x01\x80\x80\x01\xff\xff\xff\xff\xff\xff", np.uint8)
    with pytest.raises(DecodeError, match="inside a varint") as err:
        vectors.varints(u8, np.array([0, 1], np.int32), np.array([1, 3]), 5, True, "x")
    assert err.value.position == 1
    with pytest.raises(DecodeError, match="longer than 5 bytes") as err:
        vectors.varints(u8, np.array([0, 4], np.int32), 10, 5, True, "x")
    assert err.value.position == 4


def test_a_schema_with_nothing_of_kafka_reads_by_columns(tmp_path):
    (tmp_path / "toy_table.py").write_text(compile_dir(TESTS / "schemas_toy")["toy_table.py"])
    toy = load_module(tmp_path / "toy_table.py", "toy_table")
    rng = random.Random(3)
    rows = [toy.ToyTable.Row(id=rng.randrange(1 << 16), delta=rng.randrange(-(1 << 31), 1 << 31),
                             stamp=rng.randrange(-(1 << 63), 1 << 63),
                             label=rng.choice([None, "", "é" * rng.randrange(5)]),
                             cells=[toy.ToyTable.Cell(tag=rng.randrange(-128, 128),
                                                      weight=rng.randrange(-(1 << 15), 1 << 15))
                                    for _ in range(rng.choice([0, 1, 4]))]) for _ in range(300)]
    data = toy.ToyTable(rows=rows).to_bytes()
    starts = np.cumsum([4] + [r.size() for r in rows])
    u8 = np.frombuffer(data, np.uint8)
    cols, after = toy.ToyTable.Row._columns(u8, starts[:-1].astype(np.int32), len(data))
    assert after.tolist() == starts[1:].tolist()
    assert toy.ToyTable.Row._skip(u8, starts[:-1], len(data)).tolist() == starts[1:].tolist()
    assert cols["id"].tolist() == [r.id for r in rows] and cols["delta"].tolist() == [r.delta for r in rows]
    assert cols["stamp"].tolist() == [r.stamp for r in rows]
    labels = [None if n < 0 else data[s:s + n].decode() for s, n in zip(cols["label"], cols["label.size"])]
    assert labels == [r.label for r in rows]
    first = cols["cells"]
    cells = [list(zip(cols["cells.tag"][first[i]:first[i + 1]].tolist(),
                      cols["cells.weight"][first[i]:first[i + 1]].tolist())) for i in range(len(rows))]
    assert cells == [[(c.tag, c.weight) for c in r.cells] for r in rows]
    with pytest.raises(DecodeError):
        toy.ToyTable.Row._columns(u8, starts[:-1].astype(np.int32), len(data) - 1)


def test_a_header_key_that_is_not_utf8_reads_with_replacement_characters():
    seg = write_batch([Record(key=None, value=b"a", timestamp=1, headers=[("k\udcff", b"v")])])
    assert RecordBatch.from_bytes(seg).records.items[0].headers[0].key == "k\udcff"
    assert read_columns(seg, [0]).arrow_headers().to_pylist() == [[{"key": "k\ufffd", "value": b"v"}]]


def test_headers_are_spark_kafka_type():
    seg = write_batch([Record(key=None, value=b"a", timestamp=1, headers=[("k", b"v"), ("n", None)]),
                       Record(key=None, value=b"b", timestamp=1)])
    headers = read_columns(seg, [0]).arrow_headers(empty_as_null=True)
    assert headers.type == pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    assert headers.to_pylist() == [[{"key": "k", "value": b"v"}, {"key": "n", "value": None}], None]


def test_a_segment_file_by_columns_group_by_group(tmp_path):
    rng = random.Random(9)
    seg = b"".join(kafka_python_batch(varied_records(rng, 20, large=False), "lz4" if i % 3 else "none",
                                      base_offset=100 * i) for i in range(60))
    (tmp_path / "00.log").write_bytes(seg)
    groups = list(segment_columns(tmp_path / "00.log", group_bytes=20_000))
    assert len(groups) > 3
    assert [o for g in groups for o in g.offset.tolist()] == [r[0] for r in scalar_rows(seg)]
    assert [v for g in groups for v in g.arrow_bytes("value").to_pylist()] == [r[3] for r in scalar_rows(seg)]
    damaged = bytearray(seg)
    damaged[positions(seg)[40] + 30] ^= 0xFF  # inside a CRC-covered header
    (tmp_path / "01.log").write_bytes(bytes(damaged))
    with pytest.raises(DecodeError) as err:
        list(segment_columns(tmp_path / "01.log", group_bytes=20_000))
    assert err.value.file.endswith("01.log") and err.value.position == positions(seg)[40]


def big_segment(path, size: int, batch: bytes) -> None:
    """`size` bytes of copies of one batch with rising base offsets (the CRC does not cover them)."""
    count = RecordBatch.from_bytes(batch).records_count
    with open(path, "wb") as f:
        for i in range(size // len(batch)):
            f.write((i * count).to_bytes(8, "big") + batch[8:])


@pytest.mark.parametrize("way", ["headers", "batches", "columns"])
def test_scanning_a_segment_of_any_size_keeps_memory_bounded(tmp_path, way):
    """Resident memory while scanning 400 MB stays under twice the largest batch plus a constant
    (the columnar reader's group of 8 MiB and its columns, the map's pages not yet handed back,
    the interpreter's own growth)."""
    import subprocess
    import sys
    batch = write_batch([Record(key=b"k%d" % i, value=b"v" * 900, timestamp=i) for i in range(400)],
                        compression="none")
    part = tmp_path / "t-0"
    part.mkdir()
    big_segment(part / "00000000000000000000.log", 400 << 20, batch)
    peak = int(subprocess.run([sys.executable, str(TESTS / "support" / "scan_memory.py"), way,
                               str(part / "00000000000000000000.log")],
                              capture_output=True, text=True, check=True).stdout)
    constant = 48 << 20
    assert peak < 2 * len(batch) + constant, f"{way}: {peak >> 20} MiB"


@pytest.mark.parametrize("bad", [-1, -70, "end", "past"])
def test_positions_outside_the_buffer_are_decode_errors_naming_them(bad):
    seg = b"".join(write_batch([Record(key=b"k", value=b"v", timestamp=i)], base_offset=i) for i in range(3))
    position = {"end": len(seg), "past": len(seg) + 100}.get(bad, bad)
    with pytest.raises(DecodeError) as err:
        read_columns(seg, positions(seg)[:2] + [position])
    assert err.value.position == position and f"batch position {position}" in str(err.value)
