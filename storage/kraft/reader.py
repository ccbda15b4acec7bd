"""The records of `__cluster_metadata` and of its `.checkpoint` snapshots as Kafka 4.1's Raft
reader takes them (RecordsIterator, RecordsSnapshotReader): v2 record batches only; each record
checked as that reader checks it, in its order and with its messages (no timestamp delta, no key
in a metadata record, a value, no headers; a control record's key and type); a snapshot from its
SnapshotHeader to its SnapshotFooter. The reader decodes a whole batch before handing any of it
on, so a record it cannot decode stops every broker and controller before that batch."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError, KafkaCodecError

from kafkacodec.codec.kafka_json import CONTROL_TYPE_NAMES, message_json

from ..layout.logdir import Segment
from ..state.control_rules import KEY_SIZE, ControlType, read_key
from .records import MetadataParseError, plain, read_record, record_json
from ..segments.reader import Damage, segment_batches

TOPIC = "__cluster_metadata"
LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, VOTERS = (
    ControlType.leader_change, ControlType.snapshot_header, ControlType.snapshot_footer, ControlType.kraft_version,
    ControlType.kraft_voters)
CONTROL_CLASSES = {LEADER_CHANGE: ControlRecord.LeaderChangeMessage,
                   SNAPSHOT_HEADER: ControlRecord.SnapshotHeaderRecord,
                   SNAPSHOT_FOOTER: ControlRecord.SnapshotFooterRecord,
                   KRAFT_VERSION: ControlRecord.KraftVersionRecord,
                   VOTERS: ControlRecord.VotersRecord}
CONTROL_NAMES = CONTROL_TYPE_NAMES  # Kafka's ControlRecordType; any other is UNKNOWN


class MetadataLogProblem(KafkaCodecError):
    """A metadata log whose state at the point asked cannot be known: no such log, a gap between
    snapshot and log, or damage before the point."""


class UndecodableBatch(MetadataLogProblem):
    """A batch holding a record Kafka's reader cannot decode: no broker or controller loads it or
    anything after it."""


@dataclass
class Event:
    offset: int
    time: int | None
    epoch: int
    record: dict | None = None  # a metadata record's JSON
    control: tuple[int, dict] | None = None  # a KRaft control record: (type, value's JSON)
    problem: str | None = None  # why Kafka's reader cannot decode the record, in its words


def _last_byte(rec) -> int:
    """The byte Kafka's reader takes for the header count: the record's last one (a signed Java
    byte), which is the count only when there are no headers."""
    if not rec.headers_count:
        return 0
    value = rec.headers[-1].value
    last = 1 if value is None else value[-1] if value else 0  # a null value's length is varint -1: 0x01
    return last - 256 if last >= 128 else last


def _control_problem(key: bytes | None, value: bytes | None) -> tuple[int | None, str | None]:
    """(control type, why the reader refuses the record or None)."""
    if key is None:
        return None, "Missing key in the record when a key was expected"
    if not key:
        return None, "Got an unexpected empty key in the record"
    if value is None:
        return None, "Missing value in the record when a value was expected"
    if not value:
        return None, "Got an unexpected empty value in the record"
    fields = read_key(key)[0]
    if fields is None:
        return None, ("Invalid value size found for end control record key. Must have at least "
                      f"{KEY_SIZE} bytes, but found only {len(key)}")
    version, kind = fields
    if version < 0:
        return None, f"Invalid version found for control record: {version}. May indicate data corruption"
    if kind not in CONTROL_CLASSES:
        return kind, f"Unknown control record type {CONTROL_NAMES.get(kind, 'UNKNOWN')}"
    return kind, None


def event_of(rec, epoch: int, control: bool) -> Event:
    """A record of a metadata log or snapshot as an Event: its metadata JSON, its control value, or
    why Kafka's reader cannot decode it."""
    event = Event(rec.offset, rec.timestamp, epoch)
    delta = getattr(rec, "timestamp_delta", 0)
    if delta:
        event.problem = f"Got timestamp delta of {delta}, but this is invalid because it is not 0 as expected."
        return event
    key = None if rec.key is None else bytes(rec.key)
    value = None if rec.value is None else bytes(rec.value)
    if control:
        kind, event.problem = _control_problem(key, value)
        if event.problem is None:
            try:
                event.control = (kind, message_json(CONTROL_CLASSES[kind].from_bytes(value)))
            except KafkaCodecError:
                event.problem = f"a {CONTROL_NAMES[kind]} control record whose value does not decode"
    elif key is not None:
        event.problem = "Got key in the record when no key was expected"
    elif value is None:
        event.problem = "Missing value in the record when a value was expected"
    elif not value:
        event.problem = "Got an unexpected empty value in the record"
    else:
        try:
            event.record = plain(record_json(*read_record(value)))
        except MetadataParseError as err:
            event.problem = str(err)
    if event.problem is None and _last_byte(rec):
        event.record = event.control = None
        event.problem = f"Got numHeaders of {_last_byte(rec)}, but this is invalid because it is not 0 as expected."
    return event


@dataclass
class FileBatch:
    """One batch of a metadata file: where it is, whether it is a control batch, its records."""
    file: Path
    position: int
    control: bool
    events: list[Event]

    def readable(self) -> "FileBatch":
        """Itself, or UndecodableBatch naming its first record the reader cannot decode."""
        bad = next((e for e in self.events if e.problem is not None), None)
        if bad is not None:
            raise UndecodableBatch(f"{self.file}: byte {self.position}: offset {bad.offset}: {bad.problem} (Kafka's "
                                   "reader cannot decode this record, so no broker or controller loads this batch "
                                   "or any after it)")
        return self


def file_batches(seg: Segment) -> Iterator[FileBatch]:
    """The batches of one file; damage, and a legacy entry (which Kafka's reader refuses), raise
    MetadataLogProblem naming the file and byte."""
    for batch in segment_batches(seg):
        if isinstance(batch, Damage):
            raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: {batch.error.message}")
        if batch.is_legacy:
            raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: a magic {batch.magic} log entry, where "
                                     "Kafka's metadata reader takes only v2 record batches (it stops here)")
        entry = batch.entry
        control = entry.is_control
        try:
            records = list(batch)
        except DecodeError as err:  # damage under a valid CRC
            raise MetadataLogProblem(f"{seg.log}: byte {batch.position}: the batch's records do not decode: "
                                     f"{err.message}") from None
        yield FileBatch(seg.log, batch.position, control,
                        [event_of(rec, entry.partition_leader_epoch, control) for rec in records])


def snapshot_batches(path: Path, skip_undecodable: bool = False) -> Iterator[FileBatch]:
    """A `.checkpoint`'s batches, as Kafka's snapshot reader takes them: the first a control batch
    opening with the SnapshotHeader, the last record the SnapshotFooter. Kafka writes the footer
    before it renames a snapshot into place, so a file without one was never whole (an interrupted
    copy): MetadataLogProblem, raised once the file is read, after its batches."""
    first, footer_at = True, None
    for batch in file_batches(Segment(0, path)):
        if not skip_undecodable:
            batch.readable()
        if footer_at is not None:
            raise MetadataLogProblem(f"{path}: byte {batch.position}: a batch after the SnapshotFooter")
        if first:
            if not batch.control or not batch.events:
                raise MetadataLogProblem(f"{path}: byte {batch.position}: First batch is not a control batch with "
                                         "at least one record")
            opening = batch.events[0].control
            if opening is None or opening[0] != SNAPSHOT_HEADER:
                kind = "UNKNOWN" if opening is None else CONTROL_NAMES[opening[0]]
                raise MetadataLogProblem(f"{path}: byte {batch.position}: First control record is not a snapshot "
                                         f"header ({kind})")
            first = False
        kinds = [e.control[0] if e.control else None for e in batch.events]
        if SNAPSHOT_FOOTER in kinds:
            if kinds.index(SNAPSHOT_FOOTER) != len(kinds) - 1:
                raise MetadataLogProblem(f"{path}: byte {batch.position}: records after the SnapshotFooter")
            footer_at = batch.position
        yield batch
    if first:
        raise MetadataLogProblem(f"{path}: an empty file, without the SnapshotHeader and SnapshotFooter every "
                                 "snapshot Kafka writes holds (an interrupted copy)")
    if footer_at is None:
        raise MetadataLogProblem(f"{path}: ends at byte {path.stat().st_size} without a SnapshotFooter: an "
                                 "incomplete snapshot (an interrupted write or copy), which Kafka never loads")
