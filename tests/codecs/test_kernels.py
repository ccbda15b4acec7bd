"""The compiled kernels against their pure equivalents on the same inputs, under each backend
(tests/support/roundtrip.py), and how the runtime chooses between them."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.support.roundtrip import GENERATED_TWINS, Raised, alike, compiled_bindings, kernel_alike, using

from kafkacodec.runtime import kernels
from kafkacodec.runtime.compiled import compiled_types

pa = pytest.importorskip("pyarrow")
compiled = pytest.mark.skipif(kernels.compiled is None, reason="the compiled kernels are not built")


@pytest.mark.parametrize("seed", range(20))
def test_gathered_slices_equal_arrows_own(backend, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, 5000, dtype=np.uint8).tobytes()
    n = int(rng.integers(0, 300))
    cuts = np.sort(rng.integers(0, len(data), 2 * n))
    starts, ends = cuts[0::2], cuts[1::2]
    sizes = np.where(rng.random(n) < 0.2, -1, ends - starts)  # a fifth absent
    from kafkacodec.storage.segments.columnar import binary_array
    got = alike(lambda: binary_array(pa.py_buffer(data), starts, sizes), backend, same=pa.Array.equals)
    assert got.null_count == int((sizes < 0).sum())
    assert got.to_pylist() == [None if s < 0 else data[a:a + s] for a, s in zip(starts, sizes)]


@compiled
def test_gather_refuses_slices_outside_the_buffer():
    src = np.frombuffer(b"abcdef", np.uint8)
    for start, size in ((4, 3), (-1, 2), (7, 1)):
        with pytest.raises(ValueError, match="outside a buffer of 6 bytes"):
            kernels.compiled.gather(src, np.array([start], np.int64), np.array([size], np.int64), False,
                                    pa.allocate_buffer)


def test_pure_mode_is_chosen_by_the_environment():
    probe = ("from kafkacodec.runtime import kernels, compiled; import kafkacodec.codec.records; "
             "print(kernels.compiled, compiled.compiled_types())")
    env = dict(os.environ, KAFKACODEC_PURE="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None []"


@pytest.mark.skipif(os.environ.get("KAFKACODEC_EXPECT_COMPILED") != "1", reason="make test sets it")
def test_make_test_runs_with_the_compiled_kernels():
    assert kernels.compiled is not None, "make install did not build runtime/_kernels.pyx"


def test_the_pure_backend_runs_no_compiled_code():
    """Every function of a compiled module that a module of the package holds is swapped back by
    the pure backend, but the iterator of a plain batch's one record (its Python version is
    replaced when codec.records is imported, and gives the same) and the allocator of the
    generated modules with extension types (which stay in place: their Python readers fill
    them)."""
    import kafkacodec.cli  # noqa: F401 - every layer that binds kernels, loaded
    import kafkacodec.pipeline.sink_rows  # noqa: F401
    import kafkacodec.storage.segments.columnar  # noqa: F401
    with using("pure"):
        held = compiled_bindings()
    left = ["kafkacodec.codec.records.PlainLegacyBatch.__iter__"] if compiled_types() else []
    left += [f"{module}._new" for module in sorted(GENERATED_TWINS)] if compiled_types() else []
    assert held == left


def columns(seg, positions):
    from kafkacodec.storage.segments.columnar import read_columns
    c = read_columns(seg, positions, verify=False)
    return ([c.offset.tolist(), c.timestamp.tolist(), c.arrow_bytes("key").to_pylist(),
             c.arrow_bytes("value").to_pylist(), c.arrow_headers().to_pylist()])


@pytest.mark.parametrize("seed", range(40))
def test_record_starts_equal_the_vectorised_ones_on_valid_and_damaged_batches(backend, seed):
    import random
    from kafkacodec import write_batch
    rng = random.Random(seed)
    batches, base = [], 0
    for _ in range(rng.randrange(1, 30)):
        n = rng.randrange(1, 40)
        records = [{"key": None if rng.random() < 0.2 else bytes(rng.randrange(50)),
                    "value": None if rng.random() < 0.1 else bytes(rng.randrange(300)), "timestamp": 10 + i,
                    "headers": [("h%d" % j, bytes(rng.randrange(20))) for j in range(rng.randrange(3))]}
                   for i in range(n)]
        batches.append(write_batch(records, base_offset=base))
        base += n
    seg = bytearray(b"".join(batches))
    positions = [sum(map(len, batches[:i])) for i in range(len(batches))]
    got = alike(lambda: columns(bytes(seg), positions), backend)
    assert isinstance(got, list) and len(got[0]) == base
    for _ in range(20):  # damage in the records (the headers' counts and sizes are read before)
        at = rng.choice(positions) + 61 + rng.randrange(200)
        if at < len(seg):
            damaged = bytearray(seg)
            damaged[at] = rng.choice([0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            alike(lambda: columns(bytes(damaged), positions), backend, case=at)


def fields(seg: bytes):
    """The fields columns of every record of one v2 batch (values and dtypes)."""
    from kafkacodec.storage.segments.columnar import read_columns
    fields = read_columns(seg, [0], verify=False).fields
    return {name: (values.tolist(), str(values.dtype)) for name, values in fields.items()}


def odd_record(rng) -> bytes:
    """A record with any of its lengths, counts and varint widths off or unusual."""
    from tests.support import damage
    headers = [(bytes(rng.randrange(4)), rng.choice([None, bytes(rng.randrange(4))])) for _ in range(rng.randrange(4))]
    fields = {"key": rng.choice([None, b"", b"key"]), "value": rng.choice([None, b"", b"value" * rng.randrange(3)]),
              "headers": headers, "attributes": rng.randrange(256),
              "timestamp_delta": rng.choice([0, -1, 1 << 40, -(1 << 62)]), "offset_delta": rng.choice([0, 5, -3])}
    knob = rng.randrange(8)
    if knob == 0:
        fields["key_length"] = rng.choice([-7, -2, 2, 4, 1 << 20])
    elif knob == 1:
        fields["value_length"] = rng.choice([-9, 0, 6, 50])
    elif knob == 2:
        fields["headers_count"] = rng.choice([-1, len(headers) + 1, 1 << 30])
    elif knob == 3:
        fields["length"] = rng.choice([0, 3, 1 << 31, 200])
    elif knob == 4 and headers:
        k, v = headers[0]
        fields["headers"] = [(k, v, rng.choice([-1, len(k) + 1]), rng.choice([-4, 9]))] + headers[1:]
    elif knob == 5:
        fields["widths"] = {rng.choice(["length", "key_length", "value_length", "headers_count",
                                        "header_key_length", "offset_delta"]): rng.choice([2, 5, 6]),
                            "timestamp_delta": rng.choice([None, 10, 11])}
    return damage.raw_record(**fields)


@pytest.mark.parametrize("seed", range(60))
def test_record_columns_in_one_pass_equal_the_generated_ones(backend, seed):
    """The compiled columnar reader generated from the schema (one walk of each batch) against
    Record._starts and Record._columns on batches of ordinary and odd records, whose lengths,
    counts and varint widths disagree with their bytes: the same columns and dtypes, or the same
    error."""
    import random
    from tests.support import damage
    rng = random.Random(seed)
    records = [odd_record(rng) if rng.random() < 0.3 else damage.raw_record(key=b"k%d" % i, value=b"v" * i)
               for i in range(rng.randrange(1, 12))]
    seg = damage.v2_batch(records)
    alike(lambda: fields(seg), backend)


@pytest.mark.parametrize("seed", range(12))
def test_record_columns_of_many_batches_equal_the_generated_ones(backend, seed):
    """Many batches walked section by section, uncompressed (read in place) and compressed
    (joined), one of them odd or not: the same columns as the vectorised reader's, or the same
    error."""
    import random
    from kafkacodec import write_batch
    from kafkacodec.storage.segments.columnar import read_columns
    from kafkacodec.storage.segments.scan import batch_positions
    from tests.support import damage
    rng = random.Random(seed)
    batches = [write_batch([{"key": None if rng.random() < 0.3 else b"k" * rng.randrange(9),
                             "value": None if rng.random() < 0.1 else rng.randbytes(rng.randrange(200)),
                             "headers": [("h%d" % j, rng.choice([None, b"x"])) for j in range(rng.randrange(3))]}
                            for _ in range(rng.randrange(1, 40))], compression=rng.choice(["none", "none", "lz4"]))
               for _ in range(rng.randrange(1, 8))]
    if seed % 2:
        batches[rng.randrange(len(batches))] = damage.v2_batch(
            [odd_record(rng) for _ in range(rng.randrange(1, 4))])
    seg = b"".join(batches)

    def columns():
        c = read_columns(seg, batch_positions(seg), verify=False)
        return {name: (values.tolist(), str(values.dtype)) for name, values in
                {**c.fields, "offset": c.offset, "timestamp": c.timestamp, "batch": c.batch}.items()}
    alike(columns, backend)


def test_record_columns_of_valid_records_come_from_one_pass(patch_type):
    from kafkacodec import write_batch
    from kafkacodec.storage.segments import columnar
    if columnar.Record._columns_compiled is None:
        pytest.skip("the compiled readers are not built")

    def refused(*args):
        raise AssertionError("read by the vectorised columns")
    patch_type(columnar.Record, "_columns", staticmethod(refused))
    patch_type(columnar.Record, "_starts", classmethod(refused))
    seg = write_batch([{"key": b"k%d" % i, "value": None if i % 3 else b"v", "headers": [("h", None)] * (i % 4)}
                       for i in range(50)])
    assert len(columnar.read_columns(seg, [0]).fields["key"]) == 50


def test_record_columns_honour_the_item_limit_for_records_too(backend, monkeypatch):
    from kafkacodec import write_batch
    from kafkacodec.runtime.limits import LIMITS
    seg = write_batch([{"value": b"v"}] * 5)
    monkeypatch.setattr(LIMITS, "max_items", 3)
    got = alike(lambda: fields(seg), backend)
    assert isinstance(got, Raised) and got.kind == "LimitExceededError"


def test_record_columns_in_one_pass_honour_the_item_limit(backend, monkeypatch):
    from kafkacodec import write_batch
    from kafkacodec.runtime.limits import LIMITS
    seg = write_batch([{"value": b"v", "headers": [("h", None)] * 3}])
    monkeypatch.setattr(LIMITS, "max_items", 2)
    got = alike(lambda: fields(seg), backend)
    assert isinstance(got, Raised) and got.kind == "LimitExceededError"


@pytest.mark.parametrize("seed", range(6))
def test_records_sections_from_columns_equal_the_generated_writers(backend, seed):
    """The compiled writer of a records section from Arrow columns against the generated one
    from the same records: null and empty keys and values, headers with null values and keys
    beyond ASCII, timestamps absent or far apart, offsets with gaps; any range of records."""
    import random

    from kafkacodec.codec.records import RecordBatch, _v2_records_section
    from kafkacodec.pipeline.sink_rows import writer_columns

    rng = random.Random(seed)
    n = rng.randrange(1, 300)

    def blob():
        return rng.choice([None, b"", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))])

    headers = [[(rng.choice(["h", "trace-id", "clé", ""]), blob()) for _ in range(rng.choice([0, 0, 1, 3]))]
               for _ in range(n)]
    stamps = [rng.choice([-1, 0, 1_700_000_000_000 + i, 2 ** 62 + i]) for i in range(n)]
    offsets = sorted(rng.sample(range(10 * n), n))
    rows = pa.table({"key": pa.array([blob() for _ in range(n)], pa.binary()),
                     "value": pa.array([blob() for _ in range(n)], pa.binary()),
                     "offset": pa.array(offsets, pa.int64()),
                     "headers": pa.array([[{"key": k, "value": v} for k, v in h] for h in headers],
                                         pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))})

    def generated(start, stop):
        records = [{"key": rows["key"][i].as_py(), "value": rows["value"][i].as_py(), "timestamp": stamps[i],
                    "offset": offsets[i], "headers": headers[i]} for i in range(start, stop)]
        body, *rest = _v2_records_section(records, 0)
        return bytes(body), rest

    def compiled_writer(start, stop):  # None where it leaves the records to the generated writer
        pack = RecordBatch.Record._pack_columns_compiled
        columns = writer_columns(rows, np.array(stamps, np.int64), np.array(sorted({0, start})))
        got = None if pack is None or columns is None else pack(*columns, start, stop)
        return None if got is None else (bytes(got), [stop - start, offsets[start], offsets[stop - 1], stamps[start],
                                                      max(stamps[start:stop])])

    ranges = [(0, n)] + [sorted(rng.sample(range(n + 1), 2)) for _ in range(5)]
    calls = [(f"records {start} to {stop}", (start, stop)) for start, stop in ranges if start != stop]
    kernel_alike(generated, compiled_writer, calls, backend, errors=())


@pytest.mark.parametrize("seed", range(8))
def test_the_columnar_writer_writes_back_what_the_columnar_reader_read(seed):
    """Generated as inverses from one schema: the records sections of batches (several at once,
    any sub-range of their records) read into columns and written from them are the same bytes."""
    import random
    from kafkacodec import write_batch
    from kafkacodec.codec.records import RecordBatch
    from kafkacodec.runtime.limits import LIMITS
    read, write = RecordBatch.Record._columns_compiled, RecordBatch.Record._pack_columns_compiled
    if write is None:
        pytest.skip("the compiled readers are not built")
    rng = random.Random(seed)
    batches = [write_batch([{"key": rng.choice([None, b"", b"k" * rng.randrange(300)]),
                             "value": rng.choice([None, rng.randbytes(rng.randrange(200))]),
                             "timestamp": rng.choice([-1, 2 ** 40 + rng.randrange(1 << 30)]),
                             "headers": [(rng.choice(["h", "clé", ""]), rng.choice([None, b"", b"x"]))
                                         for _ in range(rng.choice([0, 0, 2]))]}
                            for _ in range(rng.randrange(1, 30))], base_offset=rng.randrange(1 << 40))
               for _ in range(rng.randrange(1, 5))]
    seg = b"".join(batches)
    u8 = np.frombuffer(seg, np.uint8)
    at = np.cumsum([0] + [len(b) for b in batches])
    counts = np.array([RecordBatch.read(b)[0].records_count for b in batches], np.int64)
    cols = read(u8, at[:-1] + 61, at[1:], counts, LIMITS.max_items)
    data = dict.fromkeys(["key", "value", "headers.key", "headers.value"], u8)
    assert write(cols, data, 0, int(counts.sum())) == b"".join(b[61:] for b in batches)
    first, stop = sorted(rng.sample(range(int(counts.sum()) + 1), 2))
    records = [r for b in batches for r in RecordBatch.read(b)[0].records.items][first:stop]
    assert write(cols, data, first, stop) == b"".join(r.to_bytes() for r in records)


@pytest.mark.skipif(not compiled_types(), reason="the compiled writers are not built")
def test_records_sections_from_columns_leave_the_irregular_to_the_generated_writer():
    from kafkacodec.codec.records import RecordBatch
    from kafkacodec.pipeline.sink_rows import writer_columns

    def columns(offsets, headers=None):
        n = len(offsets)
        table = {"value": pa.array([b"v"] * n, pa.binary()), "offset": pa.array(offsets, pa.int64())}
        if headers is not None:
            table["headers"] = pa.array(headers, pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))
        return writer_columns(pa.table(table), np.full(n, 5, np.int64), np.array([0]))

    write = RecordBatch.Record._pack_columns_compiled
    assert write(*columns([0, 1]), 0, 2) is not None
    assert write(*columns([0, 2 ** 31]), 0, 2) is None  # the offset delta leaves 32 bits
    assert write(*columns([0], [[{"key": None, "value": b"x"}]]), 0, 1) is None  # a header without a key
    assert columns([-2 ** 63, 2 ** 63 - 1]) is None  # a delta beyond 64 bits
    cols, data = columns([0, 1])
    data["value"] = np.zeros(1, np.uint8)  # value positions past the value bytes
    with pytest.raises(ValueError, match="outside its data"):
        write(cols, data, 0, 2)
    with pytest.raises(ValueError, match="holds 3 values, fewer than 4"):  # the header starts
        write(*columns([0, 1]), 0, 3)
    for stop in ((1 << 62) + 1, (1 << 63) - 1):  # no sum past 64 bits
        with pytest.raises(ValueError, match="no instances"):
            write(*columns([0, 1]), 0, stop)
    cols, data = columns([0, 1])
    cols["headers"] = np.array([-(1 << 63), (1 << 63) - 1, 0])  # no difference of them taken
    with pytest.raises(ValueError, match="headers: item starts outside"):
        write(cols, data, 0, 2)
    for odd in (np.array([0.5, 1.5]), np.array([0, 1], np.uint64), np.zeros((2, 2), np.int64)):
        cols, data = columns([0, 1])
        cols["offset_delta"] = odd
        with pytest.raises(ValueError, match="integers that fit int64"):
            write(cols, data, 0, 2)
    cols, data = columns([0, 1])
    expected = write(cols, data, 0, 2)
    cols["attributes"] = cols["timestamp_delta"] = None  # absent: their defaults, as without them
    assert write(cols, data, 0, 2) == expected


def test_groups_of_records_join_into_one_set_of_columns(monkeypatch, backend):
    """Records read in groups (CRCs checked group by group; the vectorised reader's chunks) give
    the columns of one read, also when a group's items number one more than its records, which
    a first-item index column also does."""
    import random
    from kafkacodec import write_batch
    from kafkacodec.storage.segments import columnar
    from kafkacodec.storage.segments.scan import batch_positions
    rng = random.Random(5)
    batches = [write_batch([{"key": b"k", "value": b"v" * rng.randrange(50),
                             "headers": [("h", b"x")] * (2 if i == 0 else 1)} for i in range(rng.randrange(1, 9))])
               for _ in range(40)]
    seg = b"".join(batches)
    positions = batch_positions(seg)
    whole = columnar.read_columns(seg, positions)
    monkeypatch.setattr(columnar, "WALK_BYTES", 300)
    monkeypatch.setattr(columnar, "ONE_WALK_BYTES", 300)
    monkeypatch.setattr(columnar, "CHUNK_RECORDS", 5)
    monkeypatch.setattr(columnar, "CHUNK_RECORDS_MIN", 1)
    with using(backend):
        grouped = columnar.read_columns(seg, positions)
    assert set(grouped.fields) == set(whole.fields)
    for name, values in whole.fields.items():
        assert grouped.fields[name].tolist() == values.tolist(), name
    assert grouped.offset.tolist() == whole.offset.tolist()


def test_a_damaged_header_after_a_bad_crc_raises_the_bad_crc_first(backend):
    """CRCs are checked group by group, after every header is read: the first damage in the
    segment is still the one raised, whatever the later batches hold."""
    from kafkacodec import write_batch
    from kafkacodec.runtime.errors import DecodeError
    from kafkacodec.storage.segments.columnar import read_columns
    good = [write_batch([{"value": b"v%d" % i}]) for i in range(3)]
    bad_crc = bytearray(good[0])
    bad_crc[17] ^= 1  # the stored CRC itself: the records stay sound
    bad_magic = bytearray(good[2])
    bad_magic[16] = 3
    for later in (bytes(bad_magic), good[2][:-5]):
        seg = bytes(bad_crc) + good[1] + later
        with using(backend), pytest.raises(DecodeError) as err:
            read_columns(seg, [0, len(good[0]), len(good[0]) + len(good[1])])
        assert type(err.value).__name__ == "ChecksumError" and err.value.position == 0
        assert read_columns(seg, [0, len(good[0])], verify=False).offset.tolist() == [0, 0]
