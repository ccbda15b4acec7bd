"""Damaged bytes raise only the package's typed errors (DecodeError subclasses): bit flips,
truncations, splices and overwritten length fields of real segments, read all the way down."""
import struct
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import TESTS
from kafkacodec import read_batches, write_batch
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import DecodeError

SEGMENTS = [(TESTS / "fixtures" / "sample.log").read_bytes()] + [
    p.read_bytes() for p in sorted((TESTS / "fixtures" / "librdkafka").glob("*.bin"))] + [
    write_batch([{"key": b"k", "value": b"v" * 200, "timestamp": 7, "headers": [("h", b"x")] if m == 2 else []}] * 5,
                magic=m, compression=c) for m, c in ((2, "gzip"), (2, "zstd"), (1, "snappy"), (0, "lz4"))]


def read_everything(data):
    """Decode as deeply as a user would, without stopping at CRC mismatches."""
    for batch in read_batches(data, verify=False):
        batch.entry.to_dict()
        for record in batch:
            (record.offset, record.timestamp, record.key, record.value, list(record.headers))


@st.composite
def damaged(draw):
    data = bytearray(draw(st.sampled_from(SEGMENTS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "splice", "length", "varint"]))
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[at:]
        elif kind == "splice":
            other = draw(st.sampled_from(SEGMENTS))
            start = draw(st.integers(0, len(other) - 1))
            data[at:at] = other[start:start + draw(st.integers(1, 64))]
        elif kind == "length" and at + 4 <= len(data):
            value = draw(st.sampled_from([-1, -2 ** 31, 2 ** 31 - 1, 0, 13, 48, 49, 61]))
            struct.pack_into(">i", data, at, value)
        elif kind == "varint":
            data[at:at + 1] = b"\xff" * draw(st.integers(1, 12))
    return bytes(data)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_segments_raise_only_typed_errors(data):
    try:
        read_everything(data)
    except DecodeError as err:
        assert err.position is None or 0 <= err.position <= len(data) + 16
        assert str(err)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_garbage_raises_only_typed_errors(data):
    for cls in (RecordBatch, LegacyLogEntry, OffsetIndex, RecordBatch.Record, RecordBatch.Header):
        try:
            obj = cls.from_bytes(data, verify=False)
            obj.to_dict() if cls is not RecordBatch.Record else None
        except DecodeError:
            pass


def test_an_unknown_codec_is_an_error_at_the_records_naming_them():
    """Codec ids 5-7 are no codec: the error names the records' first byte and field, whether
    the records are read (v2) or the value is (v0/v1), as any other bad compressed data."""
    import crc32c
    from kafkacodec.runtime.errors import CompressionError
    batch = bytearray(write_batch([{"value": b"v"}]))
    batch[22] |= 5  # attributes: codec 5
    batch[17:21] = crc32c.crc32c(bytes(batch[21:])).to_bytes(4, "big")
    read, _ = RecordBatch.read(bytes(batch), 0)
    try:
        read.records
    except CompressionError as err:
        assert (err.position, err.path) == (61, "record_batch/records")
        assert "unknown compression codec id 5" in str(err)
    else:
        raise AssertionError("codec 5 read")
    entry = bytearray(write_batch([{"value": b"v"}], magic=1, compression="gzip"))
    entry[17] = (entry[17] & ~7) | 6  # the wrapper's attributes: codec 6
    entry[12:16] = (zlib.crc32(bytes(entry[16:])) & 0xFFFFFFFF).to_bytes(4, "big")
    read, _ = LegacyLogEntry.read(bytes(entry), 0)
    try:
        read.message.value
    except CompressionError as err:
        assert err.path == "legacy_log_entry/legacy_message/value" and err.position is not None
    else:
        raise AssertionError("codec 6 read")
