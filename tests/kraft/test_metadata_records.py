"""KRaft metadata records, every type at every version Kafka 4.1 defines, packed here by hand
from Kafka's message-spec rules (flexible versions: unsigned varints, compact strings, bytes and
arrays as length plus one, a tagged-field section per struct), independent of the schema. Each
re-encodes byte for byte, unknown tagged fields included, and prints as Kafka's JSON converters
write it (expected JSON written here by hand, not derived)."""
import struct

import pytest

from kafkacodec.generated.metadata_record import MetadataRecord
from kafkacodec.storage.kraft.records import (TYPES, MetadataParseError, cluster_metadata, pack, read_record,
                                              record_json, to_text)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def s(text: str | None) -> bytes:
    return uvarint(0) if text is None else uvarint(len(text.encode()) + 1) + text.encode()


def b(data: bytes) -> bytes:
    return uvarint(len(data) + 1) + data


def arr(items, pack) -> bytes:
    return uvarint(0) if items is None else uvarint(len(items) + 1) + b"".join(pack(i) for i in items)


def i32s(items) -> bytes:
    return arr(items, lambda i: struct.pack(">i", i))


def tags(*fields) -> bytes:
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in fields)


U1, U2 = bytes(range(16)), bytes(range(16, 32))
J1, J2 = "AAECAwQFBgcICQoLDA0ODw", "EBESExQVFhcYGRobHB0eHw"  # the same UUIDs as Kafka prints them
UNKNOWN = (30, b"\x01\x02\x03")  # a tag of a later Kafka: kept, re-encoded, not printed


def endpoint(name, host, port, protocol):
    return s(name) + s(host) + struct.pack(">Hh", port, protocol) + tags()


def feature(name, low, high):
    return s(name) + struct.pack(">hh", low, high) + tags()


def register_broker(v):
    head = struct.pack(">i", 1) + (b"\x01" if v >= 2 else b"") + U1 + struct.pack(">q", 7)
    body = head + uvarint(2) + endpoint("PLAINTEXT", "h1", 9092, 0) + uvarint(2) + feature("metadata.version", 1, 27) \
        + s("r1") + b"\x00" + (b"\x01" if v >= 1 else b"")
    data = {"brokerId": 1, **({"isMigratingZkBroker": True} if v >= 2 else {}), "incarnationId": J1,
            "brokerEpoch": 7, "endPoints": [{"name": "PLAINTEXT", "host": "h1", "port": 9092, "securityProtocol": 0}],
            "features": [{"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 27}],
            "rack": "r1", "fenced": False, **({"inControlledShutdown": True} if v >= 1 else {})}
    if v >= 3:
        return body + tags((0, arr([U2], bytes))), {**data, "logDirs": [J2]}
    return body + tags(), data


def partition(v):
    body = struct.pack(">i", 4) + U1 + i32s([1, 2, 3]) + i32s([1, 2]) + i32s([]) + i32s([3]) + struct.pack(">iii", 1, 5, 9)
    data = {"partitionId": 4, "topicId": J1, "replicas": [1, 2, 3], "isr": [1, 2], "removingReplicas": [],
            "addingReplicas": [3], "leader": 1, "leaderRecoveryState": 1, "leaderEpoch": 5, "partitionEpoch": 9}
    if v >= 1:
        body += arr([U1, U2, U1], bytes)
        data["directories"] = [J1, J2, J1]
    fields = [(0, b"\x01")]
    if v >= 2:
        fields += [(1, i32s([2])), (2, i32s(None))]  # a null last-known ELR is its default: not printed
        data["eligibleLeaderReplicas"] = [2]
    return body + tags(*fields, UNKNOWN), data


def partition_change(v):
    fields = [(0, i32s([1])), (1, struct.pack(">i", -2)), (5, b"\x00")]  # leader -2 is "no change": not printed
    data = {"partitionId": 0, "topicId": J2, "isr": [1], "leaderRecoveryState": 0}
    if v >= 1:  # the spec lists directories (tag 8) before the ELR fields (tags 6 and 7)
        fields.append((8, arr([U1], bytes)))
        data["directories"] = [J1]
    if v >= 2:
        fields += [(6, i32s([3])), (7, i32s([4, 5]))]
        data.update(eligibleLeaderReplicas=[3], lastKnownElr=[4, 5])
    return struct.pack(">i", 0) + U2 + tags(*sorted(fields)), data


def broker_change(v):
    fields = [(0, b"\xff")]
    data = {"brokerId": 2, "brokerEpoch": 11, "fenced": -1}
    if v >= 1:
        fields.append((1, b"\x00"))  # its default: not printed
    if v >= 2:
        fields.append((2, arr([U2], bytes)))
        data["logDirs"] = [J2]
    return struct.pack(">iq", 2, 11) + tags(*fields), data


def cases():
    for v in range(4):
        yield (0, v, *register_broker(v))
    yield 1, 0, struct.pack(">iq", 3, 12) + tags(), {"brokerId": 3, "brokerEpoch": 12}
    yield 2, 0, s("orders") + U1 + tags(), {"name": "orders", "topicId": J1}
    for v in range(3):
        yield (3, v, *partition(v))
    yield 4, 0, b"\x02" + s("orders") + s("retention.ms") + s(None) + tags(), \
        {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": None}
    for v in range(3):
        yield (5, v, *partition_change(v))
    yield 7, 0, struct.pack(">iq", 1, 40) + tags(), {"id": 1, "epoch": 40}
    yield 8, 0, struct.pack(">iq", 1, 41) + tags(UNKNOWN), {"id": 1, "epoch": 41}
    yield 9, 0, U2 + tags(), {"topicId": J2}
    yield 10, 0, s("User:alice") + s("User:bob") + arr(["User:carol"], s) + struct.pack(">qqq", 1, 2, 3) + s("tok") \
        + tags(), {"owner": "User:alice", "requester": "User:bob", "renewers": ["User:carol"], "issueTimestamp": 1,
                   "maxTimestamp": 2, "expirationTimestamp": 3, "tokenId": "tok"}
    yield 11, 0, s("alice") + b"\x01" + b(b"salt") + b(b"\x00\xff") + b(b"") + struct.pack(">i", 4096) + tags(), \
        {"name": "alice", "mechanism": 1, "salt": "c2FsdA==", "storedKey": "AP8=", "serverKey": "", "iterations": 4096}
    yield 12, 0, s("metadata.version") + struct.pack(">h", 27) + tags(), {"name": "metadata.version", "featureLevel": 27}
    yield 14, 0, arr([("user", "alice"), ("client-id", None)], lambda e: s(e[0]) + s(e[1]) + tags()) \
        + s("producer_byte_rate") + struct.pack(">d", 1e7) + b"\x00" + tags(), \
        {"entity": [{"entityType": "user", "entityName": "alice"}, {"entityType": "client-id", "entityName": None}],
         "key": "producer_byte_rate", "value": 1e7, "remove": False}
    yield 15, 0, struct.pack(">iqq", 1, 5, 2000) + tags(), {"brokerId": 1, "brokerEpoch": 5, "nextProducerId": 2000}
    for v in range(3):
        yield (17, v, *broker_change(v))
    yield 18, 0, U1 + b"\x02" + s("orders") + b"\x03" + s("User:alice") + s("*") + b"\x03\x03" + tags(), \
        {"id": J1, "resourceType": 2, "resourceName": "orders", "patternType": 3, "principal": "User:alice",
         "host": "*", "operation": 3, "permissionType": 3}
    yield 19, 0, U1 + tags(), {"id": J1}
    yield 20, 0, tags(), {}
    yield 21, 0, b"\x02" + tags(), {"zkMigrationState": 2}
    yield 22, 0, s("alice") + b"\x02" + tags(), {"name": "alice", "mechanism": 2}
    yield 23, 0, tags((0, s("migration"))), {"name": "migration"}
    yield 24, 0, tags(), {}
    yield 25, 0, tags(), {}  # no reason given: its default, null
    yield 26, 0, s("tok") + tags(), {"tokenId": "tok"}
    yield 27, 0, struct.pack(">i", 3000) + U2 + b"\x00" + uvarint(2) + endpoint("CONTROLLER", "c1", 9093, 0) \
        + uvarint(2) + feature("kraft.version", 0, 1) + tags(), \
        {"controllerId": 3000, "incarnationId": J2, "zkMigrationReady": False,
         "endPoints": [{"name": "CONTROLLER", "host": "c1", "port": 9093, "securityProtocol": 0}],
         "features": [{"name": "kraft.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}]}
    yield 28, 0, s("orders") + tags(), {"topicName": "orders"}


CASES = list(cases())


def framed(api_key: int, version: int, body: bytes) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(version) + body


def test_every_type_and_version_is_covered():
    assert sorted((k, v) for k, v, _, _ in CASES) == sorted((k, v) for k, (_, latest, _) in TYPES.items()
                                                             for v in range(latest + 1))


@pytest.mark.parametrize("api_key,version,body,data", CASES, ids=[f"{TYPES[c[0]][0]}-v{c[1]}" for c in CASES])
def test_record_reads_reencodes_and_prints_as_kafka(api_key, version, body, data):
    value = framed(api_key, version, body)
    record = MetadataRecord.from_bytes(value)
    assert not isinstance(record.body, (bytes, bytearray))
    assert record.to_bytes() == value
    key, version_read, decoded = read_record(value)
    assert (key, version_read) == (api_key, version)
    obj = record_json(key, version_read, decoded)
    assert obj["type"] == TYPES[api_key][0] and obj["version"] == version
    assert {k: getattr(v, "value", v) for k, v in obj["data"].items()} == data
    assert list(obj["data"]) == list(data)  # Kafka's field order


@pytest.mark.parametrize("api_key,version,body,data", CASES, ids=[f"{TYPES[c[0]][0]}-v{c[1]}" for c in CASES])
def test_record_packs_back_from_its_json(api_key, version, body, data):
    """pack, from the generated classes' facts, is record_json's inverse: the same JSON, and the
    same bytes where the record is as Kafka writes it (no unknown tag, no tag at its default)."""
    value = framed(api_key, version, body)
    obj = record_json(*read_record(value))
    packed = pack(obj)
    assert record_json(*read_record(packed)) == obj
    decoded = MetadataRecord.from_bytes(value).body
    named = {tag: (name, default) for name, (tag, default) in getattr(decoded, "_tagged", {}).items()}
    held = [f.tag for f in decoded.tagged_fields.fields]
    if all(t in named and getattr(decoded, named[t][0]) != named[t][1] for t in held):
        assert packed == value


def test_pack_leaves_out_a_tag_the_version_does_not_define():
    """The ELR tags are version 2's: at version 1, Kafka's reader would refuse them."""
    data = {"partitionId": 0, "topicId": "AAECAwQFBgcICQoLDA0ODw", "replicas": [1], "isr": [1],
            "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0,
            "directories": ["AAAAAAAAAAAAAAAAAAAAAA"], "eligibleLeaderReplicas": [2, 3]}
    at_1 = MetadataRecord.from_bytes(pack({"type": "PARTITION_RECORD", "version": 1, "data": data})).body
    assert at_1.tagged_fields.fields == []
    at_2 = MetadataRecord.from_bytes(pack({"type": "PARTITION_RECORD", "version": 2, "data": data})).body
    assert at_2.eligible_leader_replicas == [2, 3]


def test_a_uuid_of_another_length_is_refused_on_write():
    from kafkacodec.runtime.errors import EncodeError
    record = MetadataRecord.from_bytes(framed(*CASES[[c[:2] for c in CASES].index((3, 1))][:3]))
    record.body.directories = [b"abc"]
    with pytest.raises(EncodeError, match="must be 16 bytes, not 3"):
        record.to_bytes()


def test_the_printed_line_is_kafkas():
    class Record:
        offset = 42
        value = framed(14, 0, CASES[[c[0] for c in CASES].index(14)][2])
    assert cluster_metadata(Record)[1] == (
        '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},'
        '{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1.0E7,"remove":false}}')
    assert to_text(record_json(*read_record(framed(2, 0, s("orders") + U1 + tags())))) == \
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"AAECAwQFBgcICQoLDA0ODw"}}'


@pytest.mark.parametrize("value,message", [
    (b"", "Error while reading frame version"),
    (uvarint(0), "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview "
                 "release of KRaft in 2.8 to newer versions are not supported."),
    (uvarint(2), "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 "
                 "is supported)"),
    (uvarint(40000), "Value for frame version was too large."),
    (b"\x80\x80\x80\x80\x80\x01", "Error while reading frame version"),
    (uvarint(1), "Error while reading type"),
    (uvarint(1) + uvarint(2), "Error while reading version"),
    (framed(99, 0, b""), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99"),
    (framed(13, 0, b""), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 13"),
    (framed(2, 1, s("orders") + U1 + tags()), "Failed to deserialize record with type 2"),
    (framed(2, 0, s("orders") + U1), "Failed to deserialize record with type 2"),
    (framed(2, 0, s("orders") + U1 + tags() + b"xyz"), "Found 3 byte(s) of garbage after 2"),
])
def test_what_kafka_cannot_read_is_said_in_its_words(value, message):
    with pytest.raises(MetadataParseError) as err:
        read_record(value)
    assert str(err.value) == message

    class Record:
        offset = 7
    Record.value = value
    assert cluster_metadata(Record) == (None, f"Error at 7, skipping. {message}")


def test_dump_log_cluster_metadata_decoder_prints_each_record(tmp_path):
    """Kafka 4.1 (DumpLogSegments.scala, ClusterMetadataLogMessageParser): no key, the payload
    is the record's JSON or the error line; --json gives the same objects."""
    import json
    import subprocess
    import sys

    from kafkacodec.storage.change.writer import PartitionWriter
    part = tmp_path / "__cluster_metadata-0"
    topic = framed(2, 0, s("orders") + U1 + tags())
    with PartitionWriter(part) as w:
        w.append([{"key": None, "value": topic, "timestamp": 5}, {"key": None, "value": framed(99, 0, b""), "timestamp": 5}])
    log = part / "00000000000000000000.log"
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", "--cluster-metadata-decoder",
                          "--files", str(log)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-2].endswith(' payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"orders",'
                              '"topicId":"AAECAwQFBgcICQoLDA0ODw"}}') and "key:" not in lines[-2]
    assert lines[-1].endswith(" payload: Error at 1, skipping. org.apache.kafka.common.errors."
                              "UnsupportedVersionException: Unknown metadata id 99")
    as_json = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", "--json", "--cluster-metadata-decoder",
                              str(log)], capture_output=True, text=True)
    (batch,) = map(json.loads, as_json.stdout.splitlines())
    assert [r["decoded"] for r in batch["records"]] == [
        {"type": "TOPIC_RECORD", "version": 0, "data": {"name": "orders", "topicId": J1}},
        {"error": "Error at 1, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: "
                  "Unknown metadata id 99"}]
