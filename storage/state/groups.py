"""Consumer groups as the group coordinator holds them after loading `__consumer_offsets`: each
group's committed offsets and its members with the partitions assigned to them, for the classic
protocol (a group's metadata record, members' assignments in the consumer protocol's bytes) and
for KIP-848's consumer protocol (member and current-assignment records, topics by id).

The partitions are replayed in offset order as the coordinator loads them: a record replaces the
one of the same key before it, a tombstone deletes it, and offsets committed in a transaction
count only once its COMMIT marker is read (an aborted or still open transaction's do not).
Members are those the latest records list: whether their sessions are still alive is not in the
files."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.kafka_json import uuid_text
from kafkacodec.codec.internal_topics import (GROUP_METADATA_KEY, OFFSET_COMMIT_KEYS, CommittedOffset,
                                              committed_offsets, decode_group_record)
from ..diskio.safeio import FileProblem
from ..layout.logdir import Partition
from ..layout.textfiles import PARTITION_METADATA, read_partition_metadata
from .producers import COMMIT, marker_of
from ..segments.reader import Damage, partition_batches, partition_records

CONSUMER_GROUP_METADATA, MEMBER_METADATA, CURRENT_ASSIGNMENT = 3, 5, 8  # KIP-848's key versions


@dataclass
class Member:
    member_id: str
    client_id: str
    host: str
    # (topic, partition) assigned; None when the assignment's bytes are not the consumer protocol's
    assignment: list[tuple[str, int]] | None = field(default_factory=list)


@dataclass
class Group:
    name: str
    classic: dict[str, Member] | None = None  # the classic protocol's members, while its metadata stands
    consumer: dict[str, Member] | None = None  # KIP-848's members, while the group's record stands
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)

    @property
    def members(self) -> list[Member]:
        chosen = self.consumer if self.consumer is not None else self.classic
        return list((chosen or {}).values())

    @property
    def exists(self) -> bool:
        return self.classic is not None or self.consumer is not None or bool(self.offsets)


@dataclass
class Groups:
    groups: dict[str, Group] = field(default_factory=dict)
    notes: list[tuple[str | None, str]] = field(default_factory=list)  # (its group, if one) what is not known, why
    damage: list[str] = field(default_factory=list)  # where reading stopped or passed over bytes
    pending: dict[int, list[tuple[tuple, object]]] = field(default_factory=dict)  # by producer id

    def group(self, name: str) -> Group:
        return self.groups.setdefault(name, Group(name))


def load_groups(partitions: list[Partition], topic_ids: dict[str, str]) -> Groups:
    """Every group the `__consumer_offsets` partitions hold; `topic_ids`: topic id (Kafka's text
    form) -> name, for KIP-848's assignments."""
    out = Groups()
    for part in partitions:
        out.pending = {}
        _replay(part, out, topic_ids)
        open_commits = sum(len(c) for c in out.pending.values())
        if open_commits:
            several = open_commits != 1
            out.notes.append((None, f"{part.path}: {open_commits} offset commit{'s' if several else ''} of "
                                    f"transactions still open {'are' if several else 'is'} not counted (the "
                                    "coordinator holds them until the transactions commit)"))
    return out


def partition_committed_offsets(part: Partition) -> dict[tuple[str, str, int], CommittedOffset]:
    """The committed offsets a `__consumer_offsets` partition directory holds: its records in
    offset order through internal_topics.committed_offsets, control records left out."""
    return committed_offsets((r.offset, r.key, r.value) for batch, r in partition_records(part)
                             if batch.is_legacy or not batch.entry.is_control)


def topic_ids_of(partitions: list[Partition]) -> dict[str, str]:
    """Topic id -> name, from the partitions' partition.metadata files."""
    ids = {}
    for part in partitions:
        path = Path(part.path) / PARTITION_METADATA
        if path.is_file():
            try:
                ids[read_partition_metadata(path).topic_id] = part.topic
            except (DecodeError, FileProblem):
                pass  # a topic whose id is unknown shows by its id
    return ids


def _replay(part: Partition, out: Groups, topic_ids: dict[str, str]) -> None:
    def damaged(d: Damage) -> None:
        out.damage.append(f"{d.segment.log}: byte {d.position}: {d.error}; what follows in that segment is not "
                          "read, so later commits and members there are unknown")

    for seg, batch in partition_batches(part, on_damage=damaged):
        e = batch.entry
        if not batch.is_legacy and e.is_control:
            try:
                marker = marker_of(e)
            except DecodeError as err:
                out.damage.append(f"{seg.log}: byte {batch.position}: {err}")
                continue
            done = out.pending.pop(e.producer_id, [])
            if marker is not None and marker.kind == COMMIT:
                for ident, commit in done:
                    _commit(out, ident, commit)
            continue
        producer = e.producer_id if not batch.is_legacy and e.is_transactional else None
        try:
            records = list(batch)
        except DecodeError as err:
            out.damage.append(f"{seg.log}: batch at byte {batch.position}: {err}; its records are passed over")
            continue
        for r in records:
            if r.key is None:
                continue
            try:
                g = decode_group_record(bytes(r.key), None if r.value is None else bytes(r.value))
            except DecodeError as err:
                out.damage.append(f"{seg.log}: record at offset {r.offset} does not decode: {err}")
                continue
            _apply(out, g, r.offset, producer, topic_ids)


def _apply(out: Groups, g, offset: int, producer: int | None, topic_ids: dict[str, str]) -> None:
    kind, key, value = g.key_version, g.key, g.value
    if kind in OFFSET_COMMIT_KEYS:
        ident = (key.group.value, key.topic.value, key.partition)
        if isinstance(value, (bytes, bytearray)):
            out.notes.append((ident[0], f"offset {offset}: a commit of group {ident[0]} at value version "
                                        f"{g.value_version}, which this library does not know, is passed over"))
            return
        commit = None if value is None else CommittedOffset.of(ident, value, offset)
        if producer is not None:
            out.pending.setdefault(producer, []).append((ident, commit))
        else:
            _commit(out, ident, commit)
    elif kind == GROUP_METADATA_KEY:
        group = out.group(key.group.value)
        group.classic = None if value is None else _classic_members(out, group.name, value)
    elif kind == CONSUMER_GROUP_METADATA:
        group = out.group(key.group_id.value)
        if value is None:
            group.consumer = None
        elif group.consumer is None:
            group.consumer = {}
    elif kind == MEMBER_METADATA:
        members = out.group(key.group_id.value).consumer
        if members is None:  # a member record outside a group's life: nothing to attach it to
            return
        if value is None:
            members.pop(key.member_id.value, None)
        else:
            old = members.get(key.member_id.value)
            members[key.member_id.value] = Member(key.member_id.value, value.client_id.value, value.client_host.value,
                                                  old.assignment if old else [])
    elif kind == CURRENT_ASSIGNMENT:
        members = out.group(key.group_id.value).consumer
        member = members.get(key.member_id.value) if members is not None else None
        if member is not None:
            member.assignment = [] if value is None else [
                (_topic_name(out, key.group_id.value, t.topic_id, topic_ids), p)
                for t in value.assigned_partitions for p in t.partitions]


def _commit(out: Groups, ident: tuple[str, str, int], commit: CommittedOffset | None) -> None:
    offsets = out.group(ident[0]).offsets
    if commit is None:
        offsets.pop(ident[1:], None)
    else:
        offsets[ident[1:]] = commit


def _classic_members(out: Groups, group: str, value) -> dict[str, Member]:
    members = {}
    for m in value.members:
        assignment = _assignment(bytes(m.assignment.value)) if value.protocol_type.value == "consumer" else None
        if assignment is None:
            out.notes.append((group, f"group {group}: member {m.member_id.value}'s assignment is not in the "
                                     "consumer protocol's form (another protocol type, or a custom assignor's bytes): "
                                     "its partitions are not known"))
        members[m.member_id.value] = Member(m.member_id.value, m.client_id.value, m.client_host.value, assignment)
    return members


def _assignment(data: bytes) -> list[tuple[str, int]] | None:
    if not data:  # a member given nothing yet
        return []
    try:
        assignment, _ = ConsumerProtocol.Assignment.read(data, 0)  # bytes after the fields are ignored, as by Kafka
    except DecodeError:
        return None
    return [(t.topic.value, p) for t in assignment.assigned_partitions for p in t.partitions]


def _topic_name(out: Groups, group: str, topic_id: bytes, topic_ids: dict[str, str]) -> str:
    text = uuid_text(topic_id)
    if text not in topic_ids:
        note = (group, f"group {group}: topic id {text} is not a topic of this log dir: shown by its id")
        if note not in out.notes:
            out.notes.append(note)
    return topic_ids.get(text, text)
