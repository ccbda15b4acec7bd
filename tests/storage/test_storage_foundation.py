"""Log layer foundations: names, the recovery scan, index reading, lookups and rebuild."""
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import TESTS
from kafkacodec import read_batches, write_batch
from kafkacodec.runtime.errors import ChecksumError, CompressionError, InvalidValueError, TruncatedError
from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import names
from kafkacodec.storage.segments.scan import scan_bytes, scan_file

SAMPLE = TESTS / "fixtures" / "sample.log"


def test_names():
    assert names.segment_name(0) == "00000000000000000000"
    assert names.segment_name(1234567) == "00000000000001234567"
    assert names.offset_from_name("00000000000000000042.timeindex.deleted") == 42
    assert names.parse_partition_dir("my-topic-3") == names.PartitionDir("my-topic", 3)
    assert names.parse_partition_dir("orders-0." + "ab" * 16 + "-delete") == names.PartitionDir("orders", 0, "delete")
    assert names.parse_partition_dir("orders-0." + "0f" * 16 + "-future").kind == "future"
    assert names.parse_partition_dir("meta.properties") is None
    assert names.parse_partition_dir("orders-x") is None
    assert names.is_transient("00000000000000000000.log.swap") and not names.is_transient("0.log")


def test_scan_of_a_valid_segment_matches_reading_it():
    result = scan_file(SAMPLE)
    data = SAMPLE.read_bytes()
    assert result.is_valid and result.valid_bytes == len(data) == result.file_size
    assert [(b.position, b.size) for b in result.batches] == [(b.position, b.size) for b in read_batches(data)]
    assert [b.last_offset for b in result.batches] == [0, 1, 2, 3, 4, 8, 13, 33, 53, 56]


def damaged(edit):
    data = bytearray(SAMPLE.read_bytes())
    edit(data)
    return bytes(data)


def test_flipped_crc_byte_keeps_the_prefix():
    data = damaged(lambda d: d.__setitem__(476 + 17, d[476 + 17] ^ 1))
    r = scan_bytes(data)
    assert (r.valid_bytes, len(r.batches)) == (476, 6)
    assert isinstance(r.error, ChecksumError) and r.error.position == 476


def test_truncated_batch_and_short_tail():
    data = SAMPLE.read_bytes()
    r = scan_bytes(data[:900])
    assert (r.valid_bytes, r.truncated_bytes) == (830, 70) and isinstance(r.error, TruncatedError)
    r = scan_bytes(data + b"\x00" * 10)  # 17 bytes or fewer after the last batch
    assert r.valid_bytes == len(data) and isinstance(r.error, TruncatedError) and r.error.position == len(data)


def test_zero_filled_preallocated_tail():
    data = SAMPLE.read_bytes()
    r = scan_bytes(data + bytes(4096))
    assert r.valid_bytes == len(data) and isinstance(r.error, InvalidValueError)
    assert "smaller than minimum record overhead (14)" in str(r.error)


def test_absurd_size_is_a_truncation_not_an_allocation():
    data = damaged(lambda d: struct.pack_into(">i", d, 476 + 8, 2 ** 31 - 1))
    r = scan_bytes(data)
    assert r.valid_bytes == 476 and isinstance(r.error, TruncatedError)


def test_legacy_recovery_checks_the_wrapper_crc_only_as_kafka_does():
    data = bytearray(write_batch([{"value": b"x" * 50, "timestamp": 1}] * 3, magic=1, compression="gzip"))
    data[-5] ^= 0xFF  # inside the compressed value, then a matching CRC: recovery keeps it
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    r = scan_bytes(bytes(data))
    assert r.is_valid and len(r.batches) == 1
    with pytest.raises(CompressionError):  # reading the records finds the damage
        list(next(read_batches(bytes(data))))


def reference_entries(sizes_offsets_stamps, interval):
    """Kafka's append path, one batch per append: an independent formulation of the same rule."""
    offsets, times = [], []
    since_last = position = 0
    max_ts, max_ts_offset = -1, -1
    for size, last_offset, max_timestamp in sizes_offsets_stamps:
        if max_timestamp > max_ts:
            max_ts, max_ts_offset = max_timestamp, last_offset
        if since_last > interval:
            offsets.append((last_offset, position))
            if not times or max_ts > times[-1][0]:
                if max_ts > -1:
                    times.append((max_ts, max_ts_offset))
            since_last = 0
        since_last += size
        position += size
    if max_ts > -1 and (not times or max_ts > times[-1][0]):
        times.append((max_ts, max_ts_offset))
    return offsets, times


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(0, 400), st.one_of(st.just(-1), st.integers(0, 10 ** 6))),
                min_size=1, max_size=40), st.sampled_from([0, 100, 1000, 4096]))
def test_rebuild_matches_the_append_path(batch_specs, interval):
    segment, offset = b"", 1000
    for count, value_len, ts in batch_specs:
        recs = [{"value": b"v" * value_len, "timestamp": ts} for _ in range(count)]
        segment += write_batch(recs, base_offset=offset)
        offset += count
    r = scan_bytes(segment)
    assert r.is_valid
    offsets, times = index.rebuild(r.batches, 1000, interval)
    want_offsets, want_times = reference_entries([(b.size, b.last_offset, b.max_timestamp) for b in r.batches],
                                                 interval)
    assert [(e.offset, e.position) for e in offsets] == want_offsets
    assert [(e.timestamp, e.offset) for e in times] == want_times
    # encoded, preallocated with a zero tail, read back
    raw = index.encode_offset_index(offsets, 1000) + bytes(80)
    assert index.read_offset_index(raw, 1000) == offsets
    raw = index.encode_time_index(times, 1000) + bytes(120)
    if index.TimeEntry(0, 1000) not in times:  # that entry is the same bytes as the zero tail
        assert index.read_time_index(raw, 1000) == times


def test_v0_segment_has_an_empty_time_index():
    segment = write_batch([{"value": b"a"}] * 300, magic=0)
    offsets, times = index.rebuild(scan_bytes(segment).batches, 0, 1000)
    assert offsets and times == []


def test_lookups_follow_kafka():
    entries = [index.OffsetEntry(10, 0), index.OffsetEntry(20, 4100), index.OffsetEntry(35, 8300)]
    assert index.lookup_offset(entries, 5, 4) == index.OffsetEntry(5, 0)
    assert index.lookup_offset(entries, 5, 20) == index.OffsetEntry(20, 4100)
    assert index.lookup_offset(entries, 5, 34) == index.OffsetEntry(20, 4100)
    assert index.lookup_offset(entries, 5, 99) == index.OffsetEntry(35, 8300)
    times = [index.TimeEntry(100, 12), index.TimeEntry(250, 30)]
    assert index.lookup_time(times, 5, 99) == index.TimeEntry(-1, 5)
    assert index.lookup_time(times, 5, 249) == index.TimeEntry(100, 12)
    assert index.lookup_time(times, 5, 250) == index.TimeEntry(250, 30)


def test_index_length_must_be_a_multiple_of_the_entry_size():
    with pytest.raises(InvalidValueError, match="not a multiple of 8"):
        index.read_offset_index(bytes(12), 0)
