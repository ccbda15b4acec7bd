"""Damaged bytes raise only the package's typed errors (DecodeError subclasses): bit flips,
truncations, splices and overwritten length fields of real segments, read all the way down."""
import struct

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
