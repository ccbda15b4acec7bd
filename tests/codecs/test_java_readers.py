"""The Java readers generated from the schemas (generated/java, with the Java runtime in
runtime/java), compiled with javac and run on segments that kafka-python wrote: every field of
every record equal to what the Python readers give, and damaged segments refused where the
Python readers refuse them, at the same byte and field."""
import json
import os
import random
import shutil
import subprocess

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.segments.scan import batch_positions
from tests.support import TESTS

ROOT = TESTS.parent
CODECS = (0, 1, 2, 3, 4)  # none, gzip, snappy, lz4, zstd
pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK")


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    """Run the Java readers over segments (one JVM for all): the JSON lines of each."""
    out = tmp_path_factory.mktemp("java")
    sources = [*(ROOT / "runtime/java").rglob("*.java"), *(ROOT / "generated/java").rglob("*.java"),
               TESTS / "support/java/DumpBatches.java"]
    classpath = f"{out}{os.pathsep}{spark_jars()}"
    subprocess.run(["javac", "-cp", classpath, "-d", str(out), *map(str, sources)], check=True)

    def run(segments: list[bytes], verify: bool = True) -> list[list[dict]]:
        paths = []
        for i, seg in enumerate(segments):
            paths.append(out / f"segment-{i}.log")
            paths[-1].write_bytes(seg)
        done = subprocess.run(["java", "-cp", classpath, "DumpBatches"] + ([] if verify else ["--no-verify"])
                              + list(map(str, paths)), check=True, capture_output=True, text=True)
        found: list[list[dict]] = []
        for line in done.stdout.splitlines():
            item = json.loads(line)
            if set(item) == {"file"}:
                found.append([])
            else:
                found[-1].append(item)
        return found
    return run


def legacy_line(pos: int, entry) -> dict:
    m = entry.message
    value = m.value
    return {"pos": pos, "offset": entry.offset, "magic": m.magic, "attributes": m.attributes,
            "timestamp": m.timestamp, "key": hexed(m.key),
            "value": [legacy_line(-1, e) for e in value.entries] if hasattr(value, "entries") else hexed(value)}


def python_lines(seg: bytes, verify: bool = True) -> list[dict]:
    out, pos = [], 0
    try:
        while pos < len(seg):
            if pos + 16 < len(seg) and seg[pos + 16] < 2:
                entry, after = LegacyLogEntry.read(seg, pos, verify=verify)
                if verify:  # the inner messages' CRCs, which the Java readers check as they read them
                    for inner in getattr(entry.message.value, "entries", ()):
                        inner.message._verify()
                out.append(legacy_line(pos, entry))
                pos = after
                continue
            batch, after = RecordBatch.read(seg, pos, verify=verify)
            records = [[r.offset, r.timestamp, hexed(r.key), hexed(r.value), [[java_text(h.key), hexed(h.value)]
                                                                              for h in r.headers]]
                       for r in batch.records.items]
            out.append({"pos": pos, "base_offset": batch.base_offset, "attributes": batch.attributes,
                        "producer_id": batch.producer_id, "records": records})
            pos = after
    except DecodeError as err:
        out.append({"error": err.path, "position": err.position})
    return out


def java_text(key: str) -> str:
    """A header key as Java decodes it: bytes that are not UTF-8 replaced, where Python escapes them."""
    return key.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def hexed(value: bytes | None):
    return None if value is None else value.hex()


def kafka_python_batch(rng: random.Random, codec: int, base_offset: int, log_append_time: bool = False,
                       large: bool = True) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=rng.random() < 0.3,
                                  producer_id=rng.choice([-1, 7, 1 << 40]), producer_epoch=0, base_sequence=0,
                                  batch_size=1 << 30)
    for i in range(rng.randrange(1, 30)):
        key = rng.choice([None, b"", b"k%d" % i, bytes(rng.randrange(200))])
        value = rng.choice([None, b"", bytes(rng.randrange(300)), bytes(rng.randrange(20000 if large else 300))])
        headers = [("h%d" % j, rng.choice([None, b"", bytes(rng.randrange(40))])) for j in range(rng.choice([0, 1, 3]))]
        b.append(i, timestamp=1_700_000_000_000 + rng.choice([0, -5, 70_000, i]), key=key, value=value,
                 headers=headers)
    data = bytearray(b.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    if log_append_time:  # the timestamp-type bit, and the CRC again over the changed attributes
        import crc32c
        data[22] |= 0x08
        data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


def segment(seed: int, codecs=(0, 1), large: bool = True) -> bytes:
    rng = random.Random(seed)
    return b"".join(kafka_python_batch(rng, rng.choice(codecs), 100 * i, rng.random() < 0.2, large) for i in range(8))


def spark_jars() -> str:
    """The jars of the installed pyspark (snappy-java, lz4-java and zstd-jni among them) as a class path."""
    import pyspark
    return os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")


def test_every_field_of_every_record_equals_the_python_readers(dump):
    segments = [segment(seed, CODECS) for seed in range(10)]
    want = [python_lines(seg) for seg in segments]
    assert all("error" not in lines[-1] and len(lines) == 8 for lines in want)
    assert dump(segments) == want


@pytest.mark.parametrize("verify", [True, False], ids=["CRCs checked", "records reached"])
def test_damaged_segments_fail_where_the_python_readers_fail(dump, verify):
    """With CRCs checked most damage is a CRC mismatch; without, it reaches the records."""
    rng = random.Random(3)
    clean = segment(11, codecs=(0,), large=False)  # uncompressed: damage lands in the records as they are read
    starts = batch_positions(clean)
    segments = []
    for _ in range(80):
        seg = bytearray(clean)
        for _ in range(rng.choice([1, 3])):  # mostly in a header or the first records, where the sizes are
            at = rng.choice(starts) + rng.randrange(120) if rng.random() < 0.7 else rng.randrange(len(seg))
            seg[min(at, len(seg) - 1)] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        segments.append(bytes(seg))
    want = [python_lines(seg, verify) for seg in segments]
    assert sum("error" in lines[-1] for lines in want) > 10  # the damage reached the readers' checks
    assert dump(segments, verify) == want


@pytest.mark.parametrize("codec", CODECS[1:], ids=["gzip", "snappy", "lz4", "zstd"])
def test_damaged_compressed_records_fail_where_the_python_readers_fail(dump, codec):
    """Bytes changed inside a compressed payload (CRCs not checked, so that the decompressors meet
    them): refused by both at the same field and byte, or read alike where the damage still
    decompresses to records that read."""
    rng = random.Random(codec)
    clean = kafka_python_batch(rng, codec, 0, large=False)
    segments = []
    for _ in range(40):
        seg = bytearray(clean)
        at = 61 + rng.randrange(len(seg) - 61)
        seg[at] = (seg[at] + rng.randrange(1, 256)) % 256
        segments.append(bytes(seg))
    segments.append(clean[:61] + clean[61:-3])  # a payload cut short (the batch length no longer matches)
    want = [python_lines(seg, verify=False) for seg in segments]
    assert sum("error" in lines[-1] for lines in want) > 5
    assert dump(segments, verify=False) == want


def legacy_segment(seed: int) -> bytes:
    """Legacy entries as kafka-python writes them: magic 0 and 1, plain and in compressed wrappers."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    rng = random.Random(seed)
    out = b""
    for i in range(10):
        magic, codec = rng.choice([0, 1]), rng.choice([0, 1, 2, 3])
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
        for j in range(rng.randrange(1, 6) if codec else 1):
            b.append(j, timestamp=1_700_000_000_000 + j if magic else None,
                     key=rng.choice([None, b"", b"k%d" % j]), value=rng.choice([None, b"", bytes(rng.randrange(300))]))
        out += bytes(b.build())
    return out


def test_legacy_entries_and_wrappers_equal_the_python_readers(dump):
    segments = [legacy_segment(seed) for seed in range(8)]
    want = [python_lines(seg) for seg in segments]
    assert all("error" not in lines[-1] for lines in want)
    assert any(isinstance(line["value"], list) for lines in want for line in lines)  # wrappers among them
    assert dump(segments) == want


@pytest.mark.parametrize("verify", [True, False], ids=["CRCs checked", "records reached"])
def test_damaged_legacy_entries_fail_where_the_python_readers_fail(dump, verify):
    rng = random.Random(9)
    clean = legacy_segment(4)
    segments = []
    for _ in range(60):
        seg = bytearray(clean)
        at = rng.randrange(len(seg))
        seg[at] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        segments.append(bytes(seg))
    want = [python_lines(seg, verify) for seg in segments]
    assert sum("error" in lines[-1] for lines in want) > 10
    assert dump(segments, verify) == want
