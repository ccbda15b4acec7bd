"""The cluster's state at a point of `__cluster_metadata`: the newest KRaft snapshot at or before
the point, then the log's records after the snapshot up to the point, replayed into a
metadata_image.Image as Kafka's metadata loader does (records of a metadata transaction take
effect at its end, not at all if it aborts). Also the events one at a time, for histories."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError, KafkaCodecError

from . import names
from .decoders import message_json
from .logdir import Partition, Segment, open_partition
from .metadata_image import Image, ReplayProblem
from .metadata_records import MetadataParseError, plain, read_record, record_json
from .reader import Damage, segment_batches

TOPIC = "__cluster_metadata"
LEADER_CHANGE, SNAPSHOT_HEADER, KRAFT_VERSION, VOTERS = 2, 3, 5, 6
CONTROL_CLASSES = {LEADER_CHANGE: ControlRecord.LeaderChangeMessage, SNAPSHOT_HEADER: ControlRecord.SnapshotHeaderRecord,
                   KRAFT_VERSION: ControlRecord.KraftVersionRecord, VOTERS: ControlRecord.VotersRecord}


class MetadataLogProblem(KafkaCodecError):
    """A metadata log whose state at the point asked cannot be known: no such log, a gap between
    snapshot and log, or damage before the point."""


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
            for event in snapshot_events(self):
                return event.time if event.control and event.control[0] == SNAPSHOT_HEADER else None
        except MetadataLogProblem:
            pass
        return None


@dataclass
class MetadataLog:
    partition: Partition
    snapshots: list[Snapshot]  # by end offset


@dataclass
class Event:
    offset: int
    time: int | None
    epoch: int
    record: dict | None = None  # a metadata record's JSON
    control: tuple[int, dict] | None = None  # a KRaft control record: (type, value's JSON)
    problem: str | None = None  # a record Kafka's loader cannot read


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


def _events(seg: Segment) -> Iterator[Event]:
    """The metadata and control records of one file; damage raises MetadataLogProblem naming file and byte."""
    for batch in segment_batches(seg):
        if isinstance(batch, Damage):
            raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: {batch.error.message}")
        entry = batch.entry
        control = bool(entry.attributes & 0x20)
        try:
            records = list(batch)
        except DecodeError as err:  # damage under a valid CRC
            raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: the batch's records do not decode: "
                                     f"{err.message}") from None
        for rec in records:
            yield event_of(rec, entry.partition_leader_epoch, control)


def event_of(rec, epoch: int, control: bool) -> Event:
    """A record of a metadata log or snapshot as an Event: its metadata JSON, its control value, or why not."""
    event = Event(rec.offset, rec.timestamp, epoch)
    if control:
        key = bytes(rec.key or b"")
        kind = struct.unpack_from(">h", key, 2)[0] if len(key) >= 4 else None
        if kind in CONTROL_CLASSES:
            try:
                event.control = (kind, message_json(CONTROL_CLASSES[kind].from_bytes(bytes(rec.value or b""))))
            except KafkaCodecError:
                event.problem = f"a control record of type {kind} that does not decode"
        return event
    if rec.value is None:
        event.problem = "the record has no value"
        return event
    try:
        event.record = plain(record_json(*read_record(bytes(rec.value))))
    except MetadataParseError as err:
        event.problem = str(err)
    return event


def snapshot_events(snap: Snapshot) -> Iterator[Event]:
    """A snapshot's records, each at the last offset it covers, at the time its header gives."""
    time = None
    for event in _events(Segment(0, snap.path)):
        if event.control and event.control[0] == SNAPSHOT_HEADER:
            time = event.control[1].get("lastContainedLogTimestamp")
        event.offset, event.time = snap.end_offset - 1, time
        yield event


def log_events(log: MetadataLog, start: int) -> Iterator[Event]:
    """The log's records from offset `start`. The metadata log is never compacted, so its offsets
    follow one another: a missing one (a log that begins after `start`, a lost segment) is a gap."""
    expected = start
    for seg in log.partition.segments:
        for event in _events(seg):
            if event.offset > expected:
                raise MetadataLogProblem(f"{seg.log}: offsets {expected} to {event.offset - 1} are missing (the log "
                                         "holds no record of them and no snapshot covers them)")
            if event.offset == expected:
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
    problems: list[tuple[int, str]] = field(default_factory=list)
    pending: list[Event] | None = None  # the records of an open metadata transaction

    def step(self, event: Event, from_log: bool = True) -> list[Event]:
        """Apply an event; the events whose records took effect (a transaction's at its end)."""
        self.offset, self.time, self.epoch = event.offset, event.time, event.epoch
        self.records += from_log
        if event.problem is not None:
            self.problems.append((event.offset, event.problem))
            return []
        if event.control is not None:
            self._quorum(*event.control, event.epoch)
        if event.record is None:  # a control record
            return []
        kind = event.record["type"]
        if kind == "BEGIN_TRANSACTION_RECORD":
            self.pending = []
            return []
        if kind == "ABORT_TRANSACTION_RECORD":
            self.pending = None
            return []
        if kind == "END_TRANSACTION_RECORD":
            done, self.pending = self.pending or [], None
            return [e for e in done if self._apply(e)]
        if self.pending is not None:
            self.pending.append(event)
            return []
        return [event] if self._apply(event) else []

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


def replay(log: MetadataLog, point: Point = Point()) -> tuple[Replay, str | None]:
    """The state at `point` and, when damage was met, what it was: a damaged snapshot is passed
    over for the next older one (or the log from offset 0), and damage in the log before the
    point stops the replay there (the state is then the one after the last record read)."""
    notes = []
    for snap in snapshots_for(log, point) + [None]:
        state = Replay(snapshot=snap)
        if snap is None:
            break
        try:
            for event in snapshot_events(snap):
                state.step(event, from_log=False)
            break
        except MetadataLogProblem as err:
            notes.append(f"snapshot passed over: {err}")
    if snap is None and point.offset is not None and point.offset < 0:
        return state, None
    try:
        for event in log_events(log, 0 if snap is None else snap.end_offset):
            if point.passed_by(event.offset, event.time):
                break
            state.step(event)
    except MetadataLogProblem as err:
        if snap is None and state.offset is None:
            raise MetadataLogProblem("; ".join(notes + [str(err)])) from None
        notes.append(str(err))
    return state, "; ".join(notes) or None


def replay_onward(log: MetadataLog, state: Replay, point: Point) -> str | None:
    """Carry `state`, a replay that met no damage, on to `point` at or after it, as a replay to
    `point` from the same start would go; what damage stopped it, if any."""
    try:
        for event in log_events(log, 0 if state.offset is None else state.offset + 1):
            if point.passed_by(event.offset, event.time):
                break
            state.step(event)
    except MetadataLogProblem as err:
        return str(err)
    return None
