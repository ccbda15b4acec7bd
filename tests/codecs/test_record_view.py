"""The record view of the legacy schema (-record in schemas/legacy_log_entry.ksy, read by the
generated `_record_run`, compiled and Python: runs of plain entries, and a
compressed wrapper's inner messages, straight into records) against the facade's reading through
the generated entry objects, on the same bytes, valid and mutated, under each backend
(tests/support/roundtrip.py): the same batches, records and errors (class, position, path,
message), with CRCs checked or not."""
import random
import struct
import subprocess
import sys
import zlib

import pytest

from tests.support import damage
from tests.support.roundtrip import alike, kernel_alike, patched, using

from kafkacodec.codec import records
from kafkacodec import read_batches, write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.runtime import kernels
from kafkacodec.runtime.errors import KafkaCodecError
from kafkacodec.runtime.limits import LIMITS

compiled_only = pytest.mark.skipif(LegacyLogEntry._held_iter is None, reason="the compiled readers are not built")


def outcome(buf, verify: bool):
    """Every batch of a segment as plain values, entry objects and records included, then the
    error that stopped the reading, if any."""
    out = []
    try:
        for batch in read_batches(buf, verify=verify):
            out.append(("yielded", batch.position))  # an error after this is one the reading missed
            # the records first: a batch read by the kernel reads its entry only when asked for it
            recs = [(r.key, r.value, r.timestamp, r.offset, r.headers, r.timestamp_type) for r in batch]
            out.append((batch.position, batch.size, batch.magic, batch.is_legacy, batch.compression,
                        batch.base_offset, batch.last_offset, recs, batch.crc, batch.crc_valid,
                        batch.entry.to_dict()))
    except KafkaCodecError as err:
        out.append((type(err).__name__, err.position, err.path, str(err)))
    return out


# the ways of reading plain v0/v1 messages beside the backend's record view: the generated
# entry objects alone (the view taking nothing), and under the compiled backend the pure one
READERS = {
    "the generated reader": lambda: patched(records, _plain_entries=lambda buf, pos, *_: ([], pos),
                                            _wrapped_records=lambda *_: None),
    "pure": lambda: using("pure"),
}


def read_alike(buf, verify: bool, backend: str) -> list:
    """The outcome of the record view of `backend`, after checking that the generated reader
    (and under the compiled backend, the pure one) gives the same."""
    ways = READERS if backend == "compiled" else {"the generated reader": READERS["the generated reader"]}
    return alike(lambda: outcome(buf, verify), backend, ways=ways)


def segment(rng: random.Random) -> bytes:
    """Plain entries and wrappers of both magics (create and log-append time), odd lengths
    included: null, empty and long keys and values, and key lengths below -1."""
    out, base = [], 0
    for _ in range(rng.randrange(3, 8)):
        magic = rng.choice([0, 1])
        n = rng.randrange(1, 9)
        recs = [{"key": rng.choice([None, b"", rng.randbytes(rng.randrange(1, 40))]),
                 "value": rng.choice([None, b"", rng.randbytes(rng.randrange(1, 400))]),
                 "timestamp": rng.randrange(-1, 1 << 41)} for _ in range(n)]
        codec = rng.choice(["none", "none", "gzip", "snappy", "lz4"])
        append = rng.random() < 0.3
        out.append(write_batch(recs, magic=magic, base_offset=base, compression=codec,
                               timestamp_type="LogAppendTime" if append else "CreateTime",
                               log_append_time=rng.randrange(1 << 41) if append else None))
        if rng.random() < 0.2:  # a null key stored with a length below -1, as Kafka reads it too
            out.append(damage.legacy_entry(base + n, None, b"v", magic=magic).replace(
                b"\xff\xff\xff\xff", struct.pack(">i", -7), 1))
            out[-1] = damage.with_valid_crc(out[-1])
            n += 1
        base += n
    return b"".join(out)


def mutated(rng: random.Random, seg: bytes) -> bytes:
    out = bytearray(seg)
    at = rng.randrange(len(out))
    kind = rng.random()
    if kind < 0.6:
        out[at] = rng.choice([0x00, 0x01, 0x07, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif kind < 0.8:
        del out[at:]
    else:
        out[at:at] = bytes([rng.randrange(256)])
    return bytes(out)


@pytest.mark.parametrize("seed", range(25))
def test_segments_read_alike_valid_and_mutated(seed, backend):
    rng = random.Random(seed)
    seg = segment(rng)
    for verify in (True, False):
        got = read_alike(seg, verify, backend)
        assert got[-1][0] + got[-1][1] == len(seg) and len(got) % 2 == 0
    for _ in range(60):
        bad = mutated(rng, seg)
        if rng.random() < 0.5:  # damage past the CRCs too
            bad = damage.with_valid_crcs(bad)
        for verify in (True, False):
            read_alike(bad, verify, backend)


@pytest.mark.parametrize("name, entry, error", list(damage.damaged_legacy_entries()))
def test_damaged_wrappers_give_the_generated_readers_error(name, entry, error, backend):
    seg = damage.legacy_entry(0, b"k", b"v") + entry
    got = {verify: read_alike(seg, verify, backend) for verify in (True, False)}
    assert got[True][-1][0] == error


@pytest.mark.parametrize("magic", [0, 1])
def test_wrappers_with_unusual_inner_offsets_read_alike(magic, backend):
    """Inner offsets that are negative, out of order or past the last one, under a wrapper at an
    offset and at offset 0, read as Kafka reads them."""
    for offsets in ([0, 1, 2], [-3, 0, 1], [2, 0, 1], [0, 5, 1], [0, 1, 1 << 62], [-(1 << 63), 0, 0],
                    [0, (1 << 63) - 1]):
        inner = b"".join(damage.legacy_entry(o, b"k", b"v%d" % o, magic=magic) for o in offsets)
        for wrapper_offset in (0, 10, 1 << 62, -2):  # (-2 less the last: a difference beyond 64 bits)
            seg = damage.legacy_wrapper(inner, magic=magic, offset=wrapper_offset)
            read_alike(seg, True, backend)


@pytest.mark.parametrize("magic", [0, 1])
def test_sizes_and_lengths_off_by_a_little_read_alike(magic, backend):
    """A message size, key length or value length a few bytes off, the CRC valid over whatever
    the size covers: a message ending before or after its value, a field running past it."""
    entry = damage.legacy_entry(3, b"key", b"value", magic=magic)
    key_at = damage.LOG_OVERHEAD + 6 + 8 * magic
    value_at = key_at + 4 + 3
    for field_at in (8, key_at, value_at):
        for delta in (-2, -1, 1, 2, 9):
            bad = bytearray(entry + b"\0" * 9)
            struct.pack_into(">i", bad, field_at, struct.unpack_from(">i", bad, field_at)[0] + delta)
            size = struct.unpack_from(">i", bad, 8)[0]
            seg = damage.with_valid_crc(bytes(bad[:damage.LOG_OVERHEAD + max(size, 0)]))
            seg += damage.legacy_entry(4, b"k", b"v", magic=magic)
            for verify in (True, False):
                read_alike(seg, verify, backend)
    for size in range(14, 20):  # too small for the fields, at the end of the buffer
        seg = damage.with_valid_crc(struct.pack(">qi", 3, size) + entry[12:12 + size])
        for verify in (True, False):
            read_alike(seg, verify, backend)


def test_valid_entries_are_read_without_entry_objects(monkeypatch, patch_type):
    """With the Python reader of inner message sets failing the test, and that of entries
    failing it for plain ones, valid segments still read: nothing is handed back to them."""
    rng = random.Random(7)
    segs = [segment(rng) for _ in range(10)]
    read_entry = LegacyLogEntry.read

    def wrappers_only(buf, pos, end, verify):
        assert buf[pos + 17] & 0x07, "a plain entry fell back to the Python reader"
        return read_entry(buf, pos, end, verify)

    def refused(*args, **kwargs):
        raise AssertionError("an inner message set fell back to the Python reader")
    patch_type(LegacyLogEntry.MessageSet, "_read", classmethod(refused))
    view = staticmethod(lambda *args: LegacyLogEntry._record_run(*args))  # the record view as it is
    monkeypatch.setattr(records, "LegacyLogEntry", type("Spy", (), {"read": staticmethod(wrappers_only),
                                                                     "_record_run": view}))
    wrappers = 0
    for seg in segs:
        for batch in read_batches(seg):
            assert list(batch)
            wrappers += batch.compression != "none"
    assert wrappers > 5


def test_a_plain_batch_reads_its_entry_as_the_python_reader_does():
    seg = damage.legacy_entry(5, b"k", b"v", magic=1)
    bad_crc = seg[:-1] + b"w"
    for data, verify in ((seg, True), (bad_crc, False)):
        batch = list(read_batches(seg + data, verify=verify))[1]
        assert isinstance(batch, records.PlainLegacyBatch)
        batch.position += 1000  # as readers of files set it: the entry is still found in the buffer
        assert batch.entry == LegacyLogEntry.read(data, verify=verify)[0]
        assert batch.crc_valid is (data == seg) and (batch.magic, batch.base_offset) == (1, 5)


def test_runs_are_bounded(backend):
    """A reader of plain entries makes at most `max_entries` batches a call: reading a large
    segment holds no more than one run at a time."""
    seg = write_batch([{"value": b"x"}] * 50, magic=1)

    def run():  # the backend's reader of runs: the compiled record view, or the Python one
        made, pos = records._plain_entries(seg, 0, len(seg), True, LIMITS.max_batch_bytes, 7)
        return pos, [(b.position, b.size) for b in made], [r.offset for b in made for r in b]
    pos, spans, offsets = alike(run, backend)
    assert len(spans) == 7 and pos == spans[-1][0] + spans[-1][1]
    assert offsets == list(range(7))


def test_entries_larger_than_the_limit_are_refused_alike(monkeypatch, backend):
    seg = write_batch([{"value": b"x" * 100}] * 3, magic=1)
    monkeypatch.setattr(LIMITS, "max_batch_bytes", 50)
    assert read_alike(seg, True, backend)[-1][0] == "LimitExceededError"


def test_the_crc_of_the_kernel_is_zlibs(backend):
    """By table below 64 bytes, folded above (runtime/_crc32_fold.h): every length about each
    place where the folding changes step (64 bytes, each 16 more, each 64 more), at every
    alignment of the bytes in memory, and long inputs of all ones and all zeros."""
    rng = random.Random(1)
    known = [("nothing", (b"",), 0), ("CRC-32's check value", (b"123456789",), 0xCBF43926)]
    lengths = list(range(200)) + [rng.randrange(200, 5000) for _ in range(40)] + [1 << 20]
    data = rng.randbytes(max(lengths) + 16)
    calls = known + [(f"{n} random bytes from byte {at}", (memoryview(data)[at:at + n],))
                     for n in lengths for at in ((0, 1, 7) if n < 300 else (0, 3))]
    calls += [(f"{n} bytes of {fill:#x}", (bytes([fill]) * n,)) for n in (64, 1000, 65536) for fill in (0, 0xFF)]
    kernel_alike(zlib.crc32, kernels.compiled and kernels.compiled.crc32, calls, backend)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_wrapper_built_as_objects_gives_its_records(magic):
    inner = [LegacyLogEntry(offset=i, message=LegacyLogEntry.LegacyMessage(
        magic=magic, attributes=0, key=b"k%d" % i, value=b"v", timestamp=5 + i if magic else None))
        for i in range(3)]
    wrapper = LegacyLogEntry(offset=12, message=LegacyLogEntry.LegacyMessage(
        magic=magic, attributes=1, key=None, value=LegacyLogEntry.MessageSet(entries=inner),
        timestamp=9 if magic else None))
    got = [(r.key, r.offset, r.timestamp) for r in records.legacy_records(wrapper)]
    assert got == [(b"k%d" % i, 10 + i if magic else i, 5 + i if magic else -1) for i in range(3)]
    again = next(read_batches(wrapper.to_bytes()))
    assert [(r.key, r.offset, r.timestamp) for r in again] == got


REENTERED = """
import gc
import kafkacodec
from kafkacodec.codec import records
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
buf = kafkacodec.write_batch([{"key": b"k", "value": b"v"}] * 200, magic=1)
class Big:  # another holder and record class, bound by a gc callback in the middle of each run
    __slots__ = tuple(f"pad{i}" for i in range(300)) + ("rec", "at")
class Row:
    __slots__ = tuple(f"pad{i}" for i in range(300)) + ("key", "value", "offset", "timestamp", "timestamp_type",
                                                        "headers")
rows = [Row() for _ in range(3)]
for row in rows:
    row.key = row.value = None; row.offset = row.timestamp = None; row.headers = []
def other(phase, info):
    if phase == "start":
        LegacyLogEntry._record_run(buf, 0, 36, False, 1, (Big, (("at", "start"), ("rec", "record")), Row), 0, -1, 100)
        RecordBatch.Record._pack_run(bytearray(), rows, Row, 0, -1, 0)
gc.callbacks.append(other)
gc.set_threshold(5)
many = [records.Record(value=b"v" * 30, offset=i) for i in range(300)]
for _ in range(30):
    out, _ = LegacyLogEntry._record_run(buf, 0, len(buf), False, 1000, records._PLAIN_INTO, 0, -1, 1000)
    assert [r.offset for b in out for r in b] == list(range(200))
    assert RecordBatch.Record._pack_run(bytearray(), many, records.Record, 0, -1, 0)[0] == 300
print("ok")
"""


@compiled_only
def test_runs_keep_their_classes_while_a_gc_callback_binds_others():
    """A gc callback (or a finaliser) reading and writing with other classes in the middle of a
    compiled run does not change the slots the run fills or reads (it used to, and crash)."""
    run = subprocess.run([sys.executable, "-c", REENTERED], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@compiled_only
def test_classes_python_would_refuse_are_refused():
    """Not a class, one object.__new__ refuses (it needs its own allocator), slots that are
    another class's, more than 16 holder slots: TypeError or ValueError, nothing made."""
    buf = write_batch([{"key": b"k", "value": b"v"}] * 3, magic=1)
    run = LegacyLogEntry._record_run

    class Big:
        __slots__ = tuple(f"s{i}" for i in range(50)) + tuple(records.Record.__slots__)

    class Borrowing:
        key, value, offset, timestamp, timestamp_type, headers = (Big.__dict__[n] for n in records.Record.__slots__)

    class Mapping(dict):
        __slots__ = tuple(records.Record.__slots__)

    class Wide:
        __slots__ = tuple(f"s{i}" for i in range(17))
    for into in (int, None, Borrowing, Mapping):
        with pytest.raises(TypeError):
            run(buf, 0, len(buf), True, 5, into, 0, -1, 100)
    with pytest.raises(ValueError):
        run(buf, 0, len(buf), True, 5, (Wide, tuple((f"s{i}", "start") for i in range(17)), records.Record), 0, -1, 100)
    assert len(run(buf, 0, len(buf), True, 5, records.Record, 0, -1, 100)[0]) == 3  # and the right one after


@compiled_only
def test_a_plain_batch_iterates_whatever_else_is_bound():
    buf = write_batch([{"key": b"k", "value": b"v"}] * 2, magic=1)
    batch = next(read_batches(buf))

    class Other:
        __slots__ = ("rec",)

    class Sub(records.PlainLegacyBatch):
        __slots__ = ()
    LegacyLogEntry._bind_into((Other, (("rec", "record"),), records.Record))
    assert [r.value for r in batch] == [b"v"]
    sub = Sub.__new__(Sub)
    sub._record = records.Record(value=b"w")
    assert [r.value for r in sub] == [b"w"]


@compiled_only
def test_a_holder_subclass_with_its_own_record_slot_iterates_it():
    class Mine(records.PlainLegacyBatch):
        __slots__ = ("_record",)  # a slot of its own, at another offset than its base's
    mine = Mine.__new__(Mine)
    mine._record = records.Record(value=b"mine")
    assert [r.value for r in mine] == [b"mine"]
