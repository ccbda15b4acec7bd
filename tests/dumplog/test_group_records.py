"""The records Kafka 4 adds to __consumer_offsets (share groups, consumer groups' regular
expressions, streams groups), every type at every version Kafka 4.1.1 defines, packed here by
hand from the message specs' rules (keys in the classic encoding after an int16 record type;
values after an int16 version, flexible: compact strings and arrays, a tagged-field section per
struct, a nullable struct after an int8 marker), independent of the schemas. Each decodes,
re-encodes byte for byte, unknown tags included, and prints as Kafka 4.1's offsets decoder
prints it (the JSON below written by hand, in the specs' field order)."""
import json
import struct
from types import SimpleNamespace

import pytest

from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.storage.dump_log.decoders import decoded_json, offsets
from kafkacodec.storage.dump_log.record_text import MissingKey
from kafkacodec.codec.internal_topics import GROUP_RECORD_VALUES, decode_group_record
from tests.dumplog.test_internal_topics import cstring, string, tags, uvarint

U1, U2 = bytes(range(16)), bytes(range(16, 32))
J1, J2 = "AAECAwQFBgcICQoLDA0ODw", "EBESExQVFhcYGRobHB0eHw"  # the same UUIDs as Kafka prints them
UNKNOWN = (5, b"\x01\x02\x03")  # a tag Kafka 4.1 does not define: kept, re-encoded, not printed


def arr(items, pack) -> bytes:
    return uvarint(len(items) + 1) + b"".join(pack(i) for i in items)


def i32s(items) -> bytes:
    return arr(items, lambda i: struct.pack(">i", i))


def i16s(items) -> bytes:
    return arr(items, lambda i: struct.pack(">h", i))


def strings(items) -> bytes:
    return arr(items, cstring)


def topic_partitions(topic_id: bytes, parts) -> bytes:
    return topic_id + i32s(parts) + tags()


def tasks(*subtopologies) -> bytes:
    return arr(subtopologies, lambda t: cstring(t[0]) + i32s(t[1]) + tags())


def tasks_json(*subtopologies) -> list:
    return [{"subtopologyId": s, "partitions": p} for s, p in subtopologies]


def topic_info(name, partitions, replication, configs) -> bytes:
    return cstring(name) + struct.pack(">ih", partitions, replication) \
        + arr(configs, lambda c: cstring(c[0]) + cstring(c[1]) + tags()) + tags()


GROUP = string("g")
MEMBER = string("g") + string("m-1")
GROUP_JSON = {"groupId": "g"}
MEMBER_JSON = {"groupId": "g", "memberId": "m-1"}


def cases():
    """(name, record type, key after the type, its JSON, value after the version, its JSON)."""
    yield "share_member_metadata", 10, MEMBER, MEMBER_JSON, \
        cstring(None) + cstring("client") + cstring("/10.0.0.1") + strings(["orders", "clicks"]) + tags(UNKNOWN), \
        {"rackId": None, "clientId": "client", "clientHost": "/10.0.0.1", "subscribedTopicNames": ["orders", "clicks"]}
    yield "share_metadata", 11, GROUP, GROUP_JSON, struct.pack(">iq", 5, -123456789) + tags(), \
        {"epoch": 5, "metadataHash": -123456789}
    yield "share_target_assignment_metadata", 12, GROUP, GROUP_JSON, struct.pack(">i", 5) + tags(), \
        {"assignmentEpoch": 5}
    yield "share_target_assignment_member", 13, MEMBER, MEMBER_JSON, \
        arr([U1], lambda t: topic_partitions(t, [0, 1])) + tags(), \
        {"topicPartitions": [{"topicId": J1, "partitions": [0, 1]}]}
    yield "share_current_member_assignment", 14, MEMBER, MEMBER_JSON, \
        struct.pack(">iib", 7, 6, 0) + arr([U2], lambda t: topic_partitions(t, [2])) + tags(), \
        {"memberEpoch": 7, "previousMemberEpoch": 6, "state": 0,
         "assignedPartitions": [{"topicId": J2, "partitions": [2]}]}
    yield "share_state_partition_metadata", 15, GROUP, GROUP_JSON, \
        arr([U1], lambda t: t + cstring("orders") + i32s([0, 1]) + tags()) + arr([], bytes) \
        + arr([U2], lambda t: t + cstring("old") + tags()) + tags(), \
        {"initializingTopics": [{"topicId": J1, "topicName": "orders", "partitions": [0, 1]}],
         "initializedTopics": [], "deletingTopics": [{"topicId": J2, "topicName": "old"}]}
    yield "regular_expression", 16, string("g") + string("orders-.*"), \
        {"groupId": "g", "regularExpression": "orders-.*"}, \
        strings(["orders-1", "orders-2"]) + struct.pack(">qq", 42, 1700000000000) + tags(), \
        {"topics": ["orders-1", "orders-2"], "version": 42, "timestamp": 1700000000000}
    # tag 0 is Kafka 4.2's validated topology epoch: unknown to 4.1, kept raw and not printed
    yield "streams_metadata", 17, GROUP, GROUP_JSON, struct.pack(">iq", 3, 99) + tags((0, struct.pack(">i", 3))), \
        {"epoch": 3, "metadataHash": 99}
    member = cstring(None) + cstring("r1") + cstring("c") + cstring("/h") + struct.pack(">ii", 30000, 2) \
        + cstring("p-1")
    member_json = {"instanceId": None, "rackId": "r1", "clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": 30000,
                   "topologyEpoch": 2, "processId": "p-1"}
    yield "streams_member_metadata", 19, MEMBER, MEMBER_JSON, \
        member + b"\x01" + cstring("h1") + struct.pack(">H", 65535) + tags() \
        + arr([("zone", "a")], lambda t: cstring(t[0]) + cstring(t[1]) + tags()) + tags(), \
        {**member_json, "userEndpoint": {"host": "h1", "port": 65535}, "clientTags": [{"key": "zone", "value": "a"}]}
    yield "streams_member_metadata_no_endpoint", 19, MEMBER, MEMBER_JSON, member + b"\xff" + arr([], bytes) + tags(), \
        {**member_json, "userEndpoint": None, "clientTags": []}
    yield "streams_target_assignment_metadata", 20, GROUP, GROUP_JSON, struct.pack(">i", 4) + tags(), \
        {"assignmentEpoch": 4}
    yield "streams_target_assignment_member", 21, MEMBER, MEMBER_JSON, \
        tasks(("0", [0, 1])) + tasks() + tasks(("1", [3])) + tags(), \
        {"activeTasks": tasks_json(("0", [0, 1])), "standbyTasks": [], "warmupTasks": tasks_json(("1", [3]))}
    yield "streams_current_member_assignment", 22, MEMBER, MEMBER_JSON, \
        struct.pack(">iib", 5, 4, 1) + tasks(("0", [0])) + tasks(("1", [1])) + tasks() + tasks(("2", [2, 5])) \
        + tasks() + tasks(("3", [])) + tags(), \
        {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 1, "activeTasks": tasks_json(("0", [0])),
         "standbyTasks": tasks_json(("1", [1])), "warmupTasks": [],
         "activeTasksPendingRevocation": tasks_json(("2", [2, 5])), "standbyTasksPendingRevocation": [],
         "warmupTasksPendingRevocation": tasks_json(("3", []))}
    subtopology = cstring("0") + strings(["in"]) + strings(["in-.*"]) \
        + arr([("app-store-changelog", 0, 3, [("cleanup.policy", "compact")])], lambda t: topic_info(*t)) \
        + strings(["app-rep"]) + arr([("app-rep", 4, -1, [])], lambda t: topic_info(*t)) \
        + arr([([0], [0], [0])], lambda g: i16s(g[0]) + i16s(g[1]) + i16s(g[2]) + tags()) + tags(UNKNOWN)
    yield "streams_topology", 23, GROUP, GROUP_JSON, struct.pack(">i", 1) + uvarint(2) + subtopology + tags(), \
        {"epoch": 1, "subtopologies": [{
            "subtopologyId": "0", "sourceTopics": ["in"], "sourceTopicRegex": ["in-.*"],
            "stateChangelogTopics": [{"name": "app-store-changelog", "partitions": 0, "replicationFactor": 3,
                                      "topicConfigs": [{"key": "cleanup.policy", "value": "compact"}]}],
            "repartitionSinkTopics": ["app-rep"],
            "repartitionSourceTopics": [{"name": "app-rep", "partitions": 4, "replicationFactor": -1,
                                         "topicConfigs": []}],
            "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [0], "repartitionSourceTopics": [0]}]}]}


CASES = list(cases())


def record(kind: int, key: bytes, value: bytes | None, offset: int = 5):
    return SimpleNamespace(key=struct.pack(">h", kind) + key, value=value, offset=offset)


def text(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def test_every_record_type_is_covered():
    assert sorted({c[1] for c in CASES}) == sorted(GROUP_RECORD_VALUES) == [*range(10, 18), *range(19, 24)]


@pytest.mark.parametrize("name,kind,key,key_json,value,value_json", CASES, ids=[c[0] for c in CASES])
def test_record_reads_reencodes_and_prints_as_kafka(name, kind, key, key_json, value, value_json):
    r = record(kind, key, struct.pack(">h", 0) + value)
    k = ConsumerOffsets.from_bytes(r.key)
    assert not isinstance(k.key, (bytes, bytearray)) and k.to_bytes() == r.key
    v = GROUP_RECORD_VALUES[kind].from_bytes(r.value)
    assert not isinstance(v.body, (bytes, bytearray)) and v.to_bytes() == r.value
    assert decode_group_record(r.key, r.value).value == v.body
    assert offsets(r) == ('{"type":"%d","data":%s}' % (kind, text(key_json)),
                          '{"version":"0","data":%s}' % text(value_json))
    assert decoded_json(r, "offsets") == {"keyVersion": kind, "key": key_json, "valueVersion": 0, "value": value_json}


def test_unknown_tags_are_kept_raw():
    (case,) = [c for c in CASES if c[0] == "streams_topology"]
    v = GROUP_RECORD_VALUES[23].from_bytes(struct.pack(">h", 0) + case[4])
    assert [(f.tag, f.data) for f in v.body.subtopologies[0].tagged_fields.fields] == [UNKNOWN]
    (case,) = [c for c in CASES if c[0] == "streams_metadata"]
    v = GROUP_RECORD_VALUES[17].from_bytes(struct.pack(">h", 0) + case[4])
    assert [(f.tag, f.data) for f in v.body.tagged_fields.fields] == [(0, b"\x00\x00\x00\x03")]


def test_a_printed_line_written_out():
    r = record(13, MEMBER, struct.pack(">h", 0) + arr([U1], lambda t: topic_partitions(t, [0, 1])) + tags())
    assert offsets(r) == ('{"type":"13","data":{"groupId":"g","memberId":"m-1"}}',
                          '{"version":"0","data":{"topicPartitions":[{"topicId":"AAECAwQFBgcICQoLDA0ODw",'
                          '"partitions":[0,1]}]}}')
    assert offsets(record(11, GROUP, None)) == ('{"type":"11","data":{"groupId":"g"}}', "<DELETE>")


ERRORS = [
    (9, GROUP, b"\x00\x00", "Unknown record type 9 at offset 5, skipping."),  # 4.0's early access, gone in 4.1
    (18, GROUP, b"\x00\x00", "Unknown record type 18 at offset 5, skipping."),
    (24, b"", None, "Unknown record type 24 at offset 5, skipping."),
    (10, MEMBER, struct.pack(">h", 1), "Error at offset 5, skipping. Found an unknown record version 1 for 10 type"),
    (23, GROUP, struct.pack(">h", -1), "Error at offset 5, skipping. Found an unknown record version -1 for 23 type"),
    (0, string("g") + string("t") + struct.pack(">i", 0), struct.pack(">hq", 1, 0),  # the legacy commit: version 0 only
     "Error at offset 5, skipping. Found an unknown record version 1 for 0 type"),
    (11, GROUP, b"\x00", "Error at offset 5, skipping. Could not read version from value's buffer."),
]


@pytest.mark.parametrize("kind,key,value,line", ERRORS,
                         ids=[f"type {e[0]}: {e[3].partition('skipping. ')[2] or 'unknown'}" for e in ERRORS])
def test_what_kafka_cannot_read_is_said_in_its_words(kind, key, value, line):
    assert offsets(record(kind, key, value)) == (line, None)
    assert decoded_json(record(kind, key, value), "offsets") == {"error": line}


def test_damaged_keys_and_values_say_which_buffer():
    short = SimpleNamespace(key=b"\x00", value=None, offset=5)
    assert offsets(short) == ("Error at offset 5, skipping. Could not read version from key's buffer.", None)
    key, _ = offsets(record(10, string("g"), None))  # the member id is missing
    assert key.startswith("Error at offset 5, skipping. Could not read record with version 10 from key's buffer "
                          "due to: ")
    key, _ = offsets(record(11, GROUP, struct.pack(">hi", 0, 5)))  # the hash and the tags are missing
    assert key.startswith("Error at offset 5, skipping. Could not read record with version 0 from value's buffer "
                          "due to: ")
    with pytest.raises(MissingKey):
        offsets(SimpleNamespace(key=None, value=b"", offset=5))


def test_dump_log_and_dump_print_the_decoded_records(tmp_path):
    """Kafka 4.1 (DumpLogSegments.scala, OffsetsMessageParser): a streams group's topology and a
    share group member's tombstone, as any other record type of the topic."""
    from click.testing import CliRunner

    from kafkacodec.cli import main
    from kafkacodec.storage.change.writer import PartitionWriter
    (topology,) = [c for c in CASES if c[0] == "streams_topology"]
    part = tmp_path / "__consumer_offsets-0"
    with PartitionWriter(part) as w:
        w.append([{"key": struct.pack(">h", 23) + GROUP, "value": struct.pack(">h", 0) + topology[4], "timestamp": 5},
                  {"key": struct.pack(">h", 10) + MEMBER, "value": None, "timestamp": 6}])
    log = str(part / "00000000000000000000.log")
    run = CliRunner().invoke(main, ["dump-log", "--offsets-decoder", "--files", log])
    assert run.exit_code == 0, run.output
    lines = run.stdout.splitlines()
    assert lines[-2].endswith(' key: {"type":"23","data":{"groupId":"g"}} payload: {"version":"0","data":%s}'
                              % text(topology[5]))
    assert lines[-1].endswith(' key: {"type":"10","data":{"groupId":"g","memberId":"m-1"}} payload: <DELETE>')
    run = CliRunner().invoke(main, ["dump", "--offsets-decoder", log])
    assert run.exit_code == 0 and run.stdout.splitlines()[-2:] == lines[-2:]
