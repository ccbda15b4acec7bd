"""Convert a segment between message formats as brokers do (RecordsUtil.downConvert, LogValidator).

Each source batch becomes one batch (v2) or one entry per record / one compressed wrapper
(v0/v1), keeping offsets and codecs. Going down, headers and producer fields are dropped and
control batches are left out (Kafka does the same); magic 0 has no timestamps. Going up, records
keep their timestamps and legacy data gets no producer id.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kafkacodec.codec.records import Record, read_batches, write_batch
from kafkacodec.runtime.errors import KafkaCodecError


class ConversionError(KafkaCodecError):
    """A batch that cannot exist in the target format (zstd below magic 2)."""


@dataclass
class ConversionReport:
    batches: int = 0
    records: int = 0
    headers_dropped: int = 0
    control_batches_skipped: int = 0
    notes: list[str] = field(default_factory=list)


def convert(data: bytes, magic: int, compression: str | None = None,
            progress: Callable[[int], None] = lambda size: None) -> tuple[bytes, ConversionReport]:
    """`data`'s batches in message format `magic` (offsets kept); `progress` is told each batch's size."""
    if magic not in (0, 1, 2):
        raise ValueError(f"unknown magic {magic}")
    out = bytearray()
    report = ConversionReport()
    for batch in read_batches(data):
        progress(batch.size)
        if batch.magic == magic and compression in (None, batch.compression):
            out += data[batch.position:batch.position + batch.size]  # already in the target format
            report.batches += 1
            report.records += sum(1 for _ in batch)
            continue
        e = batch.entry
        if magic < 2 and not batch.is_legacy and (e.is_control or e.records_count == 0):
            report.control_batches_skipped += e.is_control
            continue
        codec = compression or batch.compression
        if codec == "zstd" and magic < 2:
            raise ConversionError(f"batch at byte {batch.position}: zstd cannot be written in magic {magic}; "
                                  "choose another codec")
        records = list(batch)
        if magic < 2:
            report.headers_dropped += sum(len(r.headers) for r in records)
        options = {}
        if not batch.is_legacy:
            log_append = int(e.timestamp_type) == 1
            options = {"timestamp_type": "LogAppendTime" if log_append else "CreateTime",
                       "log_append_time": e.max_timestamp if log_append else None}
            if magic == 2:
                options.update(partition_leader_epoch=e.partition_leader_epoch, producer_id=e.producer_id,
                               producer_epoch=e.producer_epoch, base_sequence=e.base_sequence,
                               is_transactional=e.is_transactional, is_control=e.is_control)
        elif batch.magic == 1 and int(batch.entry.message.timestamp_type) == 1:
            options = {"timestamp_type": "LogAppendTime", "log_append_time": batch.entry.message.timestamp}
        converted = [Record(key=r.key, value=r.value, offset=r.offset,
                            timestamp=None if (magic == 0 or r.timestamp < 0) else r.timestamp,
                            headers=list(r.headers) if magic == 2 else []) for r in records]
        out += write_batch(converted, magic=magic, compression=codec, **options)
        report.batches += 1
        report.records += len(records)
    if report.headers_dropped:
        report.notes.append(f"{report.headers_dropped} record headers dropped: magic {magic} has none")
    if report.control_batches_skipped:
        report.notes.append(f"{report.control_batches_skipped} control batches left out, as brokers do")
    return bytes(out), report
