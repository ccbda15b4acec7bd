"""KRaft metadata records (`__cluster_metadata`) as Kafka 4.1 reads and prints them: the frame
(frame version, record type, version) checked in Kafka's order with its error messages, the
record decoded through the metadata_record schema, and the record as Kafka's JSON converters
write it (fields in the spec's order, tagged fields only when they differ from their default)."""
from __future__ import annotations

import re
from decimal import Decimal

from kafkacodec.generated.metadata_record import MetadataRecord
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.kafka_json import jackson, message_json, uuid_text


FRAME_VERSION = 1
SHORT_MAX = 0x7FFF
LEFT_UNREAD = "bytes left unread at the end of the field"

# api key -> (Kafka's name for the record type, its latest version, its fields in the spec's order)
# A field is (JSON name, attribute id, kind, first version) or, tagged, (JSON name, tag, kind,
# first version, default): the JSON has a tagged field only when it differs from its default.
TYPES = {
    0: ('REGISTER_BROKER_RECORD', 3, (
        ('brokerId', 'broker_id', 'int', 0),
        ('isMigratingZkBroker', 'is_migrating_zk_broker', 'bool', 2),
        ('incarnationId', 'incarnation_id', 'uuid', 0),
        ('brokerEpoch', 'broker_epoch', 'int', 0),
        ('endPoints', 'end_points', 'structs', 0),
        ('features', 'features', 'structs', 0),
        ('rack', 'rack', 'string', 0),
        ('fenced', 'fenced', 'bool', 0),
        ('inControlledShutdown', 'in_controlled_shutdown', 'bool', 1),
        ('logDirs', 0, 'uuids', 3, []),
    )),
    1: ('UNREGISTER_BROKER_RECORD', 0, (
        ('brokerId', 'broker_id', 'int', 0),
        ('brokerEpoch', 'broker_epoch', 'int', 0),
    )),
    2: ('TOPIC_RECORD', 0, (
        ('name', 'name', 'string', 0),
        ('topicId', 'topic_id', 'uuid', 0),
    )),
    3: ('PARTITION_RECORD', 2, (
        ('partitionId', 'partition_id', 'int', 0),
        ('topicId', 'topic_id', 'uuid', 0),
        ('replicas', 'replicas', 'ints', 0),
        ('isr', 'isr', 'ints', 0),
        ('removingReplicas', 'removing_replicas', 'ints', 0),
        ('addingReplicas', 'adding_replicas', 'ints', 0),
        ('leader', 'leader', 'int', 0),
        ('leaderRecoveryState', 0, 'int', 0, 0),
        ('leaderEpoch', 'leader_epoch', 'int', 0),
        ('partitionEpoch', 'partition_epoch', 'int', 0),
        ('directories', 'directories', 'uuids', 1),
        ('eligibleLeaderReplicas', 1, 'ints', 2, None),
        ('lastKnownElr', 2, 'ints', 2, None),
    )),
    4: ('CONFIG_RECORD', 0, (
        ('resourceType', 'resource_type', 'int', 0),
        ('resourceName', 'resource_name', 'string', 0),
        ('name', 'name', 'string', 0),
        ('value', 'value', 'string', 0),
    )),
    5: ('PARTITION_CHANGE_RECORD', 2, (
        ('partitionId', 'partition_id', 'int', 0),
        ('topicId', 'topic_id', 'uuid', 0),
        ('isr', 0, 'ints', 0, None),
        ('leader', 1, 'int', 0, -2),
        ('replicas', 2, 'ints', 0, None),
        ('removingReplicas', 3, 'ints', 0, None),
        ('addingReplicas', 4, 'ints', 0, None),
        ('leaderRecoveryState', 5, 'int', 0, -1),
        ('directories', 8, 'uuids', 1, None),
        ('eligibleLeaderReplicas', 6, 'ints', 2, None),
        ('lastKnownElr', 7, 'ints', 2, None),
    )),
    7: ('FENCE_BROKER_RECORD', 0, (
        ('id', 'id', 'int', 0),
        ('epoch', 'epoch', 'int', 0),
    )),
    8: ('UNFENCE_BROKER_RECORD', 0, (
        ('id', 'id', 'int', 0),
        ('epoch', 'epoch', 'int', 0),
    )),
    9: ('REMOVE_TOPIC_RECORD', 0, (
        ('topicId', 'topic_id', 'uuid', 0),
    )),
    10: ('DELEGATION_TOKEN_RECORD', 0, (
        ('owner', 'owner', 'string', 0),
        ('requester', 'requester', 'string', 0),
        ('renewers', 'renewers', 'strings', 0),
        ('issueTimestamp', 'issue_timestamp', 'int', 0),
        ('maxTimestamp', 'max_timestamp', 'int', 0),
        ('expirationTimestamp', 'expiration_timestamp', 'int', 0),
        ('tokenId', 'token_id', 'string', 0),
    )),
    11: ('USER_SCRAM_CREDENTIAL_RECORD', 0, (
        ('name', 'name', 'string', 0),
        ('mechanism', 'mechanism', 'int', 0),
        ('salt', 'salt', 'bytes', 0),
        ('storedKey', 'stored_key', 'bytes', 0),
        ('serverKey', 'server_key', 'bytes', 0),
        ('iterations', 'iterations', 'int', 0),
    )),
    12: ('FEATURE_LEVEL_RECORD', 0, (
        ('name', 'name', 'string', 0),
        ('featureLevel', 'feature_level', 'int', 0),
    )),
    14: ('CLIENT_QUOTA_RECORD', 0, (
        ('entity', 'entity', 'structs', 0),
        ('key', 'key', 'string', 0),
        ('value', 'value', 'float', 0),
        ('remove', 'remove', 'bool', 0),
    )),
    15: ('PRODUCER_IDS_RECORD', 0, (
        ('brokerId', 'broker_id', 'int', 0),
        ('brokerEpoch', 'broker_epoch', 'int', 0),
        ('nextProducerId', 'next_producer_id', 'int', 0),
    )),
    17: ('BROKER_REGISTRATION_CHANGE_RECORD', 2, (
        ('brokerId', 'broker_id', 'int', 0),
        ('brokerEpoch', 'broker_epoch', 'int', 0),
        ('fenced', 0, 'int', 0, 0),
        ('inControlledShutdown', 1, 'int', 1, 0),
        ('logDirs', 2, 'uuids', 2, []),
    )),
    18: ('ACCESS_CONTROL_ENTRY_RECORD', 0, (
        ('id', 'id', 'uuid', 0),
        ('resourceType', 'resource_type', 'int', 0),
        ('resourceName', 'resource_name', 'string', 0),
        ('patternType', 'pattern_type', 'int', 0),
        ('principal', 'principal', 'string', 0),
        ('host', 'host', 'string', 0),
        ('operation', 'operation', 'int', 0),
        ('permissionType', 'permission_type', 'int', 0),
    )),
    19: ('REMOVE_ACCESS_CONTROL_ENTRY_RECORD', 0, (
        ('id', 'id', 'uuid', 0),
    )),
    20: ('NO_OP_RECORD', 0, (
    )),
    21: ('ZK_MIGRATION_STATE_RECORD', 0, (
        ('zkMigrationState', 'zk_migration_state', 'int', 0),
    )),
    22: ('REMOVE_USER_SCRAM_CREDENTIAL_RECORD', 0, (
        ('name', 'name', 'string', 0),
        ('mechanism', 'mechanism', 'int', 0),
    )),
    23: ('BEGIN_TRANSACTION_RECORD', 0, (
        ('name', 0, 'string', 0, None),
    )),
    24: ('END_TRANSACTION_RECORD', 0, (
    )),
    25: ('ABORT_TRANSACTION_RECORD', 0, (
        ('reason', 0, 'string', 0, None),
    )),
    26: ('REMOVE_DELEGATION_TOKEN_RECORD', 0, (
        ('tokenId', 'token_id', 'string', 0),
    )),
    27: ('REGISTER_CONTROLLER_RECORD', 0, (
        ('controllerId', 'controller_id', 'int', 0),
        ('incarnationId', 'incarnation_id', 'uuid', 0),
        ('zkMigrationReady', 'zk_migration_ready', 'bool', 0),
        ('endPoints', 'end_points', 'structs', 0),
        ('features', 'features', 'structs', 0),
    )),
    28: ('CLEAR_ELR_RECORD', 0, (
        ('topicName', 'topic_name', 'string', 0),
    )),
}


class MetadataParseError(Exception):
    """A record Kafka's MetadataRecordSerde would not read; the message is Kafka's."""


def _uvarint(data: bytes, pos: int, entity: str) -> tuple[int, int]:
    """Java's readUnsignedVarint as an int, then Kafka's check that it fits a short."""
    value = shift = 0
    for i in range(5):
        if pos >= len(data):
            raise MetadataParseError(f"Error while reading {entity}")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if i == 4:
            raise MetadataParseError(f"Error while reading {entity}")
    value &= 0xFFFFFFFF
    value = value - (1 << 32) if value >= 1 << 31 else value  # a Java int
    if value > SHORT_MAX:
        raise MetadataParseError(f"Value for {entity} was too large.")
    value &= 0xFFFF
    return (value - (1 << 16) if value >= 1 << 15 else value), pos


def read_frame(value: bytes, known) -> tuple[int, int, int]:
    """(record type, version, where the record starts) of a value framed as Kafka's metadata
    record serdes frame it (also `__remote_log_metadata`'s), checked in their order against the
    record types `known`, or MetadataParseError in their words."""
    frame, pos = _uvarint(value, 0, "frame version")
    if frame == 0:
        raise MetadataParseError("Could not deserialize metadata record with frame version 0. Note that upgrades "
                                 "from the preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != FRAME_VERSION:
        raise MetadataParseError(f"Could not deserialize metadata record due to unknown frame version {frame}"
                                 f"(only frame version {FRAME_VERSION} is supported)")
    api_key, pos = _uvarint(value, pos, "type")
    version, pos = _uvarint(value, pos, "version")
    if api_key not in known:
        raise MetadataParseError("org.apache.kafka.common.errors.UnsupportedVersionException: "
                                 f"Unknown metadata id {api_key}")
    return api_key, version, pos


def read_record(value: bytes) -> tuple[int, int, MetadataRecord]:
    """(record type, version, the record) of a metadata record's value, or MetadataParseError
    in Kafka's words."""
    api_key, version, _ = read_frame(value, TYPES)
    if not 0 <= version <= TYPES[api_key][1]:
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}")
    try:
        record = MetadataRecord.from_bytes(value)
    except DecodeError as err:
        if err.message.endswith(LEFT_UNREAD) and err.position is not None:
            raise MetadataParseError(f"Found {len(value) - err.position} byte(s) of garbage after {api_key}") from None
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}") from None
    return api_key, version, record


def record_json(api_key: int, version: int, record: MetadataRecord) -> dict:
    """{"type": …, "version": …, "data": …} as Kafka's metadata JSON converters write it."""
    name, _, fields = TYPES[api_key]
    body = record.body
    tags = {}
    if getattr(body, "tagged_fields", None) is not None:
        tags = {f.tag: f.data for f in body.tagged_fields.fields}
    data = {}
    for field in fields:
        json_name, source, kind, since = field[:4]
        if version < since:
            continue
        if isinstance(source, int):  # tagged
            if source in tags:
                shown = _tagged(tags[source], kind)
                if shown != field[4]:
                    data[json_name] = shown
            continue
        data[json_name] = _value(getattr(body, source), kind)
    return {"type": name, "version": version, "data": data}


def _tagged(data, kind: str):
    """A known tagged field's value: its wrapper holds `items` (an array, None for null) or `value`."""
    return _value(data.items, kind) if kind in ("ints", "uuids") else data.value


def _value(value, kind: str):
    if value is None:
        return None
    if kind == "uuid":
        return uuid_text(value)
    if kind == "uuids":
        return [uuid_text(v) for v in value]
    if kind == "bool":
        return value != 0
    if kind == "float":
        return _JavaDouble(value)
    if kind in ("structs", "strings"):
        return [message_json(v) for v in value]
    if kind in ("string", "bytes"):
        return message_json(value)
    return list(value) if kind == "ints" else value


class _JavaDouble:
    """A float64 field, which Jackson writes as Java's Double.toString does."""

    def __init__(self, value: float):
        self.value = value

    def text(self) -> str:
        """Java's Double.toString: plain between 10^-3 and 10^7, else d.dddE±n; shortest digits."""
        d = self.value
        if d != d or d in (float("inf"), float("-inf")):
            return "NaN" if d != d else "Infinity" if d > 0 else "-Infinity"
        sign, digit_tuple, exp = Decimal(repr(d)).as_tuple()
        digits = "".join(map(str, digit_tuple))
        point = len(digits) + exp - 1  # the power of ten of the first digit
        digits = digits.rstrip("0") or "0"
        minus = "-" if sign else ""
        if d == 0 or not 1e-3 <= abs(d) < 1e7:
            return f"{minus}{digits[0]}.{digits[1:] or '0'}" + ("" if d == 0 else f"E{point}")
        if point < 0:
            return f"{minus}0.{'0' * (-point - 1)}{digits}"
        whole = digits[:point + 1].ljust(point + 1, "0")
        return f"{minus}{whole}.{digits[point + 1:] or '0'}"


def _doubles_as(value, shown):
    """The JSON with each double replaced by `shown(double)`."""
    if isinstance(value, _JavaDouble):
        return shown(value)
    if isinstance(value, dict):
        return {k: _doubles_as(v, shown) for k, v in value.items()}
    if isinstance(value, list):
        return [_doubles_as(v, shown) for v in value]
    return value


def to_text(obj: dict) -> str:
    """Jackson's compact text of a record's JSON, doubles written as Java writes them (marked in
    the text, then unquoted, as Python's json cannot write a number its own way)."""
    marked = _doubles_as(obj, lambda d: f"\x00D{d.text()}\x00")
    return re.sub(r'"\\u0000D([^"\\]*)\\u0000"', r"\1", jackson(marked))


def plain(obj):
    """The JSON with doubles as Python floats, for `dump --json`."""
    return _doubles_as(obj, lambda d: d.value)


def cluster_metadata(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's cluster-metadata decoder: no key; the payload is the record's JSON, or the
    line Kafka prints for a record it cannot read."""
    if record.value is None:  # Kafka's tool fails here with a null pointer; said plainly
        return None, f"Error at {record.offset}, skipping. the record has no value"
    try:
        return None, to_text(record_json(*read_record(bytes(record.value))))
    except MetadataParseError as err:
        return None, f"Error at {record.offset}, skipping. {err}"


def metadata_json(record) -> dict:
    """For `dump --json`: the object Kafka's decoder prints, or {"error": its line}."""
    if record.value is None:
        return {"error": cluster_metadata(record)[1]}
    try:
        return plain(record_json(*read_record(bytes(record.value))))
    except MetadataParseError as err:
        return {"error": f"Error at {record.offset}, skipping. {err}"}
