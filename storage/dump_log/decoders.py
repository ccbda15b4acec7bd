"""What `kafka-dump-log --offsets-decoder`, `--transaction-log-decoder` and
`--share-group-state-decoder` print for records of Kafka's internal topics, and the same records
as JSON objects for `dump --json`; the JSON Kafka's converters write."""
from __future__ import annotations

import struct
from typing import Callable

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.internal_topics import decode_transaction_record
from kafkacodec.codec.kafka_json import jackson, message_json

from ..kraft.records import metadata_json
from .coordinator_records import OFFSETS, SHARE_GROUP_STATE
from .record_text import decoded, keyed
from .remote_log_metadata import remote_log_json

Decoder = Callable[[object], tuple[str | None, str | None]]  # record -> (key text, payload text)
_CONTROL = ControlRecord.ControlType
# control record type -> (the label Kafka 4.1's tool prints before the value's JSON, its class)
KRAFT_CONTROL_LABELS = {_CONTROL.leader_change: ("LeaderChange:", ControlRecord.LeaderChangeMessage),
                        _CONTROL.snapshot_header: ("SnapshotHeader", ControlRecord.SnapshotHeaderRecord),
                        _CONTROL.snapshot_footer: ("SnapshotFooter", ControlRecord.SnapshotFooterRecord),
                        _CONTROL.kraft_version: ("KRaftVersion", ControlRecord.KraftVersionRecord),
                        _CONTROL.kraft_voters: ("KRaftVoters", ControlRecord.VotersRecord)}
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
    if kind == _CONTROL.leader_change and obj.get("version", 0) >= 1:
        for voter in obj.get("voters", []) + obj.get("grantingVoters", []):
            voter["voterDirectoryId"] = ZERO_UUID
    return label, jackson(obj)


def offsets(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's offsets decoder, every record type of `__consumer_offsets`: the key as
    {"type": record type, "data": …}, the value as {"version": its version, "data": …} or
    <DELETE> (storage.dump_log.coordinator_records)."""
    return OFFSETS.lines(record)


def share_group_state(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's share-group-state decoder (`__share_group_state`), in the same form."""
    return SHARE_GROUP_STATE.lines(record)


def transaction_log(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's transaction-log decoder: {"type":"0","data":{"transactionalId":…}} and
    {"version":"N","data":{…}} or <DELETE>."""
    key = keyed(record)
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
    r, error = decoded(record, decode_transaction_record)
    if error is not None:
        return error, None
    shown_key = jackson({"type": "0", "data": {"transactionalId": r.transactional_id}})
    if r.value is None:
        return shown_key, "<DELETE>"
    return shown_key, jackson({"version": str(version), "data": message_json(r.value)})


def decoded_json(record, kind: str) -> dict:
    """For `dump --json`: the decoded key and value objects, or why they do not decode."""
    if kind == "cluster-metadata":
        return metadata_json(record)
    if kind == "remote-log-metadata":
        return remote_log_json(record)
    if kind in ("offsets", "share-group-state"):
        return (OFFSETS if kind == "offsets" else SHARE_GROUP_STATE).json(record)
    r, error = decoded(record, decode_transaction_record)
    if error is not None:
        return {"error": error}
    return {"transactionalId": r.transactional_id, "valueVersion": r.value_version, "value": message_json(r.value)}
