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

from .sink_merge import move_segments

TEMPORARY = "_temporary"


@dataclass
class TaskWritten(WriterCommitMessage):
    folder: str
    ranges: list[tuple[str, int, int, int, bool]]  # topic, partition, first, last, offsets assigned here


def _batch_key(row: dict):
    """Rows read from a log keep their batch: the segment and position they came from."""
    if row.get("segment") is not None and row.get("position") is not None:
        return (row["segment"], row["position"])
    return None


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
        rows_by_tp: dict[tuple[str, int], list[dict]] = defaultdict(list)
        for batch in iterator:
            for row in batch.to_pylist():
                if row.get("corruption"):
                    continue  # rows standing for damaged batches (onCorrupt=report) hold no record
                rows_by_tp[(row["topic"], int(row["partition"]))].append(row)
        folder = Path(self.root) / TEMPORARY / uuid.uuid4().hex
        ranges = []
        for (topic, partition), rows in sorted(rows_by_tp.items()):
            assigned = any(r.get("offset") is None for r in rows)
            if assigned:
                for i, r in enumerate(rows):
                    r["offset"] = i
            rows.sort(key=lambda r: r["offset"])
            with PartitionWriter(folder / f"{topic}-{partition}", segment_bytes=self.segment_bytes,
                                 start_offset=rows[0]["offset"]) as w:
                for chunk in self._batches(rows):
                    w.append([self._record(r) for r in chunk], **self._batch_options(chunk[0]))
            ranges.append((topic, partition, rows[0]["offset"], rows[-1]["offset"], assigned))
        return TaskWritten(str(folder), ranges)

    def _batches(self, rows: list[dict]):
        chunk: list[dict] = []
        for r in rows:
            if chunk and (len(chunk) >= self.records_per_batch or _batch_key(r) != _batch_key(chunk[0])):
                yield chunk
                chunk = []
            chunk.append(r)
        if chunk:
            yield chunk

    @staticmethod
    def _record(r: dict) -> dict:
        ts = r.get("timestamp")
        millis = -1 if ts is None else int(ts.timestamp() * 1000) if hasattr(ts, "timestamp") else int(ts)
        headers = [(h["key"], h["value"]) for h in (r.get("headers") or [])]
        return {"key": r.get("key"), "value": r.get("value"), "timestamp": millis, "offset": r["offset"],
                "headers": headers}

    def _batch_options(self, first: dict) -> dict:
        options = {"compression": self.compression}
        if first.get("producerId") is not None and first["producerId"] >= 0:
            options.update(producer_id=first["producerId"], producer_epoch=first.get("producerEpoch", -1),
                           base_sequence=first.get("sequence", -1),
                           is_transactional=bool(first.get("isTransactional")))
        if first.get("isControl"):
            options["is_control"] = True
        if first.get("timestampType") == 1:
            options["timestamp_type"] = "LogAppendTime"
        return options

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
