"""KRaft snapshots: the records that rebuild an image (as Kafka's image writer emits them, each
at its newest version), and a `.checkpoint` file holding them between a SnapshotHeader and a
SnapshotFooter, its batches numbered from offset 0 at the snapshot's epoch."""
from __future__ import annotations

from pathlib import Path

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.kafka_types import KafkaTypes

from ..diskio.durable import write_atomically
from .image import CONFIG_TYPES, SCRAM_MECHANISMS, Image
from .records import BY_NAME, TYPES, pack
from ..layout.names import KRAFT_SNAPSHOT
from ..state.control_rules import ControlType, key_bytes

CONFIG_IDS = {name: number for number, name in CONFIG_TYPES.items()}
MECHANISM_IDS = {name: number for number, name in SCRAM_MECHANISMS.items()}
RECORDS_PER_BATCH = 100


def _record(name: str, data: dict) -> dict:
    return {"type": name, "version": TYPES[BY_NAME[name]].latest, "data": data}


def image_records(image: Image) -> list[dict]:
    """Records whose replay from an empty image gives `image` (its quorum aside, which the
    snapshot's control records carry)."""
    features = sorted(image.features.items(), key=lambda f: (f[0] != "metadata.version", f[0]))  # Kafka's first
    out = [_record("FEATURE_LEVEL_RECORD", {"name": n, "featureLevel": v}) for n, v in features]
    for b in (image.brokers[i] for i in sorted(image.brokers)):
        out.append(_record("REGISTER_BROKER_RECORD", {**b, "isMigratingZkBroker": b["isMigratingZkBroker"]}))
    out += [_record("REGISTER_CONTROLLER_RECORD", image.controllers[i]) for i in sorted(image.controllers)]
    for topic in sorted(image.topics.values(), key=lambda t: t["name"]):
        out.append(_record("TOPIC_RECORD", {"name": topic["name"], "topicId": topic["topicId"]}))
        out += [_record("PARTITION_RECORD", {"partitionId": n, "topicId": topic["topicId"], **p})
                for n, p in sorted(topic["partitions"].items())]
    for (kind, name), values in sorted(image.configs.items()):
        out += [_record("CONFIG_RECORD", {"resourceType": CONFIG_IDS[kind], "resourceName": name, "name": k,
                                          "value": v}) for k, v in sorted(values.items())]
    for entity, values in sorted(image.quotas.items(), key=lambda e: repr(e[0])):
        out += [_record("CLIENT_QUOTA_RECORD", {"entity": [{"entityType": t, "entityName": n} for t, n in entity],
                                                "key": k, "value": v, "remove": False})
                for k, v in sorted(values.items())]
    out += [_record("ACCESS_CONTROL_ENTRY_RECORD", {"id": i, **acl}) for i, acl in sorted(image.acls.items())]
    out += [_record("USER_SCRAM_CREDENTIAL_RECORD", {"name": n, "mechanism": MECHANISM_IDS[m], **cred})
            for (m, n), cred in sorted(image.scram.items())]
    out += [_record("DELEGATION_TOKEN_RECORD", {"tokenId": t, **d}) for t, d in sorted(image.tokens.items())]
    if image.next_producer_id is not None:
        out.append(_record("PRODUCER_IDS_RECORD", {"brokerId": -1, "brokerEpoch": -1,
                                                   "nextProducerId": image.next_producer_id}))
    return out


def _control(kind: int, value: bytes, offset: int, time: int, epoch: int) -> bytes:
    record = Record(key=key_bytes(kind), value=value, timestamp=time, offset=offset)
    return write_batch([record], base_offset=offset, partition_leader_epoch=epoch, is_control=True)


def header_value(time: int) -> bytes:
    """A SnapshotHeaderRecord at version 0, as Kafka writes it: the snapshot's last append time."""
    return ControlRecord.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=time,
                                              tagged_fields=KafkaTypes.TaggedFields(fields=[])).to_bytes()


def footer_value() -> bytes:
    """A SnapshotFooterRecord at version 0, as Kafka writes it."""
    return ControlRecord.SnapshotFooterRecord(version=0, tagged_fields=KafkaTypes.TaggedFields(fields=[])).to_bytes()


def snapshot_bytes(records: list[dict], epoch: int, time: int) -> bytes:
    """A snapshot file's bytes: header, the records in batches, footer."""
    out = [_control(ControlType.snapshot_header, header_value(time), 0, time, epoch)]
    offset = 1
    for start in range(0, len(records), RECORDS_PER_BATCH):
        chunk = [Record(value=pack(r), timestamp=time, offset=offset + i)
                 for i, r in enumerate(records[start:start + RECORDS_PER_BATCH])]
        out.append(write_batch(chunk, base_offset=offset, partition_leader_epoch=epoch))
        offset += len(chunk)
    out.append(_control(ControlType.snapshot_footer, footer_value(), offset, time, epoch))
    return b"".join(out)


def write_snapshot(part_dir: Path, image: Image, end_offset: int, epoch: int, time: int) -> Path:
    """`<end offset>-<epoch>.checkpoint` in the partition directory, written whole or not at all."""
    path = Path(part_dir) / f"{end_offset:020d}-{epoch:010d}{KRAFT_SNAPSHOT}"
    write_atomically(path, snapshot_bytes(image_records(image), epoch, time))
    return path
