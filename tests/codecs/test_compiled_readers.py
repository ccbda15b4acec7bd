"""The compiled readers of the -hot types against the Python readers on the same bytes, valid
and mutated, under each backend (tests/support/roundtrip.py): the same values, the same
re-encoded bytes (those of the input, where it is valid), the same errors (class, position,
path, message); and how a generated module chooses them."""
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import damage
from tests.support.fallback import python_readers_refused
from tests.support.roundtrip import alike

from kafkacodec import write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime import compiled
from kafkacodec.runtime.errors import KafkaCodecError

ROOT = Path(__file__).resolve().parents[2]
built = pytest.mark.skipif(not compiled.compiled_types(), reason="the compiled readers are not built")


def segment(rng: random.Random, batches: int = 4) -> bytes:
    out, base = [], 0
    for b in range(batches):
        n = rng.randrange(1, 30)
        records = [{"key": None if rng.random() < 0.2 else bytes(rng.randrange(40)),
                    "value": None if rng.random() < 0.1 else rng.randbytes(rng.randrange(300)),
                    "timestamp": rng.randrange(-5, 1 << 45),
                    "headers": [("h\u00e9%d" % j, None if rng.random() < 0.2 else bytes(rng.randrange(9)))
                                for j in range(rng.randrange(3))]} for _ in range(n)]
        out.append(write_batch(records, base_offset=base, compression=rng.choice(["none", "none", "gzip", "zstd"]),
                               log_append_time=rng.randrange(1 << 40) if b % 3 == 2 else None))
        base += n
    return b"".join(out)


def decoded(buf, pos: int = 0):
    """Every batch from pos as plain values (records decoded, checksums checked), or the error
    that stopped the reading, in a form both backends must give alike."""
    out = []
    try:
        while pos < len(buf):
            batch, end = RecordBatch.read(buf, pos, verify=False)
            records = batch.records
            out.append((pos, end, batch.to_dict(), batch.crc_valid, repr(records.items[:2]),
                        [(r.offset, r.timestamp, r._parent is records) for r in records.items],
                        batch.to_bytes()))
            pos = end
    except KafkaCodecError as err:
        out.append((type(err).__name__, err.position, err.path, str(err)))
    return out


def decoded_legacy(buf, pos: int = 0):
    """decoded() for legacy log entries, a compressed wrapper's inner messages included."""
    out = []
    try:
        while pos < len(buf):
            entry, end = LegacyLogEntry.read(buf, pos, verify=False)
            out.append((pos, end, entry.to_dict(), entry.message.crc_valid, entry.to_bytes()))
            pos = end
    except KafkaCodecError as err:
        out.append((type(err).__name__, err.position, err.path, str(err)))
    return out


def rebuilt_as_read(buf, batches) -> bool:
    """Whether each batch read (a row of decoded() or decoded_legacy()) writes its bytes back."""
    return all(row[-1] == bytes(buf[row[0]:row[1]]) for row in batches)


def legacy_segment(rng: random.Random, magic: int) -> bytes:
    out, base = [], 0
    for _ in range(4):
        n = rng.randrange(1, 12)
        records = [{"key": None if rng.random() < 0.2 else bytes(rng.randrange(30)),
                    "value": None if rng.random() < 0.1 else rng.randbytes(rng.randrange(200)),
                    "timestamp": rng.randrange(1 << 41)} for _ in range(n)]
        out.append(write_batch(records, magic=magic, base_offset=base, compression=rng.choice(["none", "gzip"])))
        base += n
    return b"".join(out)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("seed", range(15))
def test_legacy_entries_read_alike_valid_and_mutated(magic, seed, backend):
    rng = random.Random(seed)
    seg = legacy_segment(rng, magic)
    for buf in (seg, bytearray(seg), memoryview(b"x" + seg)[1:]):
        got = alike(lambda: decoded_legacy(buf), backend)
        assert got[-1][1] == len(seg) and rebuilt_as_read(seg, got)
    for _ in range(40):
        damaged = bytearray(seg)
        at = rng.randrange(len(damaged))
        if rng.random() < 0.7:
            damaged[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        else:
            del damaged[at:]
        alike(lambda: decoded_legacy(bytes(damaged)), backend, case=at)


@pytest.mark.parametrize("seed", range(25))
def test_valid_segments_read_alike_from_every_kind_of_buffer(seed, backend):
    rng = random.Random(seed)
    seg = segment(rng)
    for buf in (seg, bytearray(seg), memoryview(seg), memoryview(b"xx" + seg)[2:]):
        got = alike(lambda: decoded(buf), backend)
        assert got and isinstance(got[-1][0], int) and got[-1][1] == len(seg) and rebuilt_as_read(seg, got)


@pytest.mark.parametrize("seed", range(40))
def test_mutated_segments_give_the_same_values_or_the_same_error(seed, backend):
    rng = random.Random(1000 + seed)
    seg = segment(rng, 3)
    for _ in range(40):
        damaged, case = damage.mutated(seg, rng)
        alike(lambda: decoded(damaged), backend, case=case)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 70))
def test_arbitrary_bytes_after_a_valid_header_read_alike(backend, tail, cut):
    head = write_batch([{"key": b"k", "value": b"v" * 20, "headers": [("a", b"b")]}] * 3)[:cut]
    alike(lambda: decoded(head + tail), backend)


# the varints of a record, each with the most bytes Kafka allows it
LONGEST = {"length": 5, "timestamp_delta": 10, "offset_delta": 5, "key_length": 5, "value_length": 5,
           "headers_count": 5, "header_key_length": 5, "header_value_length": 5}


@st.composite
def records_section(draw):
    """Records field by field: any attribute byte, deltas over their whole range, null and
    non-UTF-8 header keys, redundant varint bytes, and lengths and counts a little off."""
    off = st.sampled_from([0, 0, 0, 1, -1])
    out = bytearray()
    count = draw(st.integers(0, 4))
    for _ in range(count):
        key, value = draw(st.none() | st.binary(max_size=12)), draw(st.none() | st.binary(max_size=12))
        fields = dict(key=key, value=value, attributes=draw(st.integers(0, 255)),
                      timestamp_delta=draw(st.integers(-2 ** 63, 2 ** 63 - 1)),
                      offset_delta=draw(st.integers(-2 ** 31, 2 ** 31 - 1)),
                      key_length=None if key is None else len(key) + draw(off),
                      value_length=None if value is None else len(value) + draw(off),
                      headers=draw(st.lists(st.tuples(st.binary(max_size=6), st.none() | st.binary(max_size=6)),
                                            max_size=3)))
        # as short as can be (a width at most that), longer, exactly the longest allowed, or a byte too long
        widths = {name: draw(st.none() | st.integers(1, longest + 1)) for name, longest in LONGEST.items()}
        body = damage.raw_record(**fields, length=0, widths={**widths, "length": None})[1:]
        out += damage.raw_record(**fields, length=len(body) + draw(st.sampled_from([0, 0, 0, 0, 1, -1])),
                                 widths=widths)
    return count + draw(off), bytes(out)


@settings(max_examples=400, deadline=None)
@given(records_section(), st.integers(0, 0x7FF8), st.integers(-2 ** 63, 2 ** 63 - 1),
       st.integers(-2 ** 63, 2 ** 63 - 1))
def test_records_field_by_field_read_alike(backend, section, attributes, base_offset, base_timestamp):
    count, body = section
    header = struct.pack(">qiibIhiqqqhii", base_offset, 49 + len(body), -1, 2, 0, attributes & ~7, count,
                         base_timestamp, base_timestamp ^ 1, -1, -1, -1, count)
    alike(lambda: decoded(header + body), backend)


def test_limits_set_at_run_time_are_honoured_alike(backend):
    from kafkacodec.runtime.limits import LIMITS
    seg = write_batch([{"value": b"x", "headers": [("h", b"")] * 5}] * 20)
    saved = LIMITS.max_items
    try:
        LIMITS.max_items = 4
        got = alike(lambda: decoded(seg), backend)
    finally:
        LIMITS.max_items = saved
    assert got[0][0] == "LimitExceededError"


def test_a_record_read_on_its_own_has_no_parents_alike(backend):
    batch = RecordBatch.from_bytes(write_batch([{"key": b"k", "value": b"v", "headers": [("h", b"1")]}]))
    raw = batch.records_bytes().tobytes()
    record, end = alike(lambda: RecordBatch.Record._read(raw, 0, len(raw), None), backend)
    assert end == len(raw) and record.offset is None


@built
@pytest.mark.parametrize("module_name", ["record_batch", "legacy_log_entry"])
def test_valid_input_is_read_by_compiled_code_alone(module_name):
    """With the compiled module bound to Python readers that fail the test, valid segments read
    all the same: nothing is handed back."""
    import importlib
    generated = importlib.import_module(f"kafkacodec.generated.{module_name}")
    fast = importlib.import_module(f"kafkacodec.generated._c_{module_name}")
    swaps = [s for s in compiled._SWAPS if s.pure.__module__ == generated.__name__]
    rng = random.Random(3)
    with python_readers_refused(fast, swaps):
        for _ in range(10):
            seg = segment(rng) if module_name == "record_batch" else legacy_segment(rng, rng.choice([0, 1]))
            read = decoded if module_name == "record_batch" else decoded_legacy
            assert isinstance(read(seg)[-1][0], int)
            with pytest.raises(AssertionError, match="fell back"):
                read(seg[:-1])


GC_WALKER = """
import gc
from kafkacodec import write_batch
from kafkacodec.generated.record_batch import RecordBatch
# lists longer than the threshold below: a collection falls inside the filling of each
data = write_batch([{"key": b"k", "value": b"v", "headers": [("h", b"")] * 100}] * 60)
def walk(phase, info):  # what a memory profiler does: look at every object the collector tracks
    for o in gc.get_objects():
        if type(o) is list:
            for _ in o:
                pass
gc.callbacks.append(walk)
gc.set_threshold(50)
for _ in range(3):
    assert len(RecordBatch.read(data)[0].records.items) == 60
print("ok")
"""


@built
def test_a_collection_during_a_read_never_sees_a_list_being_filled():
    """Lists are appended to: Python code run by a collection (a gc callback, a finaliser, another
    thread) may see them, and must never meet an empty slot (that was a crash)."""
    out = subprocess.run([sys.executable, "-c", GC_WALKER], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def test_buffers_read_otherwise_by_python_are_left_to_it(backend):
    """Only bytes, bytearray, mmap and memoryviews of unsigned bytes are read by compiled code: an
    array or a memoryview of another format the Python reader reads as it is, and so it decides."""
    import array
    data = write_batch([{"key": b"KKKK", "value": b"v" * 100, "headers": [("h", b"x")]}] * 3)

    def read(buf):
        batch, end = RecordBatch.read(buf)
        return end, [(type(r.key).__name__, bytes(r.key), bytes(r.value)) for r in batch.records.items]
    for buf in (memoryview(data).cast("b"), memoryview(data).cast("c"), array.array("B", data),
                array.array("b", data), memoryview(data)[::1], bytearray(data)):
        # whatever each reader raises, it must be the same
        alike(lambda: read(buf), backend, errors=Exception, case=buf)


@pytest.mark.parametrize("field,value", [("base_offset", 1.5), ("base_timestamp", 2.5), ("records_count", 3.0),
                                         ("attributes", 8.0), ("base_offset", "7")])
def test_enclosing_fields_that_are_not_ints_are_left_to_python(field, value, backend):
    """A batch's fields are read by its records' reader; one set to something else than an int
    keeps Python's arithmetic (or error), not a C conversion."""
    def read():
        batch = RecordBatch.from_bytes(write_batch([{"value": b"v"}] * 3, base_offset=10))
        setattr(batch, field, value)
        return [(r.offset, r.timestamp) for r in batch.records.items]
    alike(read, backend, errors=Exception)  # the same exception from both, whatever it is


def test_pure_restores_what_was_in_place():
    with compiled.pure():
        with compiled.pure():
            pass
        assert compiled.compiled_types() == []


@built
def test_a_build_of_other_source_is_not_used():
    assert compiled.load("kafkacodec.generated._c_record_batch", "0" * 64) is None
    assert compiled.load("kafkacodec.generated._c_no_such_module", "0" * 64) is None


def test_pure_mode_reads_with_the_python_readers():
    code = ("from kafkacodec.generated import record_batch; from kafkacodec.runtime import compiled; "
            "print(compiled.compiled_types())")
    env = {**os.environ, "KAFKACODEC_PURE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


@pytest.mark.skipif(os.environ.get("KAFKACODEC_EXPECT_COMPILED") != "1", reason="make test sets it")
def test_make_test_runs_with_the_compiled_readers():
    assert set(compiled.compiled_types()) >= {
        "RecordBatch", "RecordBatch.Records", "RecordBatch.Record", "RecordBatch.Header",
        "LegacyLogEntry", "LegacyLogEntry.LegacyMessage", "LegacyLogEntry.MessageSet"}
