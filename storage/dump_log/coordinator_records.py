"""Records of the topics Kafka's coordinators write, `__consumer_offsets` and
`__share_group_state`, as Kafka 4.1's kafka-dump-log reads and prints them: the key's int16
record type, the key, then the value's int16 version checked against the versions that type has
before the value is read, each step failing with the line Kafka prints (its coordinator record
serde's messages; where Kafka names a Java reader's exception, ours names what did not decode).
Keys print as {"type": …, "data": …}, values as {"version": …, "data": …} or <DELETE>, each in
the JSON Kafka's converters write."""
from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from typing import Callable

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.generated.share_group_state import ShareGroupState
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.kafka_json import jackson, message_json

from .record_text import MissingKey
from kafkacodec.codec.internal_topics import (CONSUMER_GROUP_VALUES, GROUP_METADATA_KEY, GROUP_RECORD_VALUES,
                                              SHARE_STATE_VALUES)


class UnknownType(Exception):
    def __init__(self, kind: int):
        super().__init__(kind)
        self.kind = kind


class Unreadable(Exception):
    """What Kafka prints after "Error at offset N, skipping." for a record it cannot read."""


@dataclass(frozen=True)
class Read:
    kind: int  # the record type
    key: object
    version: int | None  # of the value; None for a tombstone
    value: object | None


@dataclass(frozen=True)
class Coordinator:
    keys: type  # the schema's root: the record type, then the key
    values: dict[int, tuple[type, int]]  # record type -> (value class, newest version)
    shown: Callable[[int, object], object] = field(default=lambda kind, body: message_json(body))

    def read(self, key: bytes, value: bytes | None) -> Read:
        if len(key) < 2:
            raise Unreadable("Could not read version from key's buffer.")
        kind = struct.unpack_from(">h", key)[0]
        if kind not in self.values:
            raise UnknownType(kind)
        try:
            k = self.keys.from_bytes(key).key
        except DecodeError as err:
            raise Unreadable(f"Could not read record with version {kind} from key's buffer due to: {err}.") from None
        if value is None:
            return Read(kind, k, None, None)
        if len(value) < 2:
            raise Unreadable("Could not read version from value's buffer.")
        version = struct.unpack_from(">h", value)[0]
        cls, newest = self.values[kind]
        if not 0 <= version <= newest:
            raise Unreadable(f"Found an unknown record version {version} for {kind} type")
        try:
            body = cls.from_bytes(value).body
        except DecodeError as err:
            raise Unreadable(f"Could not read record with version {version} from value's buffer due to: {err}.") \
                from None
        return Read(kind, k, version, body)

    def lines(self, record) -> tuple[str | None, str | None]:
        """(key text, payload text) as Kafka's tool prints them; a record without a key ends its
        run (MissingKey)."""
        if record.key is None:
            raise MissingKey(record.offset)
        r, error = self._attempt(record)
        if r is None:
            return error, None
        key = jackson({"type": str(r.kind), "data": message_json(r.key)})
        if r.value is None:
            return key, "<DELETE>"
        return key, jackson({"version": str(r.version), "data": self.shown(r.kind, r.value)})

    def json(self, record) -> dict:
        """For `dump --json`: the record type, key, value version and value, or {"error": the
        line Kafka's tool prints instead}."""
        if record.key is None:
            return {"error": f"Error at offset {record.offset}, skipping. Record has no key"}
        r, error = self._attempt(record)
        if r is None:
            return {"error": error}
        return {"keyVersion": r.kind, "key": message_json(r.key), "valueVersion": r.version,
                "value": None if r.value is None else self.shown(r.kind, r.value)}

    def _attempt(self, record) -> tuple[Read | None, str | None]:
        try:
            return self.read(bytes(record.key), None if record.value is None else bytes(record.value)), None
        except UnknownType as err:
            return None, f"Unknown record type {err.kind} at offset {record.offset}, skipping."
        except Unreadable as err:
            return None, f"Error at offset {record.offset}, skipping. {err}"


def _offsets_value(kind: int, body) -> object:
    """A consumer group's metadata shows each member's protocol bytes as the JSON of their
    messages, as Kafka's tool does; bytes that do not decode stay base64, as there."""
    data = message_json(body)
    if kind == GROUP_METADATA_KEY and data.get("protocolType") == "consumer":
        for member in data.get("members", []):
            _replace(member, "subscription", _subscription_json)
            _replace(member, "assignment", _assignment_json)
    return data


def _replace(member: dict, name: str, decode) -> None:
    raw = member.get(name)
    if raw is None:
        return
    try:
        member[name] = decode(base64.b64decode(raw))
    except (DecodeError, ValueError):
        pass


def _subscription_json(data: bytes) -> dict:
    sub, _ = ConsumerProtocol.read(data, 0)  # bytes after the fields are ignored, as by Kafka's reader
    if isinstance(sub.body, (bytes, bytearray)):
        raise ValueError(f"unknown subscription version {sub.version}")
    return message_json(sub.body)


def _assignment_json(data: bytes) -> dict:
    assignment, _ = ConsumerProtocol.Assignment.read(data, 0)
    out = message_json(assignment)
    out.pop("version", None)
    return out


# Kafka 4.1's group coordinator: 0 is the legacy offset commit, whose value has version 0 only
OFFSETS = Coordinator(ConsumerOffsets, {
    0: (ConsumerOffsets.OffsetCommitValue, 0), 1: (ConsumerOffsets.OffsetCommitValue, 4),
    GROUP_METADATA_KEY: (ConsumerOffsets.GroupMetadataValue, 4),
    **{kind: (cls, 0) for kind, cls in {**CONSUMER_GROUP_VALUES, **GROUP_RECORD_VALUES}.items()}}, _offsets_value)
SHARE_GROUP_STATE = Coordinator(ShareGroupState, {kind: (cls, 0) for kind, cls in SHARE_STATE_VALUES.items()})
