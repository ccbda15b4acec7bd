"""Records of Kafka's internal topics: `__consumer_offsets` (committed offsets and group
metadata), `__transaction_state` and `__share_group_state`, decoded with the generated codecs,
and what follows from them: the committed offsets per group, topic and partition."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.group_records import GroupRecords
from kafkacodec.generated.kafka_types import KafkaTypes
from kafkacodec.generated.share_group_state import ShareGroupState
from kafkacodec.generated.transaction_log import TransactionLog

OFFSET_COMMIT_KEYS = (0, 1)
GROUP_METADATA_KEY = 2
# key version -> value class of the consumer group protocol's records (KIP-848)
CONSUMER_GROUP_VALUES = {3: ConsumerOffsets.ConsumerGroupMetadataValue,
                         4: ConsumerOffsets.ConsumerGroupPartitionMetadataValue,
                         5: ConsumerOffsets.ConsumerGroupMemberMetadataValue,
                         6: ConsumerOffsets.ConsumerGroupTargetAssignmentMetadataValue,
                         7: ConsumerOffsets.ConsumerGroupTargetAssignmentMemberValue,
                         8: ConsumerOffsets.ConsumerGroupCurrentMemberAssignmentValue}
# key version -> value class of the records Kafka 4 adds: share groups, consumer groups' regular
# expressions, streams groups (9 and 18 are not defined)
GROUP_RECORD_VALUES = {10: GroupRecords.ShareGroupMemberMetadataValue,
                       11: GroupRecords.ShareGroupMetadataValue,
                       12: GroupRecords.ShareGroupTargetAssignmentMetadataValue,
                       13: GroupRecords.ShareGroupTargetAssignmentMemberValue,
                       14: GroupRecords.ShareGroupCurrentMemberAssignmentValue,
                       15: GroupRecords.ShareGroupStatePartitionMetadataValue,
                       16: GroupRecords.ConsumerGroupRegularExpressionValue,
                       17: GroupRecords.StreamsGroupMetadataValue,
                       19: GroupRecords.StreamsGroupMemberMetadataValue,
                       20: GroupRecords.StreamsGroupTargetAssignmentMetadataValue,
                       21: GroupRecords.StreamsGroupTargetAssignmentMemberValue,
                       22: GroupRecords.StreamsGroupCurrentMemberAssignmentValue,
                       23: GroupRecords.StreamsGroupTopologyValue}
# record type -> value class of `__share_group_state`: 0 a snapshot, 1 an update
SHARE_STATE_VALUES = {0: ShareGroupState.ShareSnapshotValue, 1: ShareGroupState.ShareUpdateValue}
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"


@dataclass(frozen=True)
class GroupRecord:
    """A `__consumer_offsets` record: its type (from the key version), key and value (None for a
    tombstone; raw bytes for record types and value versions this library does not know)."""
    key_version: int
    key: object
    value_version: int | None
    value: object


def decode_group_record(key: bytes, value: bytes | None) -> GroupRecord:
    """Raises a DecodeError for bytes that do not decode (Kafka's tool prints them as an error)."""
    k = ConsumerOffsets.from_bytes(key)
    if value is None:
        return GroupRecord(k.version, k.key, None, None)
    if k.version in OFFSET_COMMIT_KEYS:
        v = ConsumerOffsets.OffsetCommitValue.from_bytes(value)
    elif k.version == GROUP_METADATA_KEY:
        v = ConsumerOffsets.GroupMetadataValue.from_bytes(value)
    elif k.version in CONSUMER_GROUP_VALUES:
        v = CONSUMER_GROUP_VALUES[k.version].from_bytes(value)
    elif k.version in GROUP_RECORD_VALUES:
        v = GROUP_RECORD_VALUES[k.version].from_bytes(value)
    else:
        return GroupRecord(k.version, k.key, None, value)
    return GroupRecord(k.version, k.key, v.version, v.body)


@dataclass(frozen=True)
class CommittedOffset:
    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    record_offset: int  # where in __consumer_offsets the commit lies

    @classmethod
    def of(cls, ident: tuple[str, str, int], value, record_offset: int) -> CommittedOffset:
        """From a commit's value; a field its version lacks has Kafka's default, -1."""
        return cls(*ident, value.offset, _or_minus_one(value.leader_epoch), value.metadata.value, value.commit_timestamp,
                   _or_minus_one(value.expire_timestamp), record_offset)


def _or_minus_one(number: int | None) -> int:
    return -1 if number is None else number


def committed_offsets(records: Iterable[tuple[int, bytes | None, bytes | None]]) -> dict[tuple[str, str, int],
                                                                                          CommittedOffset]:
    """From (record offset, key, value) of a `__consumer_offsets` partition in offset order: the
    latest commit per (group, topic, partition); a tombstone deletes it, as the coordinator
    replays the log. A commit of a value version this library does not know is passed over."""
    out: dict[tuple[str, str, int], CommittedOffset] = {}
    for offset, key, value in records:
        if key is None:
            continue
        r = decode_group_record(key, value)
        if r.key_version not in OFFSET_COMMIT_KEYS:
            continue
        ident = (r.key.group.value, r.key.topic.value, r.key.partition)
        if r.value is None:
            out.pop(ident, None)
            continue
        v = r.value
        if isinstance(v, (bytes, bytearray)):
            continue
        out[ident] = CommittedOffset.of(ident, v, offset)
    return out


# -- writing (the sample, tests) --------------------------------------------------------------
def offset_commit_record(group: str, topic: str, partition: int, offset: int, commit_timestamp: int,
                         leader_epoch: int = -1, metadata: str = "", expire_timestamp: int | None = None
                         ) -> tuple[bytes, bytes]:
    """Key and value as a broker writes them: key version 1, value version 3 (1 with an expiry)."""
    s = KafkaTypes.String
    key = offset_commit_key(group, topic, partition)
    if expire_timestamp is not None:
        body = ConsumerOffsets.OffsetCommitValueBody(offset=offset, metadata=s(value=metadata),
                                                     commit_timestamp=commit_timestamp,
                                                     expire_timestamp=expire_timestamp)
        version = 1
    else:
        body = ConsumerOffsets.OffsetCommitValueBody(offset=offset, leader_epoch=leader_epoch,
                                                     metadata=s(value=metadata), commit_timestamp=commit_timestamp)
        version = 3
    return key, ConsumerOffsets.OffsetCommitValue(version=version, body=body).to_bytes()


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """The key of a commit (version 1), and of the tombstone that deletes it."""
    s = KafkaTypes.String
    return ConsumerOffsets(version=1, key=ConsumerOffsets.OffsetCommitKey(
        group=s(value=group), topic=s(value=topic), partition=partition)).to_bytes()


# -- __transaction_state ---------------------------------------------------------------------
@dataclass(frozen=True)
class TransactionRecord:
    transactional_id: str
    value_version: int | None
    value: object  # None for a tombstone


def decode_transaction_record(key: bytes, value: bytes | None) -> TransactionRecord:
    k = TransactionLog.from_bytes(key)
    if value is None:
        return TransactionRecord(k.transactional_id.value, None, None)
    v = TransactionLog.TransactionLogValue.from_bytes(value)
    return TransactionRecord(k.transactional_id.value, v.version, v.body)
