"""`__remote_log_metadata` records (tiered storage) as Kafka 4.1's kafka-dump-log reads and
prints them: the frame checked as its metadata serdes check it, the record read with version 0's
layout whatever version the frame names (Kafka's reader of a message with a single version does
not look at the version), then turned into Kafka's metadata objects, whose constructors check
offsets, leader epochs and states, and printed as those objects print themselves (toString)."""
from __future__ import annotations

from kafkacodec.generated.remote_log_metadata import RemoteLogMetadata
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.kafka_json import message_json, uuid_text

from ..kraft.records import MetadataParseError, framed_types, read_frame

# api key -> (the name Kafka's record type enum gives it, newest version, the reader of its layout)
TYPES = framed_types(RemoteLogMetadata)
LAYOUT_VERSION = 0  # the one version each type has, which Kafka reads whatever the frame says
SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                  3: "DELETE_SEGMENT_FINISHED"}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED", 2: "DELETE_PARTITION_FINISHED"}


def read_record(value: bytes) -> tuple[int, int, object]:
    """(api key, version, the record) of a value, or MetadataParseError in Kafka's words."""
    api_key, version, pos = read_frame(value, TYPES)
    try:
        record, end = TYPES[api_key].cls.read(value, pos, version=LAYOUT_VERSION)
    except DecodeError:
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}") from None
    if end != len(value):
        raise MetadataParseError(f"Found {len(value) - end} byte(s) of garbage after {api_key}")
    return api_key, version, record


def _partition(entry) -> str:
    """A TopicIdPartition as Java prints it: topic id, name, partition."""
    return f"{uuid_text(entry.id)}:{entry.name.value}-{entry.partition}"


def _segment_id(entry) -> str:
    return f"RemoteLogSegmentId{{topicIdPartition={_partition(entry.topic_id_partition)}, id={uuid_text(entry.id)}}}"


def _custom(record) -> str:
    data = record.custom_metadata.value
    return "Optional.empty" if data is None else f"Optional[CustomMetadata{{{len(data)} bytes}}]"


def _epochs(record) -> str:
    """The leader epochs as Kafka's map of them prints: a later entry for an epoch replaces an
    earlier one, then by epoch."""
    epochs = {e.leader_epoch: e.offset for e in record.segment_leader_epochs}
    if not epochs:
        raise MetadataParseError("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _state(states: dict, value: int, message: str = "state can not be null") -> str:
    """The state of that id; an unknown id is null to Kafka, which its null check refuses."""
    if value not in states:
        raise MetadataParseError(message)
    return states[value]


def _bool(value: bool) -> str:
    return "true" if value else "false"


def to_text(api_key: int, record) -> str:
    """The line Kafka prints for a record: its metadata object's toString, after that object's
    checks (MetadataParseError with their message when one fails)."""
    r = record
    if api_key == 0:
        if r.start_offset < 0:
            raise MetadataParseError(f"Unexpected start offset = {r.start_offset}. StartOffset for a remote segment "
                                     "cannot be negative")
        if r.end_offset < r.start_offset:
            raise MetadataParseError(f"Unexpected end offset = {r.end_offset}. EndOffset for a remote segment cannot "
                                     f"be less than startOffset = {r.start_offset}")
        epochs = _epochs(r)
        state = _state(SEGMENT_STATES, r.remote_log_segment_state)
        return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(r.remote_log_segment_id)}, "
                f"startOffset={r.start_offset}, endOffset={r.end_offset}, brokerId={r.broker_id}, "
                f"maxTimestampMs={r.max_timestamp_ms}, eventTimestampMs={r.event_timestamp_ms}, "
                f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={r.segment_size_in_bytes}, "
                f"customMetadata={_custom(r)}, state={state}, txnIdxEmpty={_bool(r.txn_index_empty != 0)}}}")
    if api_key == 1:
        state = _state(SEGMENT_STATES, r.remote_log_segment_state)
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(r.remote_log_segment_id)}, "
                f"customMetadata={_custom(r)}, state={state}, eventTimestampMs={r.event_timestamp_ms}, "
                f"brokerId={r.broker_id}}}")
    if api_key == 2:
        state = _state(PARTITION_DELETE_STATES, r.remote_partition_delete_state, "null")  # a check without a message
        return (f"RemotePartitionDeleteMetadata{{topicPartition={_partition(r.topic_id_partition)}, state={state}, "
                f"eventTimestampMs={r.event_timestamp_ms}, brokerId={r.broker_id}}}")
    state = _state(SEGMENT_STATES, r.remote_log_segment_state)
    epochs = _epochs(r)
    return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_text(r.segment_id)}, startOffset={r.start_offset}, "
            f"endOffset={r.end_offset}, maxTimestampMs={r.max_timestamp_ms}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={r.segment_size_in_bytes}, customMetadata={_custom(r)}, state={state}, "
            f"txnIdxEmpty={_bool(r.txn_index_empty != 0)}}}")


def remote_log_metadata(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's remote-log-metadata decoder: no key; the payload is the record's text, or the
    line Kafka prints for a record it cannot read."""
    if record.value is None:  # Kafka's tool fails here with a null pointer; said plainly
        return None, f"Error at offset {record.offset}, skipping. the record has no value"
    try:
        api_key, _, r = read_record(bytes(record.value))
        return None, to_text(api_key, r)
    except MetadataParseError as err:
        return None, f"Error at offset {record.offset}, skipping. {err}"


def record_json(api_key: int, version: int, record) -> dict:
    """{"type": …, "version": …, "data": …}: the record as Kafka's JSON converters would write it
    (its tagged field only when true, not its default)."""
    return {"type": TYPES[api_key].name, "version": version, "data": message_json(record)}


def remote_log_json(record) -> dict:
    """For `dump --json`: the record's JSON and the line Kafka prints for it, or {"error": the
    line Kafka prints instead}."""
    payload = remote_log_metadata(record)[1]
    if payload.startswith("Error at offset "):
        return {"error": payload}
    return {**record_json(*read_record(bytes(record.value))), "text": payload}
