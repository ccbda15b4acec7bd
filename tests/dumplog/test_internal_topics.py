"""Control records, __consumer_offsets and __transaction_state: every version decodes from bytes
packed here by hand from Kafka's message specs and re-encodes byte for byte; unknown tagged
fields survive; the library's views of the sample's internal topics."""
import struct
import subprocess
import sys

import pytest

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.transaction_log import TransactionLog
from kafkacodec.storage.layout import logdir
from kafkacodec.codec.internal_topics import committed_offsets, decode_group_record
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.state.groups import partition_committed_offsets
from kafkacodec.storage.state.transactions import aborted_ranges, partition_transactions, read_committed


# -- hand encoders, written from the message-spec rules, independent of the schemas ----------
def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def string(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def cstring(s: str | None) -> bytes:
    return uvarint(0) if s is None else uvarint(len(s.encode()) + 1) + s.encode()


def blob(b: bytes) -> bytes:
    return struct.pack(">i", len(b)) + b


def cblob(b: bytes) -> bytes:
    return uvarint(len(b) + 1) + b


def tags(*fields: tuple[int, bytes]) -> bytes:
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in fields)


UNKNOWN = (7, b"\x01\x02\x03")  # a tag no version of these messages defines


def offset_commit_values():
    yield 0, struct.pack(">q", 42) + string("m") + struct.pack(">q", 1000)
    yield 1, struct.pack(">q", 42) + string("m") + struct.pack(">qq", 1000, 5000)
    yield 2, struct.pack(">q", 42) + string("") + struct.pack(">q", 1000)
    yield 3, struct.pack(">qi", 42, 7) + string("m") + struct.pack(">q", 1000)
    yield 4, struct.pack(">qi", 42, 7) + cstring("m") + struct.pack(">q", 1000) + tags(UNKNOWN)


def member(v: int, name: str) -> bytes:
    flexible = v >= 4
    s, ns, b = (cstring, cstring, cblob) if flexible else (string, string, blob)
    out = s(name) + (ns(None) if v >= 3 else b"") + s("client") + s("/10.0.0.1")
    out += (struct.pack(">i", 300000) if v >= 1 else b"") + struct.pack(">i", 45000) + b(b"\x00\x01sub") + b(b"\x00")
    return out + (tags(UNKNOWN) if flexible else b"")


def group_metadata_values():
    for v in range(5):
        flexible = v >= 4
        s, ns = (cstring, cstring) if flexible else (string, string)
        body = s("consumer") + struct.pack(">i", 3) + ns("range") + ns("m-1")
        body += struct.pack(">q", 1700000000000) if v >= 2 else b""
        members = [member(v, "m-1"), member(v, "m-2")]
        body += (uvarint(len(members) + 1) if flexible else struct.pack(">i", len(members))) + b"".join(members)
        yield v, body + (tags(UNKNOWN) if flexible else b"")


def transaction_log_values():
    partitions0 = struct.pack(">i", 1) + string("orders") + struct.pack(">iii", 2, 0, 3)
    yield 0, struct.pack(">qhib", 5, 1, 60000, 1) + partitions0 + struct.pack(">qq", 10, 9)
    yield 0, struct.pack(">qhib", 5, 1, 60000, 0) + struct.pack(">i", -1) + struct.pack(">qq", 10, 9)  # null
    partitions1 = uvarint(2) + cstring("orders") + uvarint(3) + struct.pack(">ii", 0, 3) + tags()
    known = [(0, struct.pack(">q", 4)), (1, struct.pack(">q", -1)), (2, struct.pack(">h", 2))]
    yield 1, struct.pack(">qhib", 5, 1, 60000, 1) + partitions1 + struct.pack(">qq", 10, 9) + tags(*known, UNKNOWN)


@pytest.mark.parametrize("version,body", list(offset_commit_values()))
def test_offset_commit_value_every_version(version, body):
    data = struct.pack(">h", version) + body
    v = ConsumerOffsets.OffsetCommitValue.from_bytes(data)
    assert v.version == version and v.body.offset == 42 and v.body.commit_timestamp == 1000
    # a field its version lacks is None
    assert v.body.leader_epoch == (7 if version >= 3 else None)
    assert v.body.expire_timestamp == (5000 if version == 1 else None)
    assert v.to_bytes() == data
    if version == 4:
        assert [(f.tag, f.data) for f in v.body.tagged_fields.fields] == [UNKNOWN]


@pytest.mark.parametrize("version,body", list(group_metadata_values()))
def test_group_metadata_value_every_version(version, body):
    data = struct.pack(">h", version) + body
    v = ConsumerOffsets.GroupMetadataValue.from_bytes(data)
    assert v.body.protocol_type.value == "consumer" and v.body.generation == 3
    assert [m.member_id.value for m in v.body.members] == ["m-1", "m-2"]
    assert v.body.members[0].subscription.value == b"\x00\x01sub"
    assert v.to_bytes() == data
    if version == 4:  # unknown tags kept in the group and in each member
        assert [(f.tag, f.data) for f in v.body.tagged_fields.fields] == [UNKNOWN]
        assert [(f.tag, f.data) for f in v.body.members[1].tagged_fields.fields] == [UNKNOWN]


@pytest.mark.parametrize("version,body", list(transaction_log_values()))
def test_transaction_log_value_every_version(version, body):
    data = struct.pack(">h", version) + body
    v = TransactionLog.TransactionLogValue.from_bytes(data)
    assert v.body.producer_id == 5 and v.to_bytes() == data
    parts = v.body.transaction_partitions
    if int(v.body.transaction_status) == 0:
        assert parts is None  # written as null when the state is Empty
    else:
        assert [(p.topic.value, p.partition_ids) for p in parts] == [("orders", [0, 3])]
    if version == 1:
        assert [f.tag for f in v.body.tagged_fields.fields] == [0, 1, 2, 7]
        # the tags Kafka names, by name; a tag the record leaves out has Kafka's default
        assert (v.body.previous_producer_id, v.body.next_producer_id, v.body.client_transaction_version,
                v.body.next_producer_epoch) == (4, -1, 2, -1)
    else:
        assert v.body.tagged_fields is None and v.body.previous_producer_id == -1


def subscriptions():
    owned = struct.pack(">i", 1) + string("orders") + struct.pack(">iii", 2, 0, 3)
    yield 0, struct.pack(">i", 1) + string("orders") + blob(b"ud")
    yield 1, struct.pack(">i", 1) + string("orders") + struct.pack(">i", -1) + owned
    yield 2, struct.pack(">i", 1) + string("orders") + struct.pack(">i", -1) + owned + struct.pack(">i", 7)
    yield 3, struct.pack(">i", 1) + string("orders") + struct.pack(">i", -1) + owned + struct.pack(">i", 7) + string("r1")


@pytest.mark.parametrize("version,body", list(subscriptions()))
def test_consumer_protocol_subscription_every_version(version, body):
    from kafkacodec.generated.consumer_protocol import ConsumerProtocol
    data = struct.pack(">h", version) + body
    sub = ConsumerProtocol.from_bytes(data)
    assert [t.value for t in sub.body.topics] == ["orders"] and sub.to_bytes() == data
    assert getattr(sub.body, "generation_id", 7) == 7
    assignment = struct.pack(">hi", version, 1) + string("orders") + struct.pack(">iii", 2, 0, 3) + blob(b"")
    a = ConsumerProtocol.Assignment.from_bytes(assignment)
    assert a.assigned_partitions[0].partitions == [0, 3] and a.to_bytes() == assignment


def test_keys_name_the_record_type():
    commit = struct.pack(">h", 1) + string("g") + string("t") + struct.pack(">i", 4)
    group = struct.pack(">h", 2) + string("g")
    assert ConsumerOffsets.from_bytes(commit).key.partition == 4
    assert ConsumerOffsets.from_bytes(commit).to_bytes() == commit
    assert ConsumerOffsets.from_bytes(group).key.group.value == "g"
    newer = struct.pack(">h", 9) + b"\x00\x01x"  # 4.0's early-access share group type, gone in 4.1: kept raw
    assert ConsumerOffsets.from_bytes(newer).key == b"\x00\x01x"
    assert decode_group_record(newer, b"\x00\x00").value == b"\x00\x00"
    tx = struct.pack(">h", 0) + string("tx-1")
    assert TransactionLog.from_bytes(tx).transactional_id.value == "tx-1"
    assert TransactionLog.from_bytes(tx).to_bytes() == tx


def test_control_records():
    key = struct.pack(">hh", 0, 0)
    assert ControlRecord.from_bytes(key).type == ControlRecord.ControlType.abort
    marker = ControlRecord.EndTransactionMarker.from_bytes(struct.pack(">hi", 0, 17))
    assert marker.coordinator_epoch == 17
    leader = struct.pack(">hi", 0, 3) + uvarint(3) + struct.pack(">i", 1) + tags() + struct.pack(">i", 3) + tags() \
        + uvarint(2) + struct.pack(">i", 3) + tags() + tags(UNKNOWN)
    v = ControlRecord.LeaderChangeMessage.from_bytes(leader)
    assert [x.voter_id for x in v.voters] == [1, 3] and [x.voter_id for x in v.granting_voters] == [3]
    assert v.to_bytes() == leader
    voters = struct.pack(">h", 0) + uvarint(2) + struct.pack(">i", 1) + bytes(range(16)) + uvarint(2) \
        + cstring("CONTROLLER") + cstring("c1.example") + struct.pack(">H", 9093) + tags() \
        + struct.pack(">hh", 0, 1) + tags() + tags() + tags()
    r = ControlRecord.VotersRecord.from_bytes(voters)
    assert r.voters[0].endpoints[0].port == 9093 and r.voters[0].kraft_version_feature.max_supported_version == 1
    assert r.to_bytes() == voters
    for cls, data in ((ControlRecord.SnapshotHeaderRecord, struct.pack(">hq", 0, 1700000000000) + tags()),
                      (ControlRecord.SnapshotFooterRecord, struct.pack(">h", 0) + tags()),
                      (ControlRecord.KraftVersionRecord, struct.pack(">hh", 0, 1) + tags())):
        assert cls.from_bytes(data).to_bytes() == data
    with pytest.raises(Exception):
        ControlRecord.from_bytes(struct.pack(">hh", -1, 0))  # Kafka rejects a negative key version


def test_committed_offsets_latest_wins_tombstones_delete():
    def rec(o, group, offset):
        k = struct.pack(">h", 1) + string(group) + string("t") + struct.pack(">i", 0)
        v = None if offset is None else struct.pack(">hqi", 3, offset, -1) + string("") + struct.pack(">q", o)
        return o, k, v
    got = committed_offsets([rec(0, "a", 5), rec(1, "b", 9), rec(2, "a", 7), rec(3, "b", None)])
    assert {k: c.offset for k, c in got.items()} == {("a", "t", 0): 7}
    future = (4, rec(4, "a", 8)[1], struct.pack(">h", 9) + b"\x00" * 20)  # a value version not known here
    assert committed_offsets([rec(0, "a", 5), future])[("a", "t", 0)].offset == 5


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    write_sample(root)
    return {(p.topic, p.partition): p for p in logdir.open_log_dir(root).partitions}


def test_sample_consumer_offsets(sample):
    got = partition_committed_offsets(sample[("__consumer_offsets", 0)])
    assert {k: c.offset for k, c in got.items()} == {
        ("billing", "payments", 0): 50, ("analytics", "clicks", 0): 300, ("analytics", "clicks", 1): 75}


def test_sample_transactions_and_read_committed(sample):
    payments = sample[("payments", 0)]
    txns = partition_transactions(payments)
    assert [t.outcome for t in txns].count("ABORT") == 2 and txns[-1].outcome == "OPEN"
    assert [(a, b) for _, a, b in aborted_ranges(payments)] == [(t.first_offset, t.end_offset) for t in txns
                                                                  if t.outcome == "ABORT"]
    seen = [r.offset for _, r in read_committed(payments)]
    everything = [r.offset for _, r in partition_records(payments)]
    # two aborted transactions' records, four markers, and what is at or past the open transaction's first offset
    stable = txns[-1].first_offset
    assert len(everything) - len(seen) == 10 + 4 + len([o for o in everything if o >= stable]) and max(seen) < stable


def test_dump_decoders_print_kafkas_formats(sample):
    log = sample[("__consumer_offsets", 0)].segments[0].log
    out = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", "--offsets-decoder", str(log)],
                         capture_output=True, text=True, check=True).stdout
    assert ('key: {"type":"1","data":{"group":"billing","topic":"payments","partition":0}} '
            'payload: {"version":"3","data":{"offset":50,"leaderEpoch":0,"metadata":"","commitTimestamp":') in out
    assert 'key: {"type":"1","data":{"group":"legacy-app","topic":"clicks","partition":0}} payload: <DELETE>' in out
    # a consumer group's protocol bytes as their messages' JSON; bytes that do not decode stay base64
    assert ('"subscription":{"topics":["payments"],"userData":null,"ownedPartitions":[{"topic":"payments",'
            '"partitions":[0]}]},"assignment":{"assignedPartitions":[{"topic":"payments","partitions":[0]}],'
            '"userData":null}') in out
    assert '"subscription":"AAk=","assignment":"AAk="' in out
    assert '"expireTimestamp":1600086400000' in out  # the value version 1 commit
    log = sample[("__transaction_state", 0)].segments[0].log
    out = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", "--transaction-log-decoder", str(log)],
                         capture_output=True, text=True, check=True).stdout
    assert ('key: {"type":"0","data":{"transactionalId":"payments-tx-b"}} payload: {"version":"0","data":'
            '{"producerId":3000,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":3,'
            '"transactionPartitions":[{"topic":"payments","partitionIds":[0]}],"transactionLastUpdateTimestampMs":') in out


def test_transaction_log_decoder_writes_version_1_tagged_fields_that_are_not_their_default():
    """Kafka 4.1's JSON converter (JsonConverterGenerator: a tagged field only when it is not its
    default), for a TransactionLogValue v1 packed from TransactionLogValue.json's rules."""
    from kafkacodec.storage.dump_log.decoders import transaction_log
    from kafkacodec.storage.dump_log.common import Crash, Options
    from kafkacodec.storage.dump_log.tool import record_lines
    key = struct.pack(">h", 0) + string("tx")
    value = struct.pack(">hqhib", 1, 42, 5, 60000, 2) + uvarint(2) + cstring("t") + uvarint(2) \
        + struct.pack(">i", 4) + tags() + struct.pack(">qq", 1000, 900) \
        + tags((0, struct.pack(">q", 7)), (1, struct.pack(">q", -1)), (2, struct.pack(">h", 2)), UNKNOWN)

    from types import SimpleNamespace
    Rec = SimpleNamespace(offset=3, key=key, value=value)
    shown_key, payload = transaction_log(Rec)
    assert shown_key == '{"type":"0","data":{"transactionalId":"tx"}}'
    assert payload == ('{"version":"1","data":{"producerId":42,"previousProducerId":7,"producerEpoch":5,'
                       '"transactionTimeoutMs":60000,"transactionStatus":2,"transactionPartitions":[{"topic":"t",'
                       '"partitionIds":[4]}],"transactionLastUpdateTimestampMs":1000,"transactionStartTimestampMs":900,'
                       '"clientTransactionVersion":2}}')
    Rec.value = struct.pack(">h", 7) + value[2:]
    assert transaction_log(Rec) == ("Error at offset 3, skipping. Found an unknown record version 7 for 0 type", None)
    Rec.key = struct.pack(">h", 1) + string("tx")
    assert transaction_log(Rec) == ("Unknown record type 1 at offset 3, skipping.", None)
    from kafkacodec import write_batch
    data = write_batch([{"key": None, "value": value, "timestamp": 1}])
    with pytest.raises(Crash, match="at offset 0 has no key"):
        record_lines(data, Options(deep=True, print_data=True, parser=transaction_log), "x.log", 0)


def test_dump_prints_kraft_control_records_as_kafka_does():
    """Kafka 4.1's lines (DumpLogSegments.printControlRecord): the value's JSON after the type's
    label, names as Kafka's JSON converters write them (kRaftVersionFeature)."""
    from kafkacodec import write_batch
    from kafkacodec.storage.dump_log.common import Options
    from kafkacodec.storage.dump_log.tool import record_lines
    header = struct.pack(">hq", 0, 1700000000000) + tags()
    voters = struct.pack(">h", 0) + uvarint(2) + struct.pack(">i", 1) + bytes(range(16)) + uvarint(2) \
        + cstring("CONTROLLER") + cstring("c1") + struct.pack(">H", 9093) + tags() + struct.pack(">hh", 0, 1) \
        + tags() + tags() + tags()
    leader = struct.pack(">hi", 1, 3) + uvarint(3) + struct.pack(">i", 1) + tags() + struct.pack(">i", 3) + tags() \
        + uvarint(2) + struct.pack(">i", 3) + tags() + tags()
    data = write_batch([{"key": struct.pack(">hh", 0, 3), "value": header, "timestamp": 1},
                        {"key": struct.pack(">hh", 0, 6), "value": voters, "timestamp": 1},
                        {"key": struct.pack(">hh", 0, 2), "value": leader, "timestamp": 1},
                        {"key": struct.pack(">hh", 0, 9), "value": b"", "timestamp": 1}], is_control=True)
    lines, _ = record_lines(data, Options(deep=True, print_data=True), "x.log", 0)
    assert lines[0].endswith(' SnapshotHeader {"version":0,"lastContainedLogTimestamp":1700000000000}')
    assert lines[1].endswith(' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":'
                             '"AAECAwQFBgcICQoLDA0ODw","endpoints":[{"name":"CONTROLLER","host":"c1","port":9093}],'
                             '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}')
    # a version 1 message read at version 0, as Kafka reads it: each voter gains the zero directory id
    assert lines[2].endswith(' LeaderChange: {"version":1,"leaderId":3,"voters":[{"voterId":1,"voterDirectoryId":'
                             '"AAAAAAAAAAAAAAAAAAAAAA"},{"voterId":3,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}],'
                             '"grantingVoters":[{"voterId":3,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}]}')
    assert lines[3].endswith(" controlType: UNKNOWN(9)")


def consumer_group_records():
    """(key version, key, value) of each record type of the consumer group protocol (KIP-848),
    packed by hand; compact arrays and strings, a tagged section per struct."""
    uuid = bytes(range(16))
    group = string("g")
    member = string("g") + string("m-1")
    tp = uuid + uvarint(3) + struct.pack(">ii", 0, 1) + tags()
    yield 3, group, struct.pack(">hi", 0, 12) + tags((0, struct.pack(">q", 99)))  # a tag of a later Kafka kept
    racks = struct.pack(">i", 0) + uvarint(2) + cstring("rack-a") + tags()
    yield 4, group, struct.pack(">h", 0) + uvarint(2) + uuid + cstring("orders") + struct.pack(">i", 2) + uvarint(2) \
        + racks + tags() + tags()
    yield 5, member, struct.pack(">h", 0) + cstring(None) + cstring("rack-a") + cstring("client") + cstring("/10.0.0.1") \
        + uvarint(2) + cstring("orders") + cstring(None) + struct.pack(">i", 30000) + cstring("uniform") + tags(UNKNOWN)
    yield 6, group, struct.pack(">hi", 0, 12) + tags()
    yield 7, member, struct.pack(">h", 0) + uvarint(2) + tp + tags()
    yield 8, member, struct.pack(">hiib", 0, 12, 11, 0) + uvarint(2) + tp + uvarint(1) + tags()


@pytest.mark.parametrize("version,key,value", list(consumer_group_records()))
def test_consumer_group_protocol_records(version, key, value):
    k = struct.pack(">h", version) + key
    r = decode_group_record(k, value)
    assert r.key_version == version and r.value_version == 0
    assert not isinstance(r.value, (bytes, bytearray))
    assert ConsumerOffsets.from_bytes(k).to_bytes() == k
    from kafkacodec.codec.internal_topics import CONSUMER_GROUP_VALUES
    assert CONSUMER_GROUP_VALUES[version].from_bytes(value).to_bytes() == value
    assert r.key.group_id.value == "g"


def test_offsets_decoder_prints_consumer_group_records():
    from kafkacodec.storage.dump_log.decoders import offsets
    records = {v: (k, val) for v, k, val in consumer_group_records()}

    class R:
        def __init__(self, version):
            self.key, self.value, self.offset = struct.pack(">h", version) + records[version][0], records[version][1], 0
    key, payload = offsets(R(8))
    assert key == '{"type":"8","data":{"groupId":"g","memberId":"m-1"}}'
    assert payload == ('{"version":"0","data":{"memberEpoch":12,"previousMemberEpoch":11,"state":0,'
                       '"assignedPartitions":[{"topicId":"AAECAwQFBgcICQoLDA0ODw","partitions":[0,1]}],'
                       '"partitionsPendingRevocation":[]}}')
    key, _ = offsets(R(5))
    assert key == '{"type":"5","data":{"groupId":"g","memberId":"m-1"}}'
