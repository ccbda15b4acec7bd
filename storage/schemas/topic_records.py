"""The registry's state from its storage topic's partition: every record applied in offset order,
as the registry's reader applies them at start-up. A record the registry does not write, and
damage in the partition, are passed over and said (file, byte, offset)."""
from __future__ import annotations

from kafkacodec.codec.values.registry import RecordProblem, Registry
from kafkacodec.storage.layout.logdir import Partition
from kafkacodec.storage.segments.reader import partition_records

from .source import SchemaSource


def registry_of(records, passed_over) -> Registry:
    """The registry's state from (where, batch, record) of its storage topic, in offset order;
    `passed_over(message)` is told of each record the registry does not write."""
    registry = Registry()
    for where, batch, record in records:
        if not batch.is_legacy and batch.entry.is_control:
            continue
        try:
            registry.apply(record.key, record.value)
        except RecordProblem as why:
            passed_over(f"{where}: the record at offset {record.offset} (batch at byte {batch.position}) is passed "
                        f"over: {why}")
    return registry


def source(part: Partition) -> SchemaSource:
    problems: list[str] = []

    def damaged(damage) -> None:
        problems.append(f"{damage.error}; the records after it in {damage.segment.log.name} are not read")

    records = ((part.path, batch, record) for batch, record in partition_records(part, on_damage=damaged))
    return SchemaSource(registry_of(records, problems.append), str(part.path), damaged=problems)
