"""A sample KRaft controller's metadata log dir, the same bytes on every run: `__cluster_metadata-0`
with a day of a small cluster's life, a snapshot taken part way, and the `quorum-state` file.

The story: controller 3000 bootstraps the cluster; brokers 1-3 register fenced and are unfenced;
topics `orders` (3 partitions, created in a metadata transaction), `payments` and `scratch`; an
ACL, a quota, a SCRAM user and a producer-id block. Broker 2 goes through a controlled shutdown
(leaders move away, ISRs shrink), is fenced, registers again at a new epoch and rejoins the ISRs.
The snapshot covers everything so far; after it, broker 4 joins and `orders-0` is reassigned
from [1,2,3] to [1,3,4] (adding 4, removing 2), a config is deleted, `scratch` is deleted, and an
aborted metadata transaction leaves no trace."""
from __future__ import annotations

import base64
import json
from pathlib import Path

from kafkacodec.codec.records import Record
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.kafka_types import KafkaTypes

from ..kraft.image import Image
from ..kraft.records import TYPES, pack
from ..kraft.snapshot import write_snapshot
from ..change.writer import PartitionWriter
from ..state.control_rules import ControlType, key_bytes

T0 = 1_700_000_000_000
MINUTE = 60_000
CONTROLLER = 3000
SEGMENT_BYTES = 1 << 20
LATEST = {name: latest for name, latest, _ in TYPES.values()}


def uuid(n: int) -> str:
    return base64.urlsafe_b64encode(bytes([n] * 16)).rstrip(b"=").decode()


def rec(kind: str, **data) -> dict:
    return {"type": kind, "version": LATEST[kind], "data": data}


def endpoint(name: str, host: str, port: int, protocol: int = 0) -> dict:
    return {"name": name, "host": host, "port": port, "securityProtocol": protocol}


def register(broker: int, epoch: int) -> dict:
    return rec("REGISTER_BROKER_RECORD", brokerId=broker, isMigratingZkBroker=False, incarnationId=uuid(broker + epoch),
               brokerEpoch=epoch, endPoints=[endpoint("PLAINTEXT", f"broker{broker}", 9092)],
               features=[{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 27}],
               rack=f"rack-{broker % 2}", fenced=True, inControlledShutdown=False, logDirs=[uuid(100 + broker)])


def change(broker: int, epoch: int, **fields) -> dict:
    return rec("BROKER_REGISTRATION_CHANGE_RECORD", brokerId=broker, brokerEpoch=epoch, **fields)


def partition(topic: int, number: int, replicas: list[int], epoch: int = 0) -> dict:
    return rec("PARTITION_RECORD", partitionId=number, topicId=uuid(topic), replicas=replicas, isr=replicas,
               removingReplicas=[], addingReplicas=[], leader=replicas[0], leaderEpoch=epoch, partitionEpoch=epoch,
               directories=[uuid(100 + r) for r in replicas])


def moved(topic: int, number: int, **fields) -> dict:
    return rec("PARTITION_CHANGE_RECORD", partitionId=number, topicId=uuid(topic), **fields)


def config(kind: int, name: str, key: str, value: str | None) -> dict:
    return rec("CONFIG_RECORD", resourceType=kind, resourceName=name, name=key, value=value)


ORDERS, PAYMENTS, SCRATCH = 1, 2, 3
BEFORE_SNAPSHOT = [  # (minutes after T0, records of one batch)
    (0, [rec("FEATURE_LEVEL_RECORD", name="metadata.version", featureLevel=27),
         rec("FEATURE_LEVEL_RECORD", name="group.version", featureLevel=1),
         rec("FEATURE_LEVEL_RECORD", name="transaction.version", featureLevel=2),
         rec("REGISTER_CONTROLLER_RECORD", controllerId=CONTROLLER, incarnationId=uuid(50), zkMigrationReady=False,
             endPoints=[endpoint("CONTROLLER", "controller", 9093)],
             features=[{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 27}])]),
    (1, [register(1, 10), register(2, 11), register(3, 12)]),
    (2, [change(1, 10, fenced=-1), change(2, 11, fenced=-1), change(3, 12, fenced=-1)]),
    (5, [rec("BEGIN_TRANSACTION_RECORD", name="CreateTopics orders"),
         rec("TOPIC_RECORD", name="orders", topicId=uuid(ORDERS)),
         partition(ORDERS, 0, [1, 2, 3]), partition(ORDERS, 1, [2, 3, 1]), partition(ORDERS, 2, [3, 1, 2]),
         config(2, "orders", "retention.ms", "604800000"), config(2, "orders", "cleanup.policy", "delete"),
         rec("END_TRANSACTION_RECORD")]),
    (6, [rec("TOPIC_RECORD", name="payments", topicId=uuid(PAYMENTS)), partition(PAYMENTS, 0, [2, 1, 3]),
         config(2, "payments", "min.insync.replicas", "2")]),
    (7, [rec("TOPIC_RECORD", name="scratch", topicId=uuid(SCRATCH)), partition(SCRATCH, 0, [3])]),
    (8, [rec("PRODUCER_IDS_RECORD", brokerId=1, brokerEpoch=10, nextProducerId=1000),
         rec("ACCESS_CONTROL_ENTRY_RECORD", id=uuid(60), resourceType=2, resourceName="orders", patternType=3,
             principal="User:billing", host="*", operation=3, permissionType=3),
         rec("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "billing"}],
             key="producer_byte_rate", value=1048576.0, remove=False),
         rec("USER_SCRAM_CREDENTIAL_RECORD", name="billing", mechanism=2, salt="c2FsdA==", storedKey="c3RvcmVk",
             serverKey="c2VydmVy", iterations=8192),
         config(4, "", "log.retention.hours", "72")]),
    (190, [change(2, 11, inControlledShutdown=1)]),  # broker 2 shuts down: leadership and ISR move off it
    (191, [moved(ORDERS, 1, leader=3, isr=[3, 1]), moved(PAYMENTS, 0, leader=1, isr=[1, 3]),
           moved(ORDERS, 0, isr=[1, 3]), moved(ORDERS, 2, isr=[3, 1])]),
    (192, [change(2, 11, fenced=1)]),
    (200, [register(2, 13)]),
    (201, [change(2, 13, fenced=-1)]),
    (203, [moved(ORDERS, 0, isr=[1, 3, 2]), moved(ORDERS, 1, isr=[3, 1, 2]), moved(ORDERS, 2, isr=[3, 1, 2]),
           moved(PAYMENTS, 0, isr=[1, 3, 2])]),
    (210, [moved(ORDERS, 1, leader=2)]),  # the preferred leader elected again
    (300, [rec("NO_OP_RECORD")]),
]
AFTER_SNAPSHOT = [
    (600, [register(4, 14)]),
    (601, [change(4, 14, fenced=-1)]),
    (620, [moved(ORDERS, 0, replicas=[1, 2, 3, 4], directories=[uuid(101), uuid(102), uuid(103), uuid(104)],
                 addingReplicas=[4], removingReplicas=[2])]),
    (625, [moved(ORDERS, 0, isr=[1, 3, 2, 4])]),
    (626, [moved(ORDERS, 0, replicas=[1, 3, 4], directories=[uuid(101), uuid(103), uuid(104)], isr=[1, 3, 4],
                 addingReplicas=[], removingReplicas=[])]),
    (700, [config(2, "orders", "retention.ms", None)]),
    (720, [rec("REMOVE_TOPIC_RECORD", topicId=uuid(SCRATCH))]),
    (730, [rec("BEGIN_TRANSACTION_RECORD", name="CreateTopics abandoned"),
           rec("TOPIC_RECORD", name="abandoned", topicId=uuid(4)),
           rec("ABORT_TRANSACTION_RECORD", reason="controller failover")]),
    (900, [rec("NO_OP_RECORD")]),
]
EPOCH = 1


def _leader_change(leader: int) -> bytes:
    """A LeaderChangeMessage at version 0: `leader` elected as the quorum's only voter, by itself."""
    def voters():
        return [ControlRecord.Voter(voter_id=leader, tagged_fields=KafkaTypes.TaggedFields(fields=[]))]
    return ControlRecord.LeaderChangeMessage(version=0, leader_id=leader, voters=voters(), granting_voters=voters(),
                                             tagged_fields=KafkaTypes.TaggedFields(fields=[])).to_bytes()


def write_metadata_sample(root: str | Path) -> Path:
    """Write the controller's metadata log dir into `root`; returns `__cluster_metadata-0`."""
    part_dir = Path(root) / "__cluster_metadata-0"
    image = Image()
    with PartitionWriter(part_dir, segment_bytes=SEGMENT_BYTES) as w:
        w.append([Record(key=key_bytes(ControlType.leader_change), value=_leader_change(CONTROLLER), timestamp=T0)],
                 partition_leader_epoch=EPOCH, is_control=True)
        for minutes, records in BEFORE_SNAPSHOT:
            w.append([Record(value=pack(r), timestamp=T0 + minutes * MINUTE) for r in records],
                     partition_leader_epoch=EPOCH)
            for r in records:  # the sample's own transactions all commit before the snapshot
                image.apply(r)
        end = w.next_offset
        write_snapshot(part_dir, image, end, EPOCH, T0 + BEFORE_SNAPSHOT[-1][0] * MINUTE)
        w.roll()  # so that the segments the snapshot covers could go as Kafka's retention removes them
        for minutes, records in AFTER_SNAPSHOT:
            w.append([Record(value=pack(r), timestamp=T0 + minutes * MINUTE) for r in records],
                     partition_leader_epoch=EPOCH)
    (part_dir / "quorum-state").write_text(json.dumps(
        {"leaderId": CONTROLLER, "leaderEpoch": EPOCH, "votedId": -1, "votedDirectoryId": uuid(0),
         "data_version": 1}, separators=(",", ":")))
    (Path(root) / "meta.properties").write_text(
        "#\n#Tue Nov 14 22:13:20 UTC 2023\nnode.id=3000\ndirectory.id=" + uuid(150)
        + "\nversion=1\ncluster.id=kafkacodec-sample00000\n")
    return part_dir
