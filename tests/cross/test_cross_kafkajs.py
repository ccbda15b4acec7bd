"""Batches framed by kafkajs (npm, its own protocol encoders): every field reads back as given,
CRCs hold, uncompressed batches re-encode to kafkajs's exact bytes, and deep verify passes them."""
import pytest

from kafkacodec import read_batches, write_batch
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.storage.segments.records_check import decoded_records
from tests.support.peers import kafkajs

pytestmark = pytest.mark.skipif(not kafkajs.available(), reason="node or the kafkajs package is missing")


def batches():
    """Three batches with null and empty keys and values, headers (some empty), a
    wide timestamp spread and a gap in offsets between batches."""
    out, offset = [], 1000
    for b in range(3):
        recs = []
        for i in range(40 + b):
            key = None if i % 7 == 3 else b"" if i % 11 == 5 else b"key-%d" % i
            value = None if i % 13 == 6 else bytes(range(i % 256)) * (1 + i % 3)
            headers = [("h%d" % j, b"" if j == 1 else b"v%d" % (i * j)) for j in range(i % 4)]  # kafkajs has no null header
            recs.append((offset, 1_700_000_000_000 + b * 10_000_000 + i * 977, key, value, headers))
            offset += 1
        out.append(recs)
        offset += 5
    return out


@pytest.mark.parametrize("codec", sorted(kafkajs.CODECS))
def test_kafkajs_batches_read_back_as_written(codec):
    given = batches()
    data = kafkajs.encode_batches(given, codec)
    read = list(read_batches(data))
    assert [b.compression for b in read] == [codec] * 3 and all(b.crc_valid for b in read)
    assert [[(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers]) for r in b]
            for b in read] == given
    assert decoded_records(b.entry for b in read).error is None


def test_uncompressed_kafkajs_batches_reencode_to_their_bytes():
    data = kafkajs.encode_batches(batches(), "none")
    for b in read_batches(data):
        assert b.entry.to_bytes() == data[b.position:b.position + b.size]
        again = write_batch(list(b), base_offset=b.base_offset, partition_leader_epoch=0, producer_epoch=0,
                            base_sequence=0)
        assert RecordBatch.from_bytes(again).records == b.entry.records
