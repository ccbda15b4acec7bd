"""What `kafka-dump-log --offsets-decoder` and `--transaction-log-decoder` print for records of
Kafka's internal topics, and the same records as JSON objects for `dump --json`."""
from __future__ import annotations

import base64
import json
from typing import Callable

from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError

from .internal import (CONSUMER_GROUP_VALUES, GROUP_METADATA_KEY, OFFSET_COMMIT_KEYS, decode_group_record,
                       decode_transaction_record)

Decoder = Callable[[object], tuple[str | None, str | None]]  # record -> (key text, payload text)
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
                      "Dead", "PrepareEpochFence")
SKIPPED = {"tagged_fields"}
# control record type id -> Kafka's name for it, from the schema's enum
CONTROL_TYPE_NAMES = {t.value: t.name.upper() for t in ControlRecord.ControlType}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


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
    return {_camel(k): _uuid(v) if _is_uuid(k, v) else _plain(v) for k, v in value.items()
            if k not in SKIPPED and not k.endswith(("_count", "_count_plus_one", "_length"))}


def _is_uuid(name: str, value) -> bool:
    return name.endswith("_id") and isinstance(value, (bytes, bytearray)) and len(value) == 16


def _uuid(value: bytes) -> str:
    """Kafka prints a Uuid as URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(bytes(value)).decode("ascii").rstrip("=")


# control record type -> (the label Kafka's tool prints, the value's class); LEADER_CHANGE it
# prints by name only
KRAFT_CONTROL_VALUES = {3: ("SnapshotHeader", ControlRecord.SnapshotHeaderRecord),
                        4: ("SnapshotFooter", ControlRecord.SnapshotFooterRecord),
                        5: ("KRaftVersion", ControlRecord.KraftVersionRecord),
                        6: ("KRaftVoters", ControlRecord.VotersRecord)}


def kraft_control_json(kind: int, value: bytes) -> tuple[str, str | None]:
    """The label and JSON of a KRaft control record's value; None when it does not decode."""
    label, cls = KRAFT_CONTROL_VALUES[kind]
    try:
        return label, _dumps(message_json(cls.from_bytes(value)))
    except DecodeError:
        return label, None


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


def offsets(record) -> tuple[str | None, str | None]:
    """Kafka 3.x's offsets decoder: the key as {"type": key version, "data": …}, the value as
    {"version": value version, "data": …} or <DELETE>."""
    r, error = _decoded(record, decode_group_record)
    if error is not None:
        return error, None
    if r.key_version not in (*OFFSET_COMMIT_KEYS, GROUP_METADATA_KEY, *CONSUMER_GROUP_VALUES):
        return f"Unknown record type {r.key_version} at offset {record.offset}, skipping.", None
    key = _dumps({"type": str(r.key_version), "data": message_json(r.key)})
    if r.value is None:
        return key, "<DELETE>"
    if isinstance(r.value, (bytes, bytearray)):
        return f"Error at offset {record.offset}, skipping. Unknown value version {r.value_version}", None
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


def transaction_log(record) -> tuple[str | None, str | None]:
    """Kafka 3.x's transaction-log decoder."""
    r, error = _decoded(record, decode_transaction_record)
    if error is not None:
        return error, None
    key = f"transaction_metadata::transactionalId={r.transactional_id}"
    if r.value is None:
        return key, "<DELETE>"
    if isinstance(r.value, (bytes, bytearray)):
        return f"Error at offset {record.offset}, skipping. Unknown value version {r.value_version}", None
    v = r.value
    parts = [f"{p.topic.value}-{i}" for p in (v.transaction_partitions or []) for i in p.partition_ids]
    status = int(v.transaction_status)
    state = TRANSACTION_STATES[status] if 0 <= status < len(TRANSACTION_STATES) else f"Unknown({status})"
    return key, (f"producerId:{v.producer_id},producerEpoch:{v.producer_epoch},state={state},"
                 f"partitions=[{','.join(parts)}],txnLastUpdateTimestamp={v.transaction_last_update_timestamp_ms},"
                 f"txnTimeoutMs={v.transaction_timeout_ms}")


def decoded_json(record, kind: str) -> dict:
    """For `dump --json`: the decoded key and value objects, or why they do not decode."""
    r, error = _decoded(record, decode_group_record if kind == "offsets" else decode_transaction_record)
    if error is not None:
        return {"error": error}
    if kind == "offsets":
        return {"keyVersion": r.key_version, "key": message_json(r.key), "valueVersion": r.value_version,
                "value": message_json(r.value)}
    return {"transactionalId": r.transactional_id, "valueVersion": r.value_version, "value": message_json(r.value)}
