"""The generated classes' contract: position-based reads, strictness, derived and pinned fields,
equality, repr, to_dict, size, and typed errors with byte positions and schema paths."""
import struct

import pytest

from kafkacodec import read_batches, write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import (ChecksumError, DecodeError, EncodeError, InvalidValueError,
                                       LimitExceededError, TruncatedError)

from tests.support import TESTS

SAMPLE = (TESTS / "fixtures" / "sample.log").read_bytes()


def v2_batch(n=3, **kw):
    return write_batch([{"key": b"k%d" % i, "value": b"v%d" % i, "timestamp": 5000 + i,
                         "headers": [("a", b"1")]} for i in range(n)], **kw)


def test_read_at_a_position_inside_a_larger_buffer():
    data = b"junk" + v2_batch() + v2_batch(2, base_offset=3)
    first, nxt = RecordBatch.read(data, 4)
    second, end = RecordBatch.read(data, nxt)
    assert end == len(data)
    assert [r.offset for r in first.records.items + second.records.items] == [0, 1, 2, 3, 4]


def test_from_bytes_rejects_trailing_bytes():
    with pytest.raises(InvalidValueError, match="1 bytes left after the end"):
        RecordBatch.from_bytes(v2_batch() + b"\0")


def test_records_are_decoded_lazily_and_the_crc_is_checked_eagerly():
    data = bytearray(v2_batch())
    data[-1] ^= 0xFF  # last record byte: inside the CRC range, inside the records section
    batch, _ = RecordBatch.read(bytes(data), verify=False)
    assert batch.crc_valid is False
    with pytest.raises(ChecksumError) as e:
        RecordBatch.from_bytes(bytes(data))
    assert e.value.position == 0 and e.value.path == "record_batch/crc"
    assert e.value.stored != e.value.computed


def test_derived_fields_follow_edits_unless_pinned():
    batch = RecordBatch.from_bytes(v2_batch())
    batch.records.items[0].value = b"a much longer value than before"
    again = RecordBatch.from_bytes(batch.to_bytes())
    assert again.records.items[0].value == b"a much longer value than before"
    assert again.records.items[0].value_length == 31
    batch.crc = 1234  # pinned: written as given, so readers see a bad CRC
    bad = batch.to_bytes()
    assert struct.unpack_from(">I", bad, 17)[0] == 1234
    assert RecordBatch.read(bad, verify=False)[0].crc_valid is False
    batch.crc = None  # unpinned again
    assert RecordBatch.from_bytes(batch.to_bytes()).crc_valid


def test_pinned_count_is_written_as_given():
    batch = RecordBatch.from_bytes(v2_batch(3))
    batch.records_count = 2
    with pytest.raises(InvalidValueError, match="bytes left unread"):
        RecordBatch.from_bytes(batch.to_bytes()).records


def test_defaults_fill_unset_fields():
    b = RecordBatch(records=RecordBatch.Records(items=[RecordBatch.Record(offset_delta=4, value=b"x")]))
    again = RecordBatch.from_bytes(b.to_bytes())
    assert (again.base_offset, again.magic, again.producer_id, again.producer_epoch) == (0, 2, -1, -1)
    assert again.last_offset_delta == 4 and again.partition_leader_epoch == -1


def test_missing_required_field_is_an_encode_error():
    with pytest.raises(EncodeError, match="offset_delta: is not set"):
        RecordBatch.Record(value=b"x").to_bytes()


def test_equality_ignores_derived_fields_and_sees_content():
    a = RecordBatch.from_bytes(v2_batch())
    b = RecordBatch.from_bytes(v2_batch())
    assert a == b
    b.records.items[1].key = b"other"
    assert a != b
    built = RecordBatch.Record(offset_delta=0, key=b"k", value=b"v")
    assert RecordBatch.Record.from_bytes(built.to_bytes()) == built


def test_repr_and_to_dict():
    batch = RecordBatch.from_bytes(v2_batch(1))
    text = repr(batch)
    assert text.startswith("RecordBatch(base_offset=0, batch_length=") and "RecordBatch.Record(" in text
    d = batch.to_dict()
    assert d["compression"] == "none" and d["timestamp_type"] == "create_time"
    rec = d["records"]["items"][0]
    assert (rec["offset"], rec["timestamp"], rec["key"], rec["headers"][0]["key"]) == (0, 5000, b"k0", "a")


def test_size_matches_encoding_for_every_sample_batch():
    for batch in read_batches(SAMPLE):
        assert batch.entry.size() == len(batch.entry.to_bytes())
        if batch.compression == "none":  # other writers' compressors produce other bytes
            assert batch.entry.size() == batch.size


def test_truncation_names_field_and_position():
    data = v2_batch()
    with pytest.raises(TruncatedError) as e:
        RecordBatch.from_bytes(data[:30])
    assert e.value.position == 27 and e.value.path == "record_batch/base_timestamp"
    with pytest.raises(TruncatedError) as e:
        RecordBatch.from_bytes(data[:-3])
    assert e.value.path == "record_batch/records"


def test_bad_magic_and_short_batch_length():
    data = bytearray(v2_batch())
    data[16] = 3
    with pytest.raises(InvalidValueError, match="value 3 must be 2") as e:
        RecordBatch.from_bytes(bytes(data))
    assert e.value.position == 16
    data = bytearray(v2_batch())
    struct.pack_into(">i", data, 8, 48)
    with pytest.raises(InvalidValueError, match="must be at least 49"):
        RecordBatch.from_bytes(bytes(data))


def test_record_length_mismatch_is_reported():
    batch = RecordBatch.from_bytes(v2_batch(1))
    batch.records.items[0].length = 99
    with pytest.raises(DecodeError, match="says 99 bytes follow"):
        RecordBatch.from_bytes(batch.to_bytes()).records


def test_absurd_counts_fail_before_allocating():
    batch = RecordBatch.from_bytes(v2_batch(1))
    batch.records_count = 2 ** 31 - 1
    with pytest.raises(LimitExceededError):
        RecordBatch.from_bytes(batch.to_bytes()).records
    batch.records_count = -1
    with pytest.raises(InvalidValueError, match="negative count"):
        RecordBatch.from_bytes(batch.to_bytes()).records


def test_errors_inside_compressed_data_point_at_the_section():
    batch = RecordBatch.from_bytes(v2_batch(3, compression="gzip"))
    batch.records_count = 4
    with pytest.raises(TruncatedError) as e:
        RecordBatch.from_bytes(batch.to_bytes()).records
    assert e.value.position == 61 and "data decoded by kafka_compression" in str(e.value)


def test_legacy_inner_compressed_message_is_rejected():
    inner = LegacyLogEntry(offset=0, message=LegacyLogEntry.LegacyMessage(magic=1, attributes=1, timestamp=1,
                                                                          value=LegacyLogEntry.MessageSet()))
    wrapper = LegacyLogEntry(offset=0, message=LegacyLogEntry.LegacyMessage(
        magic=1, attributes=1, timestamp=1, value=LegacyLogEntry.MessageSet(entries=[inner])))
    with pytest.raises(InvalidValueError, match="must not be compressed"):
        list(next(read_batches(wrapper.to_bytes())))


def test_v1_log_append_time_wrapper_timestamp_wins():
    data = write_batch([{"value": b"a", "timestamp": 1}, {"value": b"b", "timestamp": 2}], magic=1,
                       compression="gzip", timestamp_type="LogAppendTime", log_append_time=777, base_offset=10)
    assert [(r.offset, r.timestamp) for b in read_batches(data) for r in b] == [(10, 777), (11, 777)]


def test_v2_log_append_time_uses_max_timestamp():
    data = v2_batch(2, timestamp_type="LogAppendTime", log_append_time=999)
    assert [r.timestamp for r in next(read_batches(data))] == [999, 999]


def test_offset_index_entries():
    data = struct.pack(">iiii", 0, 0, 7, 4096)
    idx = OffsetIndex.from_bytes(data)
    assert [(e.relative_offset, e.position) for e in idx.entries] == [(0, 0), (7, 4096)]
    assert idx.to_bytes() == data and idx.size() == 16
    with pytest.raises(TruncatedError):
        OffsetIndex.from_bytes(data + b"\0\0\0")


def test_v1_wrapper_offset_below_last_inner_offset_is_invalid():
    data = bytearray(write_batch([{"value": b"a"}, {"value": b"b"}, {"value": b"c"}], magic=1, compression="gzip"))
    assert [r.offset for b in read_batches(bytes(data)) for r in b] == [0, 1, 2]
    struct.pack_into(">q", data, 0, 1)  # the wrapper's offset is not covered by its CRC
    with pytest.raises(InvalidValueError, match="invalid wrapper offset"):
        list(next(read_batches(bytes(data))))


def test_v1_wrapper_at_offset_zero_uses_inner_offsets_as_they_are():
    data = bytearray(write_batch([{"value": b"a"}, {"value": b"b"}], magic=1, compression="gzip", base_offset=5))
    struct.pack_into(">q", data, 0, 0)
    assert [r.offset for b in read_batches(bytes(data)) for r in b] == [0, 1]
