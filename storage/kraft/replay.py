"""The cluster's state at a point of `__cluster_metadata`: the newest KRaft snapshot at or before
the point, then the log's records after the snapshot up to the point, replayed into a
metadata_image.Image as Kafka 4.1's metadata loader (MetadataBatchLoader) does: records of a
metadata transaction take effect at its end, not at all if it aborts; a transaction marker out
of place is a fault that changes nothing. Files are read as metadata_reader says Kafka's reader
reads them. Also the events one at a time, for histories."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..layout import names
from ..layout.logdir import Partition, open_partition
from .image import Image, ReplayProblem
from .reader import (KRAFT_VERSION, LEADER_CHANGE, SNAPSHOT_HEADER, TOPIC, VOTERS, Event, MetadataLogProblem,  # noqa: F401
                     UndecodableBatch, event_of, file_batches, snapshot_batches)

NESTED_BEGIN = "Encountered BeginTransactionRecord while already in a transaction"
LONE_MARKER = "Encountered {} without having seen a BeginTransactionRecord"


@dataclass(frozen=True)
class Point:
    """Where to stop: after the record at `offset`, or after the last record at or before `time`
    (ms); neither means the end of the log."""
    offset: int | None = None
    time: int | None = None

    def passed_by(self, offset: int, time: int | None) -> bool:
        if self.offset is not None:
            return offset > self.offset
        return self.time is not None and time is not None and time > self.time


@dataclass
class Snapshot:
    end_offset: int  # the snapshot holds the state of every offset before this one
    epoch: int
    path: Path

    def time(self) -> int | None:
        """lastContainedLogTimestamp of its header (the time of the last record it covers); None
        when the header is missing or damaged."""
        try:
            for batch in snapshot_batches(self.path):
                header = batch.events[0].control
                return header[1].get("lastContainedLogTimestamp") if header[0] == SNAPSHOT_HEADER else None
        except MetadataLogProblem:
            pass
        return None


@dataclass
class MetadataLog:
    partition: Partition
    snapshots: list[Snapshot]  # by end offset


def open_metadata_log(path: Path) -> MetadataLog:
    """The metadata partition at `path`: `__cluster_metadata-0` itself, or a log dir holding it."""
    path = Path(path)
    part_dir = path if (path / "").name.startswith(TOPIC + "-") else path / f"{TOPIC}-0"
    if not part_dir.is_dir():
        raise MetadataLogProblem(f"{path}: no {TOPIC}-0 directory here (name the metadata log dir or the "
                                 "partition directory)")
    part = open_partition(part_dir, TOPIC, 0)
    snapshots = []
    for entry in sorted(part_dir.iterdir()):
        found = names.kraft_snapshot_id(entry.name)
        if found is not None and entry.is_file():
            snapshots.append(Snapshot(found[0], found[1], entry))
    return MetadataLog(part, sorted(snapshots, key=lambda s: s.end_offset))


def snapshot_events(snap: Snapshot, skip_undecodable: bool = False) -> Iterator[Event]:
    """A snapshot's records, each at the last offset it covers, at the time its header gives. A
    snapshot Kafka would not load raises MetadataLogProblem, at the latest after its last record."""
    time = None
    for batch in snapshot_batches(snap.path, skip_undecodable):
        for event in batch.events:
            if event.control and event.control[0] == SNAPSHOT_HEADER:
                time = event.control[1].get("lastContainedLogTimestamp")
            event.offset, event.time = snap.end_offset - 1, time
            yield event


def log_events(log: MetadataLog, start: int, skip_undecodable: bool = False) -> Iterator[Event]:
    """The log's records from offset `start`, as Kafka's reader hands them on. The metadata log is
    never compacted, so its offsets follow one another: a missing one (a log that begins after
    `start`, a lost segment) is a gap, and one that goes back is damage (`verify` fails it too)."""
    segments = log.partition.segments
    expected = start
    for i, seg in enumerate(segments):
        if i + 1 < len(segments) and segments[i + 1].base_offset <= start:
            continue  # wholly before the start: the snapshot stands for it
        for batch in file_batches(seg):
            if batch.events and batch.events[-1].offset < start and expected == start:
                continue
            if not skip_undecodable:
                batch.readable()
            for event in batch.events:
                if event.offset < expected:
                    if expected == start:
                        continue  # a batch that begins before the start
                    raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: offset {event.offset} comes after "
                                             f"offset {expected - 1}: the log's offsets go back")
                if event.offset > expected:
                    raise MetadataLogProblem(f"{seg.log}: offsets {expected} to {event.offset - 1} are missing (the "
                                             "log holds no record of them and no snapshot covers them)")
                expected += 1
                yield event


def snapshots_for(log: MetadataLog, point: Point) -> list[Snapshot]:
    """The snapshots whose state is at or before the point, newest first."""
    chosen = []
    for snap in log.snapshots:
        if point.offset is not None and snap.end_offset - 1 > point.offset:
            break
        if point.time is not None and point.offset is None:
            taken = snap.time()
            if taken is None or taken > point.time:
                continue
        chosen.append(snap)
    return chosen[::-1]


def earliest_snapshot(log: MetadataLog) -> Snapshot | None:
    """Where a history starts: nothing when the log still starts at offset 0, else the oldest snapshot."""
    first = log.partition.segments[0].base_offset if log.partition.segments else None
    if first == 0 or not log.snapshots:
        return None
    return log.snapshots[0]


@dataclass
class Replay:
    """An image and how it got there; `step` applies one event."""
    image: Image = field(default_factory=Image)
    snapshot: Snapshot | None = None
    offset: int | None = None  # the last offset applied
    time: int | None = None
    epoch: int | None = None
    records: int = 0  # log records applied after the snapshot
    problems: list[tuple[int, str]] = field(default_factory=list)  # records Kafka's replay refuses
    skipped: list[tuple[int, str]] = field(default_factory=list)  # records Kafka's reader cannot decode
    notes: list[str] = field(default_factory=list)  # snapshots passed over
    pending: list[Event] | None = None  # the records of an open metadata transaction
    began_at: int | None = None  # the offset of its BeginTransactionRecord
    stop: MetadataLogProblem | None = None  # why the replay ended before the point asked

    def step(self, event: Event, from_log: bool = True) -> list[Event]:
        """Apply an event; the events whose records took effect (a transaction's at its end)."""
        self.offset, self.time, self.epoch = event.offset, event.time, event.epoch
        self.records += from_log
        if event.problem is not None:
            self.skipped.append((event.offset, event.problem))
            return []
        if event.control is not None:
            self._quorum(*event.control, event.epoch)
        if event.record is None:  # a control record
            return []
        kind = event.record["type"]
        if kind == "BEGIN_TRANSACTION_RECORD":
            if self.pending is not None:  # Kafka's fault; the open transaction goes on
                self.problems.append((event.offset, NESTED_BEGIN))
            else:
                self.pending, self.began_at = [], event.offset
            return []
        if kind in ("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"):
            if self.pending is None:
                marker = "EndTransactionRecord" if kind.startswith("END") else "AbortTransactionRecord"
                self.problems.append((event.offset, LONE_MARKER.format(marker)))
                return []
            done, self.pending, self.began_at = self.pending, None, None
            return [e for e in done if self._apply(e)] if kind.startswith("END") else []
        if self.pending is not None:
            self.pending.append(event)
            return []
        return [event] if self._apply(event) else []

    def open_transaction(self) -> str | None:
        """What an open metadata transaction leaves out of the state, if one is open."""
        if self.pending is None:
            return None
        return (f"the metadata transaction begun at offset {self.began_at} is still open at offset {self.offset}: "
                f"its {len(self.pending)} record(s) are not in the state (Kafka applies them at its end)")

    def _apply(self, event: Event) -> bool:
        try:
            self.image.apply(event.record)
            return True
        except ReplayProblem as err:
            self.problems.append((event.offset, str(err)))
            return False

    def _quorum(self, kind: int, value: dict, epoch: int) -> None:
        quorum = self.image.quorum
        if kind == LEADER_CHANGE:
            quorum.update(leaderId=value.get("leaderId"), leaderEpoch=epoch,
                          voters=[v.get("voterId") for v in value.get("voters", [])])
        elif kind == VOTERS:
            quorum["voterSet"] = value.get("voters", [])
        elif kind == KRAFT_VERSION:
            quorum["kraftVersion"] = value.get("kRaftVersion", value.get("kraftVersion"))


def replay(log: MetadataLog, point: Point = Point(), skip_undecodable: bool = False) -> tuple[Replay, str | None]:
    """The state at `point` and, when the replay ended before it, why: damage, a gap, a record
    Kafka's reader cannot decode (the state is then the one after the last batch read), or a log
    that ends before the offset asked. A snapshot Kafka would not load is passed over for the next
    older one (or the log from offset 0), and said in the state's notes. `skip_undecodable` goes on
    past undecodable records, as Kafka does not, listing each in the state's `skipped`."""
    notes = []
    for snap in snapshots_for(log, point) + [None]:
        state = Replay(snapshot=snap)
        if snap is None:
            break
        try:
            for event in snapshot_events(snap, skip_undecodable):
                state.step(event, from_log=False)
            break
        except MetadataLogProblem as err:
            notes.append(f"snapshot passed over: {err}")
    state.notes = notes
    if snap is None and point.offset is not None and point.offset < 0:
        return state, None
    stopped = replay_onward(log, state, point, skip_undecodable)
    if stopped is not None and snap is None and state.offset is None:
        raise MetadataLogProblem("; ".join(notes + [stopped])) from None
    return state, stopped


def replay_onward(log: MetadataLog, state: Replay, point: Point, skip_undecodable: bool = False) -> str | None:
    """Carry `state`, a replay that met no damage, on to `point` at or after it, as a replay to
    `point` from the same start would go; why it stopped short of the point, if it did."""
    start = 0 if state.offset is None else state.offset + 1  # a snapshot's records stand at its last offset
    state.stop = None
    try:
        for event in log_events(log, start, skip_undecodable):
            if point.passed_by(event.offset, event.time):
                return None
            state.step(event)
    except MetadataLogProblem as err:
        state.stop = err
        return str(err)
    if point.offset is not None and (state.offset is None or state.offset < point.offset):
        end = "holds no record after the snapshot" if state.offset is None else f"ends at offset {state.offset}"
        state.stop = MetadataLogProblem(f"{log.partition.path}: the log {end}, before offset {point.offset}")
        return str(state.stop)
    return None
