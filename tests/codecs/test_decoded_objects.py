"""Objects read from bytes behave as values: size() is a query that changes nothing and agrees
with to_bytes(), which gives back the bytes read (whatever compressor made them); any buffer
reads, byte fields are bytes; copies and pickles work before and after decoding; every class's
from_bytes and read either work or raise the package's typed errors."""
import copy
import mmap
import pickle
import random
import struct
import zlib

import lz4.block
import pytest
import zstandard

from tests.support import damage
from tests.support import TESTS
from kafkacodec import generated, read_batches, write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.codecs import snappy_codec
from kafkacodec.runtime.errors import KafkaCodecError, UsageError
from kafkacodec.runtime.support import LAZY
from tests.codecs.test_fuzz import SEEDS

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
LIBRDKAFKA = sorted((TESTS / "fixtures" / "librdkafka").glob("v2_*.bin"))


def records(n=4):
    return [{"key": b"key-%d" % i, "value": b"value " * (i + 3), "timestamp": 1_700_000_000_000 + i,
             "headers": [("trace", b"t%d" % i), ("empty", None)]} for i in range(n)]


def foreign(codec: str, data: bytes) -> bytes:
    """Another valid framing of `data` than the project's compressor writes (another level, chunking
    or block type), as other producers' compressors do."""
    if codec == "gzip":
        c = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return c.compress(data) + c.flush()
    if codec == "snappy":
        out = bytearray(snappy_codec.XERIAL_HEADER)
        for i in range(0, len(data), 40):
            block = bytes(damage.compress("snappy", data[i:i + 40])[len(snappy_codec.XERIAL_HEADER) + 4:])
            out += struct.pack(">i", len(block)) + block
        return bytes(out)
    if codec == "lz4":
        frame = bytearray(damage.compress("lz4", b"")[:7])  # magic and descriptor, as Kafka writes them
        block = lz4.block.compress(data, mode="high_compression", store_size=False)
        return bytes(frame + struct.pack("<I", len(block)) + block + b"\0\0\0\0")
    return zstandard.ZstdCompressor(level=19, write_checksum=True).compress(data)


def v2_batches():
    """(name, bytes) of v2 batches: every codec as written here, as another compressor frames it,
    and as librdkafka wrote them."""
    for codec in CODECS:
        data = write_batch(records(), compression=codec, base_offset=7)
        yield f"v2_{codec}", data
        if codec != "none":
            other = damage.rebuild_v2(data, stored=foreign(codec, damage.records_section(data)))
            assert other != data
            yield f"v2_{codec}_foreign", other
    for path in LIBRDKAFKA:
        yield f"librdkafka_{path.stem}", path.read_bytes()


def legacy_entries():
    plain = [dict(r, headers=[]) for r in records()]
    for magic in (0, 1):
        for codec in ("none", "gzip", "snappy", "lz4"):
            yield f"v{magic}_{codec}", write_batch(plain, magic=magic, compression=codec)
        inner = b"".join(damage.legacy_entry(i, b"k", b"v" * 30, magic=magic) for i in range(3))
        yield f"v{magic}_gzip_foreign", damage.legacy_wrapper(inner, magic=magic, offset=2,
                                                              stored=foreign("gzip", inner))


BATCHES = list(v2_batches())
ENTRIES = list(legacy_entries())


def state(obj):
    """Every field of an object tree, derived and pinned ones included, as plain values (a lazy
    field's as read: loading it is no change)."""
    if isinstance(obj, list):
        return [state(x) for x in obj]
    if not hasattr(obj, "_read"):
        return obj
    return {name: state(getattr(obj, name.lstrip("_") if getattr(obj, name) is LAZY else name))
            for name in obj.__slots__
            if name != "_parent" and not name.endswith(("_raw", "_computed")) and hasattr(obj, name)}


def decoded(data: bytes):
    """(entry, its bytes) for every batch or entry of `data`, read from bytes, records decoded."""
    out = []
    for batch in read_batches(data):
        list(batch)
        out.append((batch.entry, data[batch.position:batch.position + batch.size]))
    return out


@pytest.mark.parametrize("name,data", BATCHES + ENTRIES, ids=[n for n, _ in BATCHES + ENTRIES])
def test_size_of_a_decoded_batch_is_its_size_and_changes_nothing(name, data):
    for entry, raw in decoded(data):
        before = state(entry)
        assert entry.size() == len(raw)
        assert state(entry) == before  # a query: no derived length, count, CRC or default changed
        assert entry.to_bytes() == raw  # the compressed bytes read are kept while they still decode the same
        assert entry.size() == len(raw)


@pytest.mark.parametrize("codec", CODECS)
def test_size_of_an_edited_batch_predicts_to_bytes_without_storing_anything(codec):
    batch = decoded(write_batch(records(), compression=codec))[0][0]
    record = batch.records.items[1]
    record.value = b"a value longer than the one read " * 9
    before = state(batch)
    size = batch.size()
    assert state(batch) == before  # the record's stale value_length stays until written
    data = batch.to_bytes()
    assert size == len(data) and record.value_length == len(record.value) and batch.batch_length == len(data) - 12
    again = RecordBatch.from_bytes(data)
    assert again.records.items[1].value == record.value and again.records.items[0].value == b"value " * 3


@pytest.mark.parametrize("codec", CODECS[1:])
def test_a_changed_codec_is_compressed_anew(codec):
    batch = decoded(write_batch(records(), compression="gzip"))[0][0]
    batch.attributes = (batch.attributes & ~7) | damage.CODECS[codec]
    again = RecordBatch.from_bytes(batch.to_bytes())
    assert again.compression.name == codec
    assert [r.value for r in again.records.items] == [r.value for r in batch.records.items]


def assert_bytes_fields(obj):
    """No field of an object tree is a memoryview or bytearray: byte fields are bytes, strings str."""
    if isinstance(obj, list):
        for x in obj:
            assert_bytes_fields(x)
        return
    assert not isinstance(obj, (memoryview, bytearray))
    if hasattr(obj, "_read"):
        for name in obj.__slots__:
            if name != "_parent" and not name.endswith(("_raw", "_computed")) and hasattr(obj, name):
                assert_bytes_fields(getattr(obj, name))


def read_all(cls, buf, size):
    """Every object of `buf` read with cls.read, their records decoded, as dicts."""
    out, pos = [], 0
    while pos < size:
        obj, pos = cls.read(buf, pos, size)
        if cls is RecordBatch:
            obj.records
        elif obj.message.value is not None and obj.message.compression:
            obj.message.value.entries
        assert_bytes_fields(obj)
        out.append((obj, obj.to_dict()))
    return out


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "memoryview_slice", "mmap"])
@pytest.mark.parametrize("name,data", BATCHES + ENTRIES, ids=[n for n, _ in BATCHES + ENTRIES])
def test_every_buffer_reads_every_field_kind_as_bytes(name, data, kind, tmp_path):
    cls = RecordBatch if data[16] == 2 else LegacyLogEntry
    want = [d for _, d in read_all(cls, data, len(data))]
    if kind == "mmap":
        path = tmp_path / "segment.log"
        path.write_bytes(data)
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            got = read_all(cls, buf, len(data))
            assert [d for _, d in got] == want
            del got  # nothing read holds an exported view of the map: it closes
        return
    owner = bytearray(b"xx" + data + b"yy") if kind == "memoryview_slice" else bytearray(data)
    buf = {"bytearray": owner, "memoryview": memoryview(owner),
           "memoryview_slice": memoryview(owner)[2:-2]}[kind]
    got = read_all(cls, buf, len(data))
    assert [d for _, d in got] == want
    owner[:] = bytes(len(owner))  # what was read does not change with the buffer
    assert [obj.to_dict() for obj, _ in got] == want


@pytest.mark.parametrize("name,cls,data", SEEDS, ids=[s[0] for s in SEEDS])
def test_every_type_reads_a_memoryview_as_bytes(name, cls, data):
    if cls is None:
        return  # segments: above
    obj, end = cls.read(memoryview(bytearray(data)))
    assert end == len(data) and obj == cls.from_bytes(data) and obj.to_dict() == cls.from_bytes(data).to_dict()
    assert_bytes_fields(obj)


COPIES = {"copy": copy.copy, "deepcopy": copy.deepcopy, "pickle": lambda o: pickle.loads(pickle.dumps(o))}


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("name,data", BATCHES + ENTRIES, ids=[n for n, _ in BATCHES + ENTRIES])
def test_copies_of_batches_with_records_not_decoded_yet(name, data, how):
    cls = RecordBatch if data[16] == 2 else LegacyLogEntry
    data = data[:damage.batch_spans(data)[0][1]]
    original, _ = cls.read(b"junk" + data, 4)
    twin = COPIES[how](original)
    assert twin.to_dict() == cls.from_bytes(data).to_dict()  # decodes the copy's records
    assert twin.to_bytes() == data
    assert original.to_dict() == twin.to_dict()


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_of_batches_read_from_a_map_or_a_view_hold_no_buffer(how, tmp_path):
    data = write_batch(records(), compression="none") + write_batch(records(), compression="lz4")
    path = tmp_path / "segment.log"
    path.write_bytes(data)
    big = b"\0" * (1 << 20) + data
    copies = []
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        first, pos = RecordBatch.read(mm, 0)
        second, _ = RecordBatch.read(memoryview(bytearray(data)), pos)
        copies = [COPIES[how](first), COPIES[how](second)]
    assert [c.to_bytes() for c in copies] == [data[:pos], data[pos:]]  # the map is closed by now
    if how == "pickle":  # a batch read from a large buffer pickles its own bytes, not the buffer's
        lone, _ = RecordBatch.read(big, 1 << 20)
        assert len(pickle.dumps(lone)) < 2 * len(data)


def test_a_deep_copy_is_independent_of_the_original():
    original = RecordBatch.from_bytes(write_batch(records(), compression="zstd"))
    twin = copy.deepcopy(original)
    twin.records.items[0].value = b"changed"
    assert original.records.items[0].value == b"value " * 3
    assert RecordBatch.from_bytes(twin.to_bytes()).records.items[0].value == b"changed"
    assert twin.records.items[0]._parent is twin.records and twin.records._parent is twin


def generated_classes():
    """Every class of every generated module: the root types and their nested types."""
    seen = []
    for module in generated.__doc__.split("`")[1::2]:
        name, _, cls = module.partition(".")
        stack = [getattr(__import__(f"kafkacodec.generated.{name}", fromlist=[cls]), cls)]
        while stack:
            c = stack.pop()
            if c not in seen and hasattr(c, "_read"):
                seen.append(c)
                stack += [v for v in vars(c).values() if isinstance(v, type)]
    return seen


CLASSES = generated_classes()
SAMPLES = {cls: data for _, cls, data in SEEDS if cls is not None}


def test_every_module_and_nested_type_is_covered():
    assert len({c.__module__ for c in CLASSES}) == 17 and len(CLASSES) > 200
    assert RecordBatch.Records in CLASSES and RecordBatch.Header in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=[c.__qualname__ for c in CLASSES])
def test_from_bytes_and_read_of_every_class_work_or_raise_typed_errors(cls):
    rng = random.Random(cls.__qualname__)
    inputs = [b"", b"\0", b"\0" * 64, b"\xff" * 64] + [rng.randbytes(rng.randrange(1, 80)) for _ in range(200)]
    if cls in SAMPLES:
        inputs.append(SAMPLES[cls])
    for data in inputs:
        for call in (lambda: cls.from_bytes(data), lambda: cls.read(data, 0)[0], lambda: cls.read(memoryview(data))[0]):
            try:
                obj = call()
            except KafkaCodecError:
                continue
            obj.to_dict()
            repr(obj)
    with pytest.raises(UsageError):
        cls.read(b"\0" * 8, 6, 4)
    with pytest.raises(ValueError):  # UsageError is a ValueError too, for callers that caught that
        cls.read(b"\0" * 8, 0, 9)


def test_a_type_that_needs_its_parent_says_so():
    with pytest.raises(UsageError, match="RecordBatch.Records takes fields of the RecordBatch around it"):
        RecordBatch.Records.from_bytes(damage.raw_record())
    with pytest.raises(UsageError, match="read the RecordBatch instead"):
        RecordBatch.Records.read(damage.raw_record())
    record = RecordBatch.Record.from_bytes(damage.raw_record(key=b"k", value=b"v", headers=[(b"h", b"x")]))
    assert (record.key, record.value, record.headers[0].key, record.offset) == (b"k", b"v", "h", None)


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("name,cls,data", [s for s in SEEDS if s[1] is not None],
                         ids=[s[0] for s in SEEDS if s[1] is not None])
def test_every_type_copies_and_pickles(name, cls, data, how):
    obj, _ = cls.read(memoryview(b"\0" + data), 1)
    twin = COPIES[how](obj)
    assert twin == cls.from_bytes(data) and twin.to_bytes() == obj.to_bytes()


@pytest.mark.parametrize("codec", CODECS)
def test_a_decoded_batch_is_freed_by_reference_counting(codec):
    import gc
    import weakref
    data = write_batch(records(), compression=codec)
    gc.disable()  # no cycle collection: only reference counting may free the batch
    try:
        batch = RecordBatch.from_bytes(data)
        kept = batch.records.items[1]
        watched = [weakref.ref(batch), weakref.ref(batch.records), weakref.ref(kept.headers[0])]
        assert kept.headers[0]._parent is kept and kept._parent._parent is batch and kept._root is batch
        del batch
        assert [w() is None for w in watched] == [True, True, False]  # the kept record holds its headers
        assert kept._parent is None and kept._root is kept
        assert (kept.offset, kept.key, kept.value) == (1, b"key-1", b"value " * 4)  # read while the batch lived
    finally:
        gc.enable()


def test_unpickled_objects_get_their_parents_back():
    original = RecordBatch.from_bytes(write_batch(records(), compression="gzip"))
    twin = pickle.loads(pickle.dumps(original))
    assert twin == original
    assert twin.records._parent is twin and all(r._parent is twin.records for r in twin.records.items)
    alone = pickle.loads(pickle.dumps(original.records.items[2]))
    assert alone == original.records.items[2] and alone._parent is None
