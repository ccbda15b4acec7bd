"""Offsets missing between batches. Kafka gives every record the next offset, so a partition's
batches follow each other without a gap; only the log cleaner (cleanup.policy=compact) removes
records and leaves gaps. Where nothing shows that a partition is compacted, a gap is records lost:
a segment removed from the middle, or bytes cut from one.

Compaction shows as: a topic Kafka always compacts (__consumer_offsets, __transaction_state), the
partition listed in the log dir's cleaner-offset-checkpoint (the cleaner's progress), a v2 batch
the cleaner rewrote (a delete horizon set, or fewer records than its offsets span), or a segment
whose first batch comes after its base offset (the cleaner keeps the name, not the first records)."""
from __future__ import annotations

from pathlib import Path

from kafkacodec.runtime.errors import DecodeError

from ..diskio.safeio import FileProblem
from ..layout.textfiles import read_offset_checkpoint
from ..segments.scan import BatchInfo

ALWAYS_COMPACTED = ("__consumer_offsets", "__transaction_state")
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"


def first_offset(item: BatchInfo) -> int | None:
    """The batch's first offset where its header says it: a v2 batch's base offset, a lone v0/v1
    message's offset; None for a compressed v0/v1 wrapper (its offset is its last message's)."""
    if item.magic >= 2:
        return item.entry.base_offset
    return item.last_offset if int(item.entry.message.compression) == 0 else None


def rewritten_by_cleaner(item: BatchInfo) -> bool:
    """A v2 batch as only the cleaner writes it: with a delete horizon, or holding fewer records
    than its offsets span (producers number records one after another)."""
    if item.magic < 2:
        return False
    e = item.entry
    return bool(e.has_delete_horizon) or e.records_count != e.last_offset_delta + 1


def shows_compaction(topic: str, partition: int, log_dir: Path, cleaned_batches: int) -> bool:
    if topic in ALWAYS_COMPACTED or cleaned_batches:
        return True
    checkpoint = log_dir / CLEANER_CHECKPOINT
    if not checkpoint.is_file():
        return False
    try:
        return (topic, partition) in read_offset_checkpoint(checkpoint)
    except (DecodeError, FileProblem):  # a checkpoint that does not read says nothing
        return False


def gap_problem(first_missing: int, last_missing: int, position: int, topic: str) -> str:
    missing = f"offset {first_missing} is" if first_missing == last_missing else \
        f"offsets {first_missing}..{last_missing} ({last_missing - first_missing + 1}) are"
    return (f"log: {missing} missing before the batch at position {position}: records lost, unless {topic} is "
            f"compacted, which nothing in the log dir shows (`verify --compacted '{topic}'` passes over its gaps)")
