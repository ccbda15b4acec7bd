"""Byte vectors from the format reference (FORMATS.md Appendix A) decode and re-encode exactly."""
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch

V2 = bytes.fromhex(
    "0000000000000000" "00000039" "00000000" "02" "ebf1884b" "0000" "00000000"
    "00000000000003e8" "00000000000003e8" "ffffffffffffffff" "ffff" "ffffffff" "00000001"
    "0e" "00" "00" "00" "01" "02" "61" "00")
V1 = bytes.fromhex("0000000000000000" "00000017" "8a65e96d" "01" "00" "00000000000003e8" "ffffffff" "00000001" "61")
V0 = bytes.fromhex("0000000000000000" "0000000f" "51df3a32" "00" "00" "ffffffff" "00000001" "61")


def test_v2_batch_fields():
    b = RecordBatch.from_bytes(V2)
    assert (b.base_offset, b.batch_length, b.partition_leader_epoch, b.magic) == (0, 57, 0, 2)
    assert b.crc == 3958474827 and b.crc_valid
    assert (b.base_timestamp, b.max_timestamp, b.producer_id, b.producer_epoch, b.base_sequence) == (
        1000, 1000, -1, -1, -1)
    assert b.records_count == 1 and b.last_offset == 0
    assert b.compression == RecordBatch.CompressionType.none
    (r,) = b.records.items
    assert (r.length, r.attributes, r.timestamp_delta, r.offset_delta) == (7, 0, 0, 0)
    assert (r.key_length, r.key, r.value_length, r.value, r.headers) == (-1, None, 1, b"a", [])
    assert (r.offset, r.timestamp) == (0, 1000)


def test_v2_reencodes_exactly_and_sizes():
    b = RecordBatch.from_bytes(V2)
    assert b.to_bytes() == V2
    assert b.size() == len(V2) == 69


def test_v2_built_from_scratch_matches_vector():
    b = RecordBatch(partition_leader_epoch=0, base_timestamp=1000, max_timestamp=1000,
                    records=RecordBatch.Records(items=[RecordBatch.Record(offset_delta=0, value=b"a")]))
    assert b.to_bytes() == V2
    assert (b.crc, b.batch_length, b.records_count) == (3958474827, 57, 1)


def test_v1_and_v0_messages():
    e1 = LegacyLogEntry.from_bytes(V1)
    assert (e1.offset, e1.message_size, e1.message.crc, e1.message.magic) == (0, 23, 2321934701, 1)
    assert (e1.message.timestamp, e1.message.key, e1.message.value) == (1000, None, b"a")
    e0 = LegacyLogEntry.from_bytes(V0)
    assert (e0.message.crc, e0.message.magic, e0.message.timestamp, e0.message.value) == (1373583922, 0, None, b"a")
    assert e0.message.timestamp_type == LegacyLogEntry.TimestampType.no_timestamp
    assert e1.to_bytes() == V1 and e0.to_bytes() == V0
    assert e1.size() == 35 and e0.size() == 27


def test_legacy_built_from_scratch_matches_vectors():
    m1 = LegacyLogEntry.LegacyMessage(magic=1, timestamp=1000, value=b"a")
    assert LegacyLogEntry(offset=0, message=m1).to_bytes() == V1
    m0 = LegacyLogEntry.LegacyMessage(magic=0, value=b"a")
    assert LegacyLogEntry(offset=0, message=m0).to_bytes() == V0
