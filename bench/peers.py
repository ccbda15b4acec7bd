"""The peers the benchmark measures beside kafkacodec, each reading or writing the same bytes:
kafka-python's record code (pure Python), aiokafka's C extension, and the Python parser the
official Kaitai compiler generates from our schemas (kaitaistruct runtime)."""
from __future__ import annotations

import importlib
import io
import sys
import tempfile
from pathlib import Path

from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder
from aiokafka.record.legacy_records import LegacyRecordBatchBuilder as AioLegacyBuilder
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords


def driver_from_tests(name: str):
    """The tests' driver of a peer (tests/support/peers/<name>.py), loaded by path: this module's own
    name is `peers` too."""
    import importlib.util
    path = Path(__file__).resolve().parent.parent / "tests" / "support" / "peers" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"kafkacodec_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def kp_encode(batch, codec: str, magic: int = 2) -> bytes:
    if magic < 2:
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=CODECS[codec], batch_size=1 << 30)
        for off, ts, key, value, _ in batch:
            b.append(off, timestamp=ts if magic else None, key=key, value=value)
        return bytes(b.build())
    b = DefaultRecordBatchBuilder(magic=2, compression_type=CODECS[codec], is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for off, ts, key, value, headers in batch:
        b.append(off, timestamp=ts, key=key, value=value, headers=headers)
    return bytes(b.build())


def aio_encode(batch, codec: str, magic: int = 2) -> bytes:
    if magic < 2:
        b = AioLegacyBuilder(magic, CODECS[codec], 1 << 30)
        for off, ts, key, value, _ in batch:
            b.append(off, ts if magic else None, key, value)
        return bytes(b.build())
    b = AioBuilder(magic=2, compression_type=CODECS[codec], is_transactional=False, producer_id=-1,
                   producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for off, ts, key, value, headers in batch:
        b.append(off, timestamp=ts, key=key, value=value, headers=headers)
    return bytes(b.build())


def _batches(records_class, blob):
    """The batches of a message set (legacy: one per entry, or the compressed wrapper)."""
    records = records_class(blob)
    while (batch := records.next_batch()) is not None:
        yield batch


def _decode(blobs, magic: int, batch_class, records_class) -> int:
    n = 0
    for blob in blobs:
        for batch in ([batch_class(blob)] if magic == 2 else _batches(records_class, blob)):
            for r in batch:
                r.offset, r.timestamp, r.key, r.value, r.headers
                n += 1
    return n


def kp_decode(blobs, magic: int = 2) -> int:
    return _decode(blobs, magic, DefaultRecordBatch, MemoryRecords)


def aio_decode(blobs, magic: int = 2) -> int:
    return _decode(blobs, magic, AioBatch, AioMemoryRecords)


def official_parser():
    """The record_batch module the official compiler generates, or None without node and the
    npm package (make bench installs them)."""
    official_compiler = driver_from_tests("official")
    if not official_compiler.available():
        return None
    out = official_compiler.compile_schemas(Path(tempfile.mkdtemp(prefix="ksc-")),
                                            ["record_batch", "varint", "varlong"])
    (out / "kafka_compression.py").write_text(
        "class KafkaCompression:\n"
        "    def __init__(self, codec_id, magic):\n"
        "        assert codec_id == 0, 'the benchmark reads uncompressed batches with it'\n"
        "    def decode(self, data):\n"
        "        return data\n")
    sys.path.insert(0, str(out))
    return importlib.import_module("record_batch")


def official_decode(module, blobs) -> int:
    from kaitaistruct import KaitaiStream
    n = 0
    for blob in blobs:
        batch = module.RecordBatch(KaitaiStream(io.BytesIO(blob)))
        base, first = batch.base_offset, batch.base_timestamp
        for r in batch.records.items:
            base + r.offset_delta.value, first + r.timestamp_delta.value, r.key, r.value, r.headers
            n += 1
    return n
