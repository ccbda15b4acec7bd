"""`dump --json` and `write`: JSON Lines with the documented keys, and a byte-exact round trip of
uncompressed segments (kafka-python's sample, librdkafka's)."""
import json
import subprocess
import sys

from tests.support import TESTS
from kafkacodec import read_batches, write_batch
from kafkacodec.storage.exchange.jsonl import from_json, to_json

KEYS = ["file", "position", "size", "magic", "baseOffset", "lastOffset", "count", "partitionLeaderEpoch", "crc",
        "crcValid", "recordsValid", "compression", "timestampType", "isTransactional", "isControl", "producerId", "producerEpoch",
        "baseSequence", "firstTimestamp", "maxTimestamp", "deleteHorizonMs", "records"]


def kc(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, input=stdin)


def test_dump_json_keys_and_values():
    run = kc("dump", "--json", str(TESTS / "fixtures" / "sample.log"))
    objs = [json.loads(line) for line in run.stdout.splitlines()]
    assert all(list(o) == KEYS for o in objs) and len(objs) == 10
    legacy, v2 = objs[0], objs[-1]
    assert (legacy["magic"], legacy["producerId"], legacy["isTransactional"], legacy["timestampType"]) == (
        0, -1, False, "NoTimestampType")
    assert (v2["magic"], v2["isTransactional"], v2["producerId"], v2["count"]) == (2, True, 4000, 3)
    assert v2["records"][0]["headers"][0] == ["source", "d2Vi"]  # base64 of b"web"
    assert objs[5]["compression"] == "gzip" and [r["offset"] for r in objs[5]["records"]] == [5, 6, 7, 8]


def uncompressed_segments():
    yield (TESTS / "fixtures" / "librdkafka" / "v2_none.bin").read_bytes()
    yield (TESTS / "fixtures" / "librdkafka" / "v0_none.bin").read_bytes()
    sample = (TESTS / "fixtures" / "sample.log").read_bytes()
    yield b"".join(sample[b.position:b.position + b.size] for b in read_batches(sample) if b.compression == "none")


def test_write_reproduces_uncompressed_segments_byte_for_byte(tmp_path):
    for i, data in enumerate(uncompressed_segments()):
        src = tmp_path / f"{i:020d}.src.log"
        src.write_bytes(data)
        dumped = kc("dump", "--json", str(src)).stdout
        (tmp_path / str(i)).mkdir()
        out = tmp_path / str(i) / "00000000000000000000.log"  # each starts at offset 0
        run = kc("write", "--index", str(out), stdin=dumped)
        assert run.returncode == 0, run.stderr
        assert out.read_bytes() == data
        assert out.with_suffix(".index").exists() and out.with_suffix(".timeindex").exists()
        assert kc("write", str(out), stdin=dumped).returncode == 2  # never overwrites unasked


def test_compressed_batches_round_trip_to_the_same_records():
    for magic, codec in ((2, "zstd"), (1, "gzip"), (0, "snappy")):
        data = write_batch([{"key": b"k%d" % i, "value": b"v" * i, "timestamp": 50 + i} for i in range(7)],
                           magic=magic, compression=codec, base_offset=100)
        (batch,) = read_batches(data)
        again = from_json(json.loads(json.dumps(to_json(batch))))
        assert [(r.offset, r.timestamp, r.key, r.value) for b in read_batches(again) for r in b] == \
            [(r.offset, r.timestamp, r.key, r.value) for r in batch]


def test_control_records_are_described():
    marker = write_batch([{"key": b"\x00\x00\x00\x01", "value": b"\x00\x00\x00\x00\x00\x07", "timestamp": 1}],
                         is_control=True, is_transactional=True, producer_id=9, producer_epoch=0)
    (batch,) = read_batches(marker)
    assert to_json(batch)["records"][0]["control"] == {"type": "COMMIT", "version": 0, "coordinatorEpoch": 7}
