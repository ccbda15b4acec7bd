"""df.write.format("kafka-log").save(path): segments, indexes and snapshots per topic-partition.

Each task writes its rows into its own folder under `<path>/_temporary/<job>/`. The job's commit
takes the log dir's lock, finishes whatever an interrupted commit (or clean) left, then gathers
the partitions the tasks wrote in a staging directory (joining their segments up to
segmentBytes; rows written without offsets by several tasks get theirs here, and a partition
written by several tasks its producer state replayed whole, see sink_offsets)
and puts them in place as one journaled publication (storage.change.replace): a kill
before every partition is gathered leaves the log dir as it was, a kill after is finished by the
next write or by `kafkacodec recover`. A failed or aborted job removes its temporary folders, so
a reader never sees a partial segment. Writing goes to a local (or mounted) filesystem."""
from __future__ import annotations

import logging
import os
import time
import uuid
from collections import defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from kafkacodec.storage.change import unfinished
from kafkacodec.storage.diskio.durable import remove_tree
from kafkacodec.storage.change.lock import LogDirBusy, holding
from kafkacodec.storage.change.replace import Publication
from kafkacodec.storage.change.writer import DEFAULT_SEGMENT_BYTES, PartitionWriter

from .sink_rows import RowsError, batches, partitions
from .sink_merge import move_segments
from .sink_offsets import Piece, assign, rebuild_producer_files, renumber
from .sink_transactions import left_open

TEMPORARY = "_temporary"
LOCK_WAIT_SECONDS = 600  # how long a commit waits for another job's commit (or a command) to finish
log = logging.getLogger("kafkacodec.pipeline")  # the commit runs on the driver: Spark shows it on its console


@contextmanager
def _lock(root: Path):
    """The log dir's lock, waited for: jobs writing other partitions of the same log dir commit in turn."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    with ExitStack() as held:
        while True:
            try:
                lock = held.enter_context(holding(root, "write"))
                break
            except LogDirBusy:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield lock


@dataclass
class TaskWritten(WriterCommitMessage):
    folder: str  # the task's folder in the job's temporary directory
    ranges: list[tuple[str, int, int, int, bool]]  # topic, partition, first, last, offsets assigned here
    task: int | None = None  # Spark's partition id of the task (None outside Spark): the order of assigned offsets


def _task_id() -> int | None:
    context = TaskContext.get()
    return None if context is None else context.partitionId()


class KafkaLogWriter(DataSourceArrowWriter):
    def __init__(self, options: dict, schema, overwrite: bool):
        o = {k.lower(): v for k, v in options.items()}
        if not o.get("path"):
            raise ValueError("kafka-log: save(path) needs the log dir to write")
        self.root = str(o["path"])
        self.job = uuid.uuid4().hex  # made on the driver: every task of the job writes under it
        self.overwrite = overwrite
        self.compression = o.get("compression", "none")
        self.segment_bytes = int(o.get("segmentbytes", DEFAULT_SEGMENT_BYTES))
        self.records_per_batch = int(o.get("recordsperbatch", 1000))
        names = set(schema.fieldNames())
        missing = {"value", "topic", "partition"} - names
        if missing:
            raise ValueError(f"kafka-log: the DataFrame lacks the columns {sorted(missing)} of Kafka's schema")

    def _job_dir(self) -> Path:
        return Path(self.root) / TEMPORARY / self.job

    def write(self, iterator) -> TaskWritten:
        name = uuid.uuid4().hex
        folder = self._job_dir() / name
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
        return TaskWritten(name, ranges, _task_id())

    def commit(self, messages) -> None:
        root = Path(self.root)
        by_tp: dict[tuple[str, int], list[Piece]] = defaultdict(list)
        in_task_order = sorted(range(len(messages)), key=lambda i: (
            i if messages[i].task is None else messages[i].task, i))
        for m in (messages[i] for i in in_task_order):
            for topic, partition, first, last, assigned in m.ranges:
                by_tp[(topic, partition)].append(Piece(first, last, assigned, self._job_dir() / m.folder))
        root.mkdir(parents=True, exist_ok=True)
        try:
            with _lock(root):
                unfinished.resume(root)  # what an interrupted commit or clean left, finished first
                self._check(root, by_tp)
                self._publish(root, by_tp)
        except BaseException:
            try:
                self.abort(messages)
            except Exception:  # the commit's own failure is the one to report (a read-only disk fails both)
                pass
            raise
        self._remove_job_dir()

    def _check(self, root: Path, by_tp: dict) -> None:
        """Offsets assigned where tasks wrote rows without them, then every problem said at once."""
        problems = []
        for (topic, partition), parts in by_tp.items():
            mixed = assign(parts)
            if mixed is not None:
                problems.append(f"{topic}-{partition}: {mixed}")
            parts.sort(key=lambda p: (p.first, p.last))
            overlaps = [(before, after) for before, after in zip(parts, parts[1:]) if after.first <= before.last]
            if overlaps:  # one task's rows between another's: repartition(n) deals rows round robin
                before, after = overlaps[0]
                problems.append(
                    f"{topic}-{partition}: the offsets that {len(parts)} tasks wrote overlap ({before.first} to "
                    f"{before.last} and {after.first} to {after.last} of two of them): a partition's rows from several "
                    "tasks are joined a task at a time, so each task must hold offsets after the previous one's; "
                    "repartition by topic and partition, or order by topic, partition and offset, before writing")
            target = root / f"{topic}-{partition}"
            if target.exists() and any(target.iterdir()) and not self.overwrite:
                problems.append(f"{target} holds segments already; mode('overwrite') replaces them")
        if problems:
            raise ValueError("kafka-log: " + "; ".join(problems))

    def _publish(self, root: Path, by_tp: dict) -> None:
        """Every partition gathered in the staging directory, then all put in place at once."""
        publication = Publication(root, in_place=True, kind="write")
        publication.begin()
        names, warnings = [], []
        try:
            for (topic, partition), parts in sorted(by_tp.items()):
                name = f"{topic}-{partition}"
                (publication.new / name).mkdir()
                # several tasks: none knew the producer state before its rows (a transaction another
                # task opened, producers only another task saw), so it is replayed from the whole partition
                several = len(parts) > 1
                if several:
                    for p in parts:
                        renumber(p.folder / name, p.shift)
                move_segments([p.folder / name for p in parts], publication.new / name, self.segment_bytes)
                if several:
                    rebuild_producer_files(publication.new / name)
                names.append(name)
                warnings.append(left_open(name, publication.new / name))
        except BaseException:
            publication.abandon()
            raise
        publication.publish(names)
        for warning in filter(None, warnings):
            log.warning("kafka-log: %s", warning)

    def _remove_job_dir(self) -> None:
        remove_tree(self._job_dir())
        try:
            os.rmdir(Path(self.root) / TEMPORARY)  # when no other job is writing here
        except OSError:
            pass

    def abort(self, messages) -> None:
        self._remove_job_dir()
