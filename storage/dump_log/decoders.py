"""What `kafka-dump-log --offsets-decoder`, `--transaction-log-decoder` and
`--share-group-state-decoder` print for records of Kafka's internal topics, and the same records
as JSON objects for `dump --json`; the JSON Kafka's converters write."""
from __future__ import annotations

import base64
import json
import re
import struct
from enum import IntEnum
from typing import Callable

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.runtime.node import Node

from kafkacodec.codec.internal_topics import decode_transaction_record

Decoder = Callable[[object], tuple[str | None, str | None]]  # record -> (key text, payload text)
SKIPPED = {"tagged_fields"}
# control record type id -> Kafka's name for it, from the schema's enum
CONTROL_TYPE_NAMES = {t.value: t.name.upper() for t in ControlRecord.ControlType}


# Kafka's JSON names that lower-camel-casing our snake_case names does not give back
KAFKA_NAMES = {"kraftVersion": "kRaftVersion", "kraftVersionFeature": "kRaftVersionFeature"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    camel = head + "".join(p.title() for p in rest)
    return KAFKA_NAMES.get(camel, camel)


def message_json(obj) -> object:
    """A generated message as Kafka's JSON converters write it: camelCase names in field order,
    strings and byte arrays unwrapped (bytes in base64), UUIDs as Kafka prints them, the fields
    the schema derives (lengths, counts) and a nullable struct's null marker left out."""
    return _plain(obj)


def _plain(value) -> object:
    if isinstance(value, Node):  # its own fields, not the derived ones (a field Kafka names DeliveryCount stays)
        names = [n for n in value._eq_fields if n not in SKIPPED and not _null_marker(n, value._eq_fields)]
        if names == ["value"]:  # a string, bytes or tagged value of the message encodings
            return _plain(value.value)
        return {_camel(n): _field(n, getattr(value, n)) for n in names}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, IntEnum):
        return value.name
    if not isinstance(value, dict):
        return value
    if set(value) <= {"length", "length_plus_one", "value"}:  # a string or bytes as to_dict gives it
        return _plain(value.get("value"))
    return {_camel(k): _field(k, v) for k, v in value.items()
            if k not in SKIPPED and not k.endswith(("_count", "_count_plus_one", "_length"))}


def _field(name: str, value) -> object:
    return uuid_text(value) if _is_uuid(name, value) else _plain(value)


def _null_marker(name: str, names: tuple[str, ...]) -> bool:
    """`x_present` before a nullable struct `x`: the int8 Kafka writes in front of it."""
    return name.endswith("_present") and name.removesuffix("_present") in names


def _is_uuid(name: str, value) -> bool:
    return (name == "id" or name.endswith("_id")) and isinstance(value, (bytes, bytearray)) and len(value) == 16


def uuid_text(value: bytes) -> str:
    """Kafka prints a Uuid as URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(bytes(value)).decode("ascii").rstrip("=")


# control record type -> (the label Kafka 4.1's tool prints before the value's JSON, its class)
KRAFT_CONTROL_LABELS = {2: ("LeaderChange:", ControlRecord.LeaderChangeMessage),
                        3: ("SnapshotHeader", ControlRecord.SnapshotHeaderRecord),
                        4: ("SnapshotFooter", ControlRecord.SnapshotFooterRecord),
                        5: ("KRaftVersion", ControlRecord.KraftVersionRecord),
                        6: ("KRaftVoters", ControlRecord.VotersRecord)}
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def kraft_control_json(kind: int, value: bytes) -> tuple[str, str | None]:
    """The label and JSON of a KRaft control record's value; None when it does not decode.
    Kafka reads these values at version 0 and writes them at the version they hold, so a
    LeaderChange voter of a version 1 message gains the zero directory id."""
    label, cls = KRAFT_CONTROL_LABELS[kind]
    try:
        obj = message_json(cls.from_bytes(value))
    except DecodeError:
        return label, None
    if kind == 2 and obj.get("version", 0) >= 1:
        for voter in obj.get("voters", []) + obj.get("grantingVoters", []):
            voter["voterDirectoryId"] = ZERO_UUID
    return label, jackson(obj)


def jackson(value) -> str:
    """JSON as Jackson writes it: compact, non-ASCII as is, other control characters as \\u00XX
    with upper-case hex (Python's json writes lower-case)."""
    text = _dumps(value)
    return re.sub(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})", lambda m: m[1] + "\\u00" + m[2].upper(), text)


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def utf8(record) -> tuple[str | None, str | None]:
    text = (lambda b: None if b is None else bytes(b).decode("utf-8", errors="replace"))
    return text(record.key), text(record.value)


def _decoded(record, decode):
    """The record decoded, or the line Kafka's tool prints in place of its key when it cannot be."""
    if record.key is None:
        return None, f"Error at offset {record.offset}, skipping. Record has no key"
    try:
        return decode(bytes(record.key), None if record.value is None else bytes(record.value)), None
    except DecodeError as err:
        return None, f"Error at offset {record.offset}, skipping. {err}"


class DecoderFailure(Exception):
    """A key or value a decoder cannot read at all, which ends the run of Kafka's tool."""


class MissingKey(DecoderFailure):
    """A record without a key, which Kafka's coordinator decoders cannot read."""

    def __init__(self, offset: int):
        super().__init__(f"the record at offset {offset} has no key, which the decoder needs")


def _keyed(record) -> bytes:
    if record.key is None:
        raise MissingKey(record.offset)
    return bytes(record.key)


def offsets(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's offsets decoder, every record type of `__consumer_offsets`: the key as
    {"type": record type, "data": …}, the value as {"version": its version, "data": …} or
    <DELETE> (storage.dump_log.coordinator_records)."""
    from .coordinator_records import OFFSETS
    return OFFSETS.lines(record)


def share_group_state(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's share-group-state decoder (`__share_group_state`), in the same form."""
    from .coordinator_records import SHARE_GROUP_STATE
    return SHARE_GROUP_STATE.lines(record)


# TransactionLogValue's fields in Kafka's order; the tagged ones (version 1) by tag, written
# only when not their default, as Kafka's JSON converters write them
TXN_FIELDS = (("producerId", "producer_id"), ("previousProducerId", 0), ("nextProducerId", 1),
              ("producerEpoch", "producer_epoch"), ("nextProducerEpoch", 3),
              ("transactionTimeoutMs", "transaction_timeout_ms"), ("transactionStatus", "transaction_status"),
              ("transactionPartitions", "transaction_partitions"),
              ("transactionLastUpdateTimestampMs", "transaction_last_update_timestamp_ms"),
              ("transactionStartTimestampMs", "transaction_start_timestamp_ms"), ("clientTransactionVersion", 2))
TXN_TAGS = {0: (">q", -1), 1: (">q", -1), 3: (">h", -1), 2: (">h", 0)}  # format, default


def transaction_log(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's transaction-log decoder: {"type":"0","data":{"transactionalId":…}} and
    {"version":"N","data":{…}} or <DELETE>."""
    key = _keyed(record)
    if len(key) < 2:
        return f"Error at offset {record.offset}, skipping. Could not read version from key's buffer.", None
    kind = struct.unpack_from(">h", key, 0)[0]
    if kind != 0:
        return f"Unknown record type {kind} at offset {record.offset}, skipping.", None
    value = None if record.value is None else bytes(record.value)
    if value is not None and len(value) < 2:
        return f"Error at offset {record.offset}, skipping. Could not read version from value's buffer.", None
    version = None if value is None else struct.unpack_from(">h", value, 0)[0]
    if version is not None and not 0 <= version <= 1:
        return (f"Error at offset {record.offset}, skipping. Found an unknown record version {version} "
                "for 0 type"), None
    r, error = _decoded(record, decode_transaction_record)
    if error is not None:
        return error, None
    shown_key = jackson({"type": "0", "data": {"transactionalId": r.transactional_id}})
    if r.value is None:
        return shown_key, "<DELETE>"
    return shown_key, jackson({"version": str(version), "data": _transaction_json(r.value)})


def _transaction_json(v) -> dict:
    tags = {t.tag: bytes(t.data) for t in (v.tagged_fields.fields if getattr(v, "tagged_fields", None) else [])}
    out = {}
    for name, source in TXN_FIELDS:
        if isinstance(source, int):  # a tagged field
            fmt, default = TXN_TAGS[source]
            data = tags.get(source)
            if data is not None and len(data) == struct.calcsize(fmt) and struct.unpack(fmt, data)[0] != default:
                out[name] = struct.unpack(fmt, data)[0]
        elif source == "transaction_partitions":
            parts = v.transaction_partitions
            out[name] = None if parts is None else [{"topic": p.topic.value, "partitionIds": list(p.partition_ids)}
                                                     for p in parts]
        else:
            out[name] = int(getattr(v, source))
    return out


def decoded_json(record, kind: str) -> dict:
    """For `dump --json`: the decoded key and value objects, or why they do not decode."""
    if kind == "cluster-metadata":
        from ..kraft.records import metadata_json
        return metadata_json(record)
    if kind == "remote-log-metadata":
        from .remote_log_metadata import remote_log_json
        return remote_log_json(record)
    if kind in ("offsets", "share-group-state"):
        from .coordinator_records import OFFSETS, SHARE_GROUP_STATE
        return (OFFSETS if kind == "offsets" else SHARE_GROUP_STATE).json(record)
    r, error = _decoded(record, decode_transaction_record)
    if error is not None:
        return {"error": error}
    return {"transactionalId": r.transactional_id, "valueVersion": r.value_version, "value": message_json(r.value)}
