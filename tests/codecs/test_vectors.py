"""Byte vectors from the format reference (FORMATS.md Appendix A) decode, re-encode and size
exactly, are built from scratch byte for byte, and fail where they are cut or damaged, alike
under both backends."""
from tests.support.roundtrip import Sample, check_table

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import ChecksumError, InvalidValueError, TruncatedError

V2 = bytes.fromhex(
    "0000000000000000" "00000039" "00000000" "02" "ebf1884b" "0000" "00000000"
    "00000000000003e8" "00000000000003e8" "ffffffffffffffff" "ffff" "ffffffff" "00000001"
    "0e" "00" "00" "00" "01" "02" "61" "00")
V1 = bytes.fromhex("0000000000000000" "00000017" "8a65e96d" "01" "00" "00000000000003e8" "ffffffff" "00000001" "61")
V0 = bytes.fromhex("0000000000000000" "0000000f" "51df3a32" "00" "00" "ffffffff" "00000001" "61")


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


def with_byte(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + bytes([value]) + data[at + 1:]


V2_RECORD = {"length": 7, "attributes": 0, "timestamp_delta": 0, "offset_delta": 0, "key_length": -1, "key": None,
             "value_length": 1, "value": b"a", "headers_count": 0, "headers": [], "offset": 0, "timestamp": 1000}
V2_BATCH = {"base_offset": 0, "batch_length": 57, "partition_leader_epoch": 0, "magic": 2, "crc": 3958474827,
            "attributes": 0, "last_offset_delta": 0, "base_timestamp": 1000, "max_timestamp": 1000,
            "producer_id": -1, "producer_epoch": -1, "base_sequence": -1, "records_count": 1,
            "records": {"items": [V2_RECORD]}, "compression": "none", "timestamp_type": "create_time",
            "is_transactional": False, "is_control": False, "has_delete_horizon": False, "last_offset": 0}

# the v2 batch's fields start at 0 (base offset), 16 (magic), 17 (crc) and 61 (the records);
# a batch's checksum error names the batch
BATCHES = [
    Sample("v2, one record", V2, V2_BATCH,
           fields={"crc_valid": True, "compression": RecordBatch.CompressionType.none, "size()": 69},
           built=lambda: RecordBatch(partition_leader_epoch=0, base_timestamp=1000, max_timestamp=1000,
                                     records=RecordBatch.Records(items=[RecordBatch.Record(offset_delta=0,
                                                                                           value=b"a")]))),
    Sample("v2 cut in its crc", V2[:20], error=(TruncatedError, 17)),
    Sample("v2 cut in its records", V2[:68], error=(TruncatedError, 61)),
    Sample("v2 and a byte more", V2 + b"x", error=(InvalidValueError, 69)),
    Sample("v2 with magic 3", with_byte(V2, 16, 3), error=(InvalidValueError, 16)),
    Sample("v2 with a crc off by a bit", flipped(V2, 17), error=(ChecksumError, 0)),
]


def legacy(crc: int, magic: int, timestamp: int | None, size: int, timestamp_type: str) -> dict:
    return {"offset": 0, "message_size": size, "message": {
        "crc": crc, "magic": magic, "attributes": 0, "timestamp": timestamp, "key_length": -1, "key": None,
        "value_length": 1, "value": b"a", "compression": "none", "timestamp_type": timestamp_type}}


# an entry's size is at 8 and its message at 12, where a message's checksum error is named
ENTRIES = [
    Sample("v1, one message", V1, legacy(2321934701, 1, 1000, 23, "create_time"),
           fields={"message.crc_valid": True, "size()": 35},
           built=lambda: LegacyLogEntry(offset=0, message=LegacyLogEntry.LegacyMessage(magic=1, timestamp=1000,
                                                                                       value=b"a"))),
    Sample("v0, one message", V0, legacy(1373583922, 0, None, 15, "no_timestamp"),
           fields={"message.crc_valid": True, "message.timestamp_type": LegacyLogEntry.TimestampType.no_timestamp,
                   "size()": 27},
           built=lambda: LegacyLogEntry(offset=0, message=LegacyLogEntry.LegacyMessage(magic=0, value=b"a"))),
    Sample("v1 cut in its size", V1[:10], error=(TruncatedError, 8)),
    Sample("v1 a byte short", V1[:-1], error=(TruncatedError, 12)),
    Sample("v0 a byte short", V0[:-1], error=(TruncatedError, 12)),
    Sample("v1 with a crc off by a bit", flipped(V1, 12), error=(ChecksumError, 12)),
]


def test_v2_batches(backend):
    check_table(RecordBatch, BATCHES, backend)


def test_v1_and_v0_entries(backend):
    check_table(LegacyLogEntry, ENTRIES, backend)
