"""Damage behind a valid CRC: every batch of damage.py's catalogue has a checksum that matches, so
only reading its records finds the damage. Reading every record, by the record readers and by
columns, raises a typed error (a DecodeError subclass) inside the damaged batch, after every
record of the batch before it; never another exception, never success. Batches that Kafka reads
although they look odd are read."""
import pytest

from tests.support import damage
from kafkacodec import read_batches, write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime import errors
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.storage.segments.columnar import read_columns

SMALL_LIMIT = 1 << 20  # bombs are built past the limit in force; a small one keeps them small
BEFORE = write_batch([{"key": b"before-%d" % i, "value": b"v" * 20, "timestamp": 10 + i} for i in range(3)])


def catalogue(make):
    old = LIMITS.max_decompressed_bytes
    LIMITS.max_decompressed_bytes = SMALL_LIMIT
    try:
        return list(make())
    finally:
        LIMITS.max_decompressed_bytes = old


V2 = catalogue(damage.damaged_v2_batches)
LEGACY = catalogue(damage.damaged_legacy_entries)


@pytest.fixture(autouse=True)
def small_limit(monkeypatch):
    monkeypatch.setattr(LIMITS, "max_decompressed_bytes", SMALL_LIMIT)


def crc_valid(batch: bytes) -> bool:
    if batch[16] >= 2:
        return RecordBatch.read(batch, verify=False)[0].crc_valid
    return LegacyLogEntry.read(batch, verify=False)[0].message.crc_valid


def read_every_record(segment: bytes) -> list:
    offsets = []
    for batch in read_batches(segment):
        for record in batch:
            (record.key, record.value, record.timestamp, list(record.headers))
            offsets.append(record.offset)
    return offsets


def assert_inside(err: errors.DecodeError, start: int, end: int) -> None:
    # bytes that are missing (a record the count promises) are reported where they should start,
    # which for the last record is the batch's end
    assert err.position is not None and start <= err.position <= end, (err.position, start, end, str(err))
    assert str(err)


@pytest.mark.parametrize("name,batch,error", V2 + LEGACY, ids=[c[0] for c in V2 + LEGACY])
def test_reading_every_record_raises_a_typed_error_inside_the_batch(name, batch, error):
    assert crc_valid(batch)  # the damage is behind the checksum, not in it
    segment = BEFORE + batch + BEFORE
    start, end = len(BEFORE), len(BEFORE) + len(batch)
    offsets = []
    with pytest.raises(errors.DecodeError) as caught:
        for b in read_batches(segment):
            offsets += [r.offset for r in b]
    assert isinstance(caught.value, getattr(errors, error)), str(caught.value)
    assert_inside(caught.value, start, end)
    assert offsets == [0, 1, 2]  # every record before the damage was read
    with pytest.raises(getattr(errors, error)):
        read_every_record(batch)  # the batch alone, too


@pytest.mark.parametrize("name,batch,error", V2, ids=[c[0] for c in V2])
def test_reading_by_columns_raises_a_typed_error(name, batch, error):
    segment = BEFORE + batch + BEFORE
    start, end = len(BEFORE), len(BEFORE) + len(batch)
    with pytest.raises(errors.DecodeError) as caught:
        read_columns(segment, [0, start, end])
    if not damage.codec_of(batch) or name.endswith(("bomb", "/stream_truncated", "/stream_garbage",
                                                     "/stream_header_flipped", "/stream_empty")):
        assert_inside(caught.value, start, end)
    # else the damage is inside decompressed records: read_columns places it in the joined
    # decompressed sections (as it documents), and reading the batch alone places it in the batch
    with pytest.raises(errors.DecodeError):
        read_columns(batch, [0])


@pytest.mark.parametrize("name,batch", list(damage.readable_v2_batches()),
                         ids=[c[0] for c in damage.readable_v2_batches()])
def test_batches_that_kafka_reads_are_read(name, batch):
    (record,) = list(next(read_batches(batch)))
    cols = read_columns(batch, [0])
    assert list(cols.offset) == [record.offset] and len(cols.offset) == 1
    again = RecordBatch.from_bytes(batch)
    if name.endswith("padded_varints"):
        assert (record.key, record.value) == (b"k", b"v")
        return
    if name.endswith("not_utf8"):  # kept, so that it writes back; Kafka shows U+FFFD for such bytes
        assert record.headers[0].key.encode("utf-8", "surrogateescape") == b"\xff\xfeh\xc3"
        assert again.to_bytes() == batch  # decoded and written back, byte for byte
    else:  # null, written back as -1
        assert (record.key, record.value, record.headers[0].value) == (None, None, None)
        rewritten = RecordBatch.from_bytes(again.to_bytes()).records.items[0]
        assert (rewritten.key_length, rewritten.value_length, rewritten.headers[0].value_length) == (-1, -1, -1)


def test_an_inner_crc_is_not_checked_when_crcs_are_not():
    name, entry, _ = next(c for c in LEGACY if c[0].endswith("inner_crc"))
    (batch,) = read_batches(entry, verify=False)
    assert len(list(batch)) == 3  # read as dump shows damaged data; its crc_valid tells
    assert [e.message.crc_valid for e in entry_value(batch.entry)] == [True, True, False]


def entry_value(entry):
    return entry.message.value.entries


def test_a_varlong_keeps_64_bits_as_kafka_and_the_columnar_reader_do():
    # a 10-byte timestamp delta whose last byte sets bits above 64: Kafka's long shift drops them
    rec = bytearray(damage.raw_record(timestamp_delta=5))
    delta = bytearray(damage.varint(5, width=10))
    delta[-1] |= 0x7E  # bits 64.. of the 10th byte
    rec[2:3] = delta  # length, attributes, then the delta
    rec[0:1] = damage.varint(len(rec) - 1)
    batch = damage.v2_batch([bytes(rec)], base_timestamp=1000)
    (record,) = list(next(read_batches(batch)))
    assert record.timestamp == 1005
    assert list(read_columns(batch, [0]).timestamp) == [1005]


@pytest.mark.parametrize("count", [-3, 400])
def test_a_bad_header_count_is_reported_at_the_count(count):
    record = damage.raw_record(key=b"k", value=b"v", headers_count=count)
    batch = damage.v2_batch([record])
    at = len(BEFORE) + 61 + len(record) - len(damage.varint(count))  # the count is the record's last field
    with pytest.raises(errors.DecodeError) as scalar:
        read_every_record(BEFORE + batch)
    with pytest.raises(errors.DecodeError) as columns:
        read_columns(BEFORE + batch, [0, len(BEFORE)])
    assert scalar.value.position == columns.value.position == at
    assert scalar.value.path == columns.value.path == "record_batch/record/headers"
