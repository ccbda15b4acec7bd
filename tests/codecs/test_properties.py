"""Property tests: encode then decode gives back arbitrary records, keys, values, headers,
timestamps (negative deltas, -1, 10-byte varlongs) and offsets, for every format and codec."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacodec import Record, read_batches, write_batch
from kafkacodec.generated.record_batch import RecordBatch

INT64 = st.integers(-(2 ** 63), 2 ** 63 - 1)
blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.lists(st.tuples(st.text(max_size=20), blobs), max_size=4)


@st.composite
def v2_records(draw):
    n = draw(st.integers(1, 25))
    base_ts = draw(st.integers(-(2 ** 40), 2 ** 40))
    # timestamps spread widely around the base, so deltas are negative, zero and 10-byte varlongs
    stamps = draw(st.lists(st.one_of(st.just(-1), st.integers(-(2 ** 62), 2 ** 62)), min_size=n, max_size=n))
    stamps[0] = base_ts
    gaps = draw(st.lists(st.integers(1, 1000), min_size=n, max_size=n))
    base = draw(st.integers(0, 2 ** 62))
    offsets, o = [], base
    for g in gaps:
        offsets.append(o)
        o += g
    return [Record(key=draw(blobs), value=draw(blobs), timestamp=t, offset=off, headers=draw(headers))
            for t, off in zip(stamps, offsets)]


def decoded(data):
    return [(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            for b in read_batches(data) for r in b]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v2_records(), st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]))
def test_v2_round_trip(records, codec):
    data = write_batch(records, compression=codec)
    want = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in records]
    assert decoded(data) == want
    batch = RecordBatch.from_bytes(data)
    assert batch.size() == len(data)
    if codec == "none":
        assert batch.to_bytes() == data


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(blobs, blobs, st.integers(0, 2 ** 50)), min_size=1, max_size=20),
       st.sampled_from([0, 1]), st.sampled_from(["none", "gzip", "snappy", "lz4"]), st.integers(0, 2 ** 40))
def test_legacy_round_trip(items, magic, codec, base):
    records = [Record(key=k, value=v, timestamp=t) for k, v, t in items]
    data = write_batch(records, magic=magic, compression=codec, base_offset=base)
    got = [(r.offset, r.timestamp, r.key, r.value) for b in read_batches(data) for r in b]
    assert got == [(base + i, t if magic else -1, k, v) for i, (k, v, t) in enumerate(items)]


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2 ** 31), 2 ** 31 - 1), INT64, blobs, blobs, headers)
def test_single_record_fields(offset_delta, ts_delta, key, value, hdrs):
    rec = RecordBatch.Record(offset_delta=offset_delta, timestamp_delta=ts_delta, key=key, value=value,
                             headers=[RecordBatch.Header(key=k, value=v) for k, v in hdrs])
    data = rec.to_bytes()
    assert rec.size() == len(data)
    again = RecordBatch.Record.from_bytes(data)
    assert again == rec and again.to_bytes() == data
