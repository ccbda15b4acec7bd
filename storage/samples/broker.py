"""A sample log directory, the same bytes on every run: what a broker's disk looks like after a
topic lived through the message-format upgrades, plus producers of every kind.

- clicks-0: magic 0, then magic 1 (a log-append-time wrapper among them), then v2 with headers,
  in every codec, over several segments with indexes;
- clicks-1: v2 with null keys and tombstones (null values);
- payments-0: an idempotent producer beside two transactional ones whose transactions
  interleave and span segment rolls: commits, aborts (one while the other producer's
  transaction is open, so its last stable offset lags), a producer epoch bump, and a
  transaction still open at the end; with the `.txnindex` and `.snapshot` files that follow.
- __consumer_offsets-0: commits of two consumer groups over time (one group's expiring commit
  written at value version 1), their group metadata, and the tombstones that expire a third
  group's commits;
- __transaction_state-0: the transaction coordinator's records for the payments producers;
- _schemas-0, shop.orders-0, shop.shipments-0, shop.reviews-0: Avro, Protobuf and JSON Schema values in
  Confluent's framing and the schema registry's storage topic (samples.registry_topics).
Plus the log dir's checkpoints, meta.properties and each partition's partition.metadata and
leader-epoch-checkpoint.
"""
from __future__ import annotations

import base64
from pathlib import Path

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.generated.kafka_types import KafkaTypes
from kafkacodec.generated.transaction_log import TransactionLog

from ..layout import textfiles
from kafkacodec.codec.internal_topics import offset_commit_key, offset_commit_record
from ..change.writer import PartitionWriter
from ..state.control_rules import ControlType, key_bytes, marker_value_bytes
from . import registry_topics

T0 = 1_600_000_000_000
SEGMENT_BYTES = 16 * 1024
CODECS = ("none", "gzip", "snappy", "lz4")


def _events(start: int, n: int, headers: bool = False, size: int = 60):
    return [{"key": b"user-%d" % ((start + i) % 7),
             "value": (b'{"n":%d,"pad":"' % (start + i)) + b"x" * (size + (start + i) % 40) + b'"}',
             "timestamp": T0 + 1000 * (start + i),
             "headers": [("source", b"web"), ("trace", b"%08x" % (start + i))] if headers and i % 2 == 0 else []}
            for i in range(n)]


def _marker(kind: int, timestamp: int, coordinator_epoch: int = 0) -> list[dict]:
    """A transaction marker: control key (version 0, type) and EndTransactionMarker value."""
    return [{"key": key_bytes(kind), "value": marker_value_bytes(coordinator_epoch), "timestamp": timestamp}]


def _clicks_0(w: PartitionWriter) -> None:
    n = 0
    for magic, codecs in ((0, CODECS), (1, CODECS), (2, CODECS + ("zstd",))):
        for codec in codecs * 3:
            options = {"magic": magic, "compression": codec}
            if magic == 1 and codec == "lz4":
                options.update(timestamp_type="LogAppendTime", log_append_time=T0 + 1000 * (n + 10))
            w.append(_events(n, 10, headers=magic == 2), **options)
            n += 10


def _clicks_1(w: PartitionWriter) -> None:
    for i in range(20):
        recs = _events(i * 5, 5, headers=True)
        for j, r in enumerate(recs):
            if (i + j) % 4 == 0:
                r["key"] = None
            if (i + j) % 5 == 0:
                r["value"] = None  # a tombstone
        w.append(recs, compression=CODECS[i % 4])


def _payments_0(w: PartitionWriter) -> None:
    seqs = {1000: 0, 2000: 0, 3000: 0}
    n = 0

    def data(pid: int, count: int, epoch: int = 0, txn: bool = False, codec: str = "none") -> None:
        nonlocal n
        w.append(_events(100 + n, count), producer_id=pid, producer_epoch=epoch, base_sequence=seqs[pid],
                 is_transactional=txn, compression=codec)
        seqs[pid] += count
        n += count

    def end(pid: int, kind: int, epoch: int) -> None:
        w.append(_marker(kind, T0 + 1000 * (100 + n) - 1, coordinator_epoch=2), producer_id=pid,
                 producer_epoch=epoch, is_transactional=True, is_control=True)

    for _ in range(6):
        data(1000, 5, codec="lz4")  # idempotent, not transactional
    data(2000, 4, 3, True)
    data(2000, 4, 3, True)
    end(2000, ControlType.commit, 3)
    data(3000, 3, 1, True, "gzip")  # opens a transaction that outlives the next abort
    data(2000, 4, 3, True, "zstd")
    data(1000, 5, codec="snappy")
    end(2000, ControlType.abort, 3)  # while 3000's transaction is open: the last stable offset stays behind
    data(3000, 3, 1, True)
    end(3000, ControlType.commit, 1)
    seqs[2000] = 0  # a new producer epoch starts its sequences again
    data(2000, 6, 4, True, "lz4")
    end(2000, ControlType.abort, 4)  # with nothing else open
    data(3000, 2, 1, True)  # still open when the log ends
    data(1000, 3)


def _protocol(topic: str, partitions: list[int]) -> tuple[bytes, bytes]:
    """A consumer's subscription (version 1) and assignment (version 1) of one topic."""
    s, nb = KafkaTypes.String, KafkaTypes.NullableBytes
    owned = [ConsumerProtocol.TopicPartitions(topic=s(value=topic), partitions=partitions)]
    sub = ConsumerProtocol(version=1, body=ConsumerProtocol.SubscriptionV1(
        topics=[s(value=topic)], user_data=nb(value=None), owned_partitions=owned)).to_bytes()
    assignment = ConsumerProtocol.Assignment(version=1, assigned_partitions=owned, user_data=nb(value=None))
    return sub, assignment.to_bytes()


def _group_metadata(group: str, generation: int, members: list[str], at: int, protocol=None) -> dict:
    """Group metadata at value version 3; members' protocol bytes from `protocol(i)`, else bytes
    that do not decode (as a custom assignor's may not)."""
    s, ns, b = KafkaTypes.String, KafkaTypes.NullableString, KafkaTypes.Bytes
    key = ConsumerOffsets(version=2, key=ConsumerOffsets.GroupMetadataKey(group=s(value=group))).to_bytes()
    body = ConsumerOffsets.GroupMetadataValueBody(
        protocol_type=s(value="consumer"), generation=generation, protocol=ns(value="range"),
        leader=ns(value=members[0] if members else None), current_state_timestamp=at,
        members=[ConsumerOffsets.MemberMetadata(
            member_id=s(value=m), group_instance_id=ns(value=None), client_id=s(value=m.split("-")[0]),
            client_host=s(value="/10.0.0.%d" % (i + 1)), rebalance_timeout=300_000, session_timeout=45_000,
            subscription=b(value=protocol(i)[0] if protocol else b"\x00\x09"),
            assignment=b(value=protocol(i)[1] if protocol else b"\x00\x09")) for i, m in enumerate(members)])
    value = ConsumerOffsets.GroupMetadataValue(version=3, body=body).to_bytes()
    return {"key": key, "value": value, "timestamp": at}


def _consumer_offsets_0(w: PartitionWriter) -> None:
    t = T0 + 200_000
    w.append([_group_metadata("billing", 1, ["billing-1"], t, lambda i: _protocol("payments", [0]))])
    w.append([_group_metadata("analytics", 4, ["analytics-1"], t)])
    def commit(group: str, topic: str, partition: int, offset: int, at: int) -> dict:
        key, value = offset_commit_record(group, topic, partition, offset, at, leader_epoch=0)
        return {"key": key, "value": value, "timestamp": at}

    for step in range(4):  # commits over time; the latest one counts
        t += 5000
        w.append([commit("billing", "payments", 0, 20 + 10 * step, t)])
        w.append([commit("analytics", "clicks", 0, 100 * step, t), commit("analytics", "clicks", 1, 15 + 20 * step, t)])
    key, value = offset_commit_record("legacy-app", "clicks", 0, 12, T0, expire_timestamp=T0 + 86_400_000)
    w.append([{"key": key, "value": value, "timestamp": T0}])
    # the group expired: the coordinator deletes its commits and its metadata with tombstones
    w.append([{"key": offset_commit_key("legacy-app", "clicks", 0), "value": None, "timestamp": t + 1000},
              {"key": ConsumerOffsets(version=2, key=ConsumerOffsets.GroupMetadataKey(
                  group=KafkaTypes.String(value="legacy-app"))).to_bytes(), "value": None, "timestamp": t + 1000}])


def _transaction_state_0(w: PartitionWriter) -> None:
    def record(tid: str, pid: int, epoch: int, status: int, partitions: list[int] | None, at: int) -> dict:
        key = TransactionLog(version=0, transactional_id=KafkaTypes.String(value=tid)).to_bytes()
        parts = None if partitions is None else [TransactionLog.PartitionsSchema(
            topic=KafkaTypes.String(value="payments"), partition_ids=partitions)]
        body = TransactionLog.TransactionLogValueBody(
            producer_id=pid, producer_epoch=epoch, transaction_timeout_ms=60_000,
            transaction_status=status, transaction_partitions=parts,
            transaction_last_update_timestamp_ms=at, transaction_start_timestamp_ms=at)
        return {"key": key, "value": TransactionLog.TransactionLogValue(version=0, body=body).to_bytes(),
                "timestamp": at}

    at = T0 + 130_000
    for status, parts in ((0, None), (1, [0]), (2, [0]), (4, [])):  # Empty, Ongoing, PrepareCommit, CompleteCommit
        at += 1000
        w.append([record("payments-tx-a", 2000, 3, status, parts, at)])
    for status, parts in ((1, [0]), (3, [0]), (5, [])):  # Ongoing, PrepareAbort, CompleteAbort
        at += 1000
        w.append([record("payments-tx-b", 3000, 1, status, parts, at)])


PARTITIONS = {("clicks", 0): _clicks_0, ("clicks", 1): _clicks_1, ("payments", 0): _payments_0,
              ("__consumer_offsets", 0): _consumer_offsets_0, ("__transaction_state", 0): _transaction_state_0,
              **registry_topics.PARTITIONS}
SEGMENT_BYTES_OF = {"payments": 2048}  # small segments, so transactions span rolls
TOPIC_IDS = {"clicks": bytes(range(1, 17)), "payments": bytes(range(17, 33)),
             "__consumer_offsets": bytes(range(33, 49)), "__transaction_state": bytes(range(49, 65)),
             "_schemas": bytes(range(65, 81)), "shop.orders": bytes(range(81, 97)),
             "shop.shipments": bytes(range(97, 113)), "shop.reviews": bytes(range(113, 129))}


def write_sample(root: str | Path) -> list[Path]:
    """Write the sample into `root` (created; must not hold a partition yet); returns the partitions."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    ends = {}
    written = []
    for (topic, partition), fill in PARTITIONS.items():
        path = root / f"{topic}-{partition}"
        if path.exists():
            raise FileExistsError(f"{path} exists; the sample writes into an empty directory")
        with PartitionWriter(path, segment_bytes=SEGMENT_BYTES_OF.get(topic, SEGMENT_BYTES)) as w:
            fill(w)
            ends[(topic, partition)] = w.next_offset
        topic_id = base64.urlsafe_b64encode(TOPIC_IDS[topic]).rstrip(b"=").decode()
        (path / textfiles.PARTITION_METADATA).write_text(f"version: 0\ntopic_id: {topic_id}")
        textfiles.write_checkpoint(path / textfiles.LEADER_EPOCH_CHECKPOINT, [[0, 0]])
        written.append(path)
    entries = [[t, p, end] for (t, p), end in sorted(ends.items())]
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        textfiles.write_checkpoint(root / name, entries)
    (root / textfiles.META_PROPERTIES).write_text(
        "#\n#Thu Sep 13 12:26:40 UTC 2020\nnode.id=1\nversion=1\ncluster.id=kafkacodec-sample00000\n")
    return written
