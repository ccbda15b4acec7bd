"""One small real example per schema, written by the generated writers and read back by the
generated readers; the rows of its annotated hex dump."""
from __future__ import annotations

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.consumer_protocol import ConsumerProtocol
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.kafka_types import KafkaTypes
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.producer_snapshot import ProducerSnapshot
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.generated.transaction_log import TransactionLog
from kafkacodec.generator.docs import HexRow
from kafkacodec.generator.program import Program
from kafkacodec.runtime import varint

from .hexdump import annotate

T = 1_700_000_000_000


def _record_batch() -> bytes:
    records = [RecordBatch.Record(offset_delta=0, timestamp_delta=0, key=b"user-1", value=b"clicked",
                                  headers=[RecordBatch.Header(key="source", value=b"web")]),
               RecordBatch.Record(offset_delta=1, timestamp_delta=250, key=None, value=b"bye", headers=[])]
    return RecordBatch(base_offset=42, partition_leader_epoch=3, attributes=0, base_timestamp=T,
                       max_timestamp=T + 250, producer_id=1000, producer_epoch=0, base_sequence=7,
                       records=RecordBatch.Records(items=records)).to_bytes()


def _legacy_log_entry() -> bytes:
    message = LegacyLogEntry.LegacyMessage(magic=1, attributes=0, timestamp=T, key=b"user-1", value=b"clicked")
    return LegacyLogEntry(offset=42, message=message).to_bytes()


def _offset_index() -> bytes:
    return OffsetIndex(entries=[OffsetIndex.Entry(relative_offset=r, position=p)
                                for r, p in ((57, 4150), (112, 8302), (170, 12460))]).to_bytes()


def _time_index() -> bytes:
    return TimeIndex(entries=[TimeIndex.Entry(timestamp=T + d, relative_offset=r)
                              for d, r in ((900, 57), (1800, 112), (2700, 170))]).to_bytes()


def _transaction_index() -> bytes:
    return TransactionIndex(entries=[TransactionIndex.AbortedTxn(
        producer_id=2000, first_offset=42, last_offset=51, last_stable_offset=39)]).to_bytes()


def _producer_snapshot() -> bytes:
    entry = ProducerSnapshot.ProducerEntry
    return ProducerSnapshot(producers=[
        entry(producer_id=1000, producer_epoch=0, last_sequence=34, last_offset=50, offset_delta=4,
              timestamp=T + 149_000, coordinator_epoch=-1, current_txn_first_offset=-1),
        entry(producer_id=3000, producer_epoch=1, last_sequence=7, last_offset=64, offset_delta=1,
              timestamp=T + 160_000, coordinator_epoch=2, current_txn_first_offset=63)]).to_bytes()


def _control_record() -> bytes:
    return ControlRecord(version=0, type=ControlRecord.ControlType.abort).to_bytes()


def _consumer_offsets() -> bytes:
    return ConsumerOffsets(version=1, key=ConsumerOffsets.OffsetCommitKey(
        group=KafkaTypes.String(value="billing"), topic=KafkaTypes.String(value="orders"), partition=3)).to_bytes()


def _consumer_protocol() -> bytes:
    s = KafkaTypes.String
    owned = [ConsumerProtocol.TopicPartitions(topic=s(value="orders"), partitions=[0, 3])]
    return ConsumerProtocol(version=3, body=ConsumerProtocol.SubscriptionV3(
        topics=[s(value="orders")], user_data=KafkaTypes.NullableBytes(value=None), owned_partitions=owned,
        generation_id=7, rack_id=KafkaTypes.NullableString(value="rack-1"))).to_bytes()


def _transaction_log() -> bytes:
    return TransactionLog(version=0, transactional_id=KafkaTypes.String(value="payments-tx-1")).to_bytes()


WRITERS = {"record_batch": (_record_batch, RecordBatch), "legacy_log_entry": (_legacy_log_entry, LegacyLogEntry),
           "offset_index": (_offset_index, OffsetIndex), "time_index": (_time_index, TimeIndex),
           "transaction_index": (_transaction_index, TransactionIndex),
           "producer_snapshot": (_producer_snapshot, ProducerSnapshot),
           "control_record": (_control_record, ControlRecord), "consumer_offsets": (_consumer_offsets, ConsumerOffsets),
           "transaction_log": (_transaction_log, TransactionLog),
           "consumer_protocol": (_consumer_protocol, ConsumerProtocol)}
INTRINSIC_EXAMPLES = {"zigzag32": (varint.encode_zigzag32, (0, -1, 1, 63, -64, 300, -2 ** 31)),
                      "zigzag64": (varint.encode_zigzag64, (0, -1, 1, 63, -64, 300, -2 ** 63)),
                      "uvarint32": (varint.encode_uvarint32, (0, 1, 127, 128, 300, 2 ** 31 - 1))}


def example_bytes(schema_id: str) -> tuple[bytes, object]:
    """The example's bytes and the object the generated reader decodes from them."""
    write, cls = WRITERS[schema_id]
    data = write()
    return data, cls.from_bytes(data)


def example_rows(program: Program) -> dict[str, list[HexRow]]:
    out = {}
    for sid, schema in program.schemas.items():
        if schema.root.intrinsic in INTRINSIC_EXAMPLES:
            (encode, values), pos, rows = INTRINSIC_EXAMPLES[schema.root.intrinsic], 0, []
            for v in values:
                data = encode(v)
                rows.append(HexRow(pos, data, "value", str(v)))
                pos += len(data)
            out[sid] = rows
        elif sid in WRITERS:
            data, obj = example_bytes(sid)
            out[sid] = annotate(program, sid, data, obj)
    return out
