"""What `kafka-dump-log --offsets-decoder` and `--transaction-log-decoder` print for records of
Kafka's internal topics, and the same records as JSON objects for `dump --json`."""
from __future__ import annotations

import base64
import json
import re
import struct
from typing import Callable

from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError

from .internal import (CONSUMER_GROUP_VALUES, GROUP_METADATA_KEY, OFFSET_COMMIT_KEYS, decode_group_record,
                       decode_transaction_record)

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
    strings and byte arrays unwrapped (bytes in base64), derived lengths, counts and the
    version left out."""
    return _plain(obj.to_dict() if hasattr(obj, "to_dict") else obj)


def _plain(value) -> object:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) <= {"length", "length_plus_one", "value"}:  # a string or bytes of the message encodings
        return _plain(value.get("value"))
    return {_camel(k): uuid_text(v) if _is_uuid(k, v) else _plain(v) for k, v in value.items()
            if k not in SKIPPED and not k.endswith(("_count", "_count_plus_one", "_length"))}


def _is_uuid(name: str, value) -> bool:
    return name.endswith("_id") and isinstance(value, (bytes, bytearray)) and len(value) == 16


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
    """Kafka 4.1's offsets decoder for the record types of the classic and consumer group
    protocols: the key as {"type": record type, "data": …}, the value as {"version": its
    version, "data": …} or <DELETE>."""
    _keyed(record)
    r, error = _decoded(record, decode_group_record)
    if error is not None:
        return error, None
    if r.key_version not in (*OFFSET_COMMIT_KEYS, GROUP_METADATA_KEY, *CONSUMER_GROUP_VALUES):
        return f"Unknown record type {r.key_version} at offset {record.offset}, skipping.", None
    key = _dumps({"type": str(r.key_version), "data": message_json(r.key)})
    if r.value is None:
        return key, "<DELETE>"
    if isinstance(r.value, (bytes, bytearray)):
        return (f"Error at offset {record.offset}, skipping. Found an unknown record version {r.value_version} "
                f"for {r.key_version} type"), None
    data = message_json(r.value)
    if r.key_version == GROUP_METADATA_KEY and data.get("protocolType") == "consumer":
        for member in data.get("members", []):
            _replace(member, "subscription", _subscription_json)
            _replace(member, "assignment", _assignment_json)
    return key, _dumps({"version": str(r.value_version), "data": data})


def _replace(member: dict, name: str, decode) -> None:
    """A consumer group member's protocol bytes as the JSON of their message, as Kafka's tool
    shows them; bytes that do not decode stay base64, as there."""
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
        from .metadata_records import metadata_json
        return metadata_json(record)
    r, error = _decoded(record, decode_group_record if kind == "offsets" else decode_transaction_record)
    if error is not None:
        return {"error": error}
    if kind == "offsets":
        return {"keyVersion": r.key_version, "key": message_json(r.key), "valueVersion": r.value_version,
                "value": message_json(r.value)}
    return {"transactionalId": r.transactional_id, "valueVersion": r.value_version, "value": message_json(r.value)}
