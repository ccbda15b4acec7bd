"""df.write.format("kafka-log").save(path): segments, indexes and snapshots per topic-partition.

Each task writes its rows into its own folder under `<path>/_temporary/`; the job's commit moves
the segments into `<path>/<topic>-<partition>/` (joining the tasks' segments up to segmentBytes)
and a failed or aborted job removes the temporary folders, so a reader never sees a partial
segment. Writing goes to a local (or mounted)
filesystem."""
from __future__ import annotations

import shutil
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from kafkacodec.storage.writer import DEFAULT_SEGMENT_BYTES, PartitionWriter

from .sink_columns import RowsError, batches, partitions
from .sink_merge import move_segments

TEMPORARY = "_temporary"


@dataclass
class TaskWritten(WriterCommitMessage):
    folder: str
    ranges: list[tuple[str, int, int, int, bool]]  # topic, partition, first, last, offsets assigned here


class KafkaLogWriter(DataSourceArrowWriter):
    def __init__(self, options: dict, schema, overwrite: bool):
        o = {k.lower(): v for k, v in options.items()}
        if not o.get("path"):
            raise ValueError("kafka-log: save(path) needs the log dir to write")
        self.root = str(o["path"])
        self.overwrite = overwrite
        self.compression = o.get("compression", "none")
        self.segment_bytes = int(o.get("segmentbytes", DEFAULT_SEGMENT_BYTES))
        self.records_per_batch = int(o.get("recordsperbatch", 1000))
        names = set(schema.fieldNames())
        missing = {"value", "topic", "partition"} - names
        if missing:
            raise ValueError(f"kafka-log: the DataFrame lacks the columns {sorted(missing)} of Kafka's schema")

    def write(self, iterator) -> TaskWritten:
        folder = Path(self.root) / TEMPORARY / uuid.uuid4().hex
        ranges = []
        try:
            parts = list(partitions(list(iterator)))
        except RowsError as err:
            raise ValueError(f"kafka-log: {err}") from None
        for part in parts:
            offsets = part.rows["offset"]
            first, last = offsets[0].as_py(), offsets[-1].as_py()
            with PartitionWriter(folder / f"{part.topic}-{part.partition}", segment_bytes=self.segment_bytes,
                                 start_offset=first) as w:
                for records, options in batches(part, self.records_per_batch, self.compression):
                    w.append(records, **options)
            ranges.append((part.topic, part.partition, first, last, part.assigned))
        return TaskWritten(str(folder), ranges)

    def commit(self, messages) -> None:
        root = Path(self.root)
        by_tp = defaultdict(list)
        for m in messages:
            for topic, partition, first, last, assigned in m.ranges:
                by_tp[(topic, partition)].append((first, last, assigned, m.folder))
        problems = []
        for (topic, partition), parts in by_tp.items():
            parts.sort()
            if len(parts) > 1 and any(a for _, _, a, _ in parts):
                problems.append(f"{topic}-{partition}: rows without offsets came from {len(parts)} tasks; "
                                "repartition by topic and partition first, or give offsets")
            for (_, last, _, _), (first, _, _, _) in zip(parts, parts[1:]):
                if first <= last:
                    problems.append(f"{topic}-{partition}: two tasks wrote overlapping offsets around {first}")
            target = root / f"{topic}-{partition}"
            if target.exists() and any(target.iterdir()) and not self.overwrite:
                problems.append(f"{target} holds segments already; mode('overwrite') replaces them")
        if problems:
            self.abort(messages)
            raise ValueError("kafka-log: " + "; ".join(problems))
        for (topic, partition), parts in sorted(by_tp.items()):
            target = root / f"{topic}-{partition}"
            if self.overwrite and target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True, exist_ok=True)
            move_segments([Path(folder) / f"{topic}-{partition}" for _, _, _, folder in sorted(parts)], target,
                          self.segment_bytes)
        shutil.rmtree(root / TEMPORARY, ignore_errors=True)

    def abort(self, messages) -> None:
        for m in messages or []:
            if m is not None:
                shutil.rmtree(m.folder, ignore_errors=True)
        shutil.rmtree(Path(self.root) / TEMPORARY, ignore_errors=True)
