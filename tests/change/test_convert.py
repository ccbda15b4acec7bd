"""Format conversion as brokers do it, read back by kafka-python's independent reader."""
import subprocess
import sys

import pytest
from kafka.record.memory_records import MemoryRecords

from tests.support import TESTS
from kafkacodec import read_batches, write_batch
from kafkacodec.storage.change.convert import ConversionError, convert

SAMPLE = (TESTS / "fixtures" / "sample.log").read_bytes()


def kafka_python(data):
    """Records and the set of magics, as kafka-python reads them."""
    out, magics, mr = [], set(), MemoryRecords(data)
    while mr.has_next():
        batch = mr.next_batch()
        magics.add(batch.magic)
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers or [])) for r in batch]
    return out, magics


def ours(data):
    return [(r.offset, r.timestamp, r.key, r.value) for b in read_batches(data) for r in b]


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_sample_converts_to_every_magic(magic):
    # the sample holds a zstd batch, which no legacy format can carry: those targets use gzip
    data, report = convert(SAMPLE, magic, None if magic == 2 else "gzip")
    got, magics = kafka_python(data)
    assert magics == {magic}
    source = ours(SAMPLE)
    assert [(o, k, v) for o, _, k, v, _ in got] == [(o, k, v) for o, _, k, v in source]  # offsets kept
    if magic == 0:
        assert all(t is None or t == -1 for _, t, _, _, _ in got)
    else:  # magic 1 and 2 keep timestamps; magic 0 sources have none
        assert [t for _, t, _, _, _ in got[3:]] == [t for _, t, _, _ in source[3:]]
    assert (report.headers_dropped > 0) == (magic < 2)
    codecs = {b.compression for b in read_batches(data)}
    assert codecs == ({"none", "gzip", "lz4", "zstd"} if magic == 2 else {"gzip"})


def test_zstd_cannot_go_below_magic_2():
    data = write_batch([{"value": b"x"}], compression="zstd")
    with pytest.raises(ConversionError, match="zstd cannot be written in magic 1"):
        convert(data, 1)
    converted, _ = convert(data, 1, compression="lz4")
    assert [r.value for b in read_batches(converted) for r in b] == [b"x"]


def test_control_batches_are_left_out_going_down():
    marker = write_batch([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x01"}],
                         is_control=True, is_transactional=True, producer_id=3, producer_epoch=0, base_offset=5)
    data = write_batch([{"value": b"a", "timestamp": 1}], base_offset=4) + marker
    out, report = convert(data, 1)
    assert [r.offset for b in read_batches(out) for r in b] == [4] and report.control_batches_skipped == 1


def test_convert_command(tmp_path):
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(SAMPLE)
    out = tmp_path / "converted.log"
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "convert", "--magic", "1", "--compression", "snappy",
                          str(src), str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "headers dropped" in run.stderr and "wrote" in run.stdout
    assert {b.magic for b in read_batches(out.read_bytes())} == {1}
