"""`__share_group_state` records (the share coordinator's), both types at every version Kafka
4.1.1 defines, packed here by hand from the message specs' rules: each decodes, re-encodes byte
for byte, unknown tags included, and prints as Kafka 4.1's share-group-state decoder prints it;
the lines Kafka prints for what it cannot read; dump-log and dump with the decoder."""
import json
import struct
from types import SimpleNamespace

import pytest

from kafkacodec.generated.share_group_state import ShareGroupState
from kafkacodec.storage.dump_log.decoders import decoded_json, share_group_state
from kafkacodec.codec.internal_topics import SHARE_STATE_VALUES
from tests.dumplog.test_internal_topics import string, tags, uvarint

U1 = bytes(range(16))
J1 = "AAECAwQFBgcICQoLDA0ODw"
KEY = string("g") + U1 + struct.pack(">i", 3)
KEY_JSON = {"groupId": "g", "topicId": J1, "partition": 3}
# tag 0 is Kafka 4.2's count of offsets whose delivery is complete: unknown to 4.1, kept raw, not printed
LATER = (0, struct.pack(">i", 17))


def batches(*items) -> bytes:
    return uvarint(len(items) + 1) + b"".join(struct.pack(">qqbh", *i) + tags() for i in items)


def batches_json(*items) -> list:
    return [{"firstOffset": a, "lastOffset": b, "deliveryState": s, "deliveryCount": c} for a, b, s, c in items]


CASES = [
    ("snapshot", 0, struct.pack(">iiiqqq", 4, 2, 9, 100, 1700000000000, 1700000005000)
     + batches((100, 109, 0, 1), (110, 119, 2, 3)) + tags(LATER),
     {"snapshotEpoch": 4, "stateEpoch": 2, "leaderEpoch": 9, "startOffset": 100, "createTimestamp": 1700000000000,
      "writeTimestamp": 1700000005000, "stateBatches": batches_json((100, 109, 0, 1), (110, 119, 2, 3))}),
    ("update", 1, struct.pack(">iiq", 4, 9, -1) + batches((120, 120, 4, 5)) + tags(),
     {"snapshotEpoch": 4, "leaderEpoch": 9, "startOffset": -1, "stateBatches": batches_json((120, 120, 4, 5))}),
]


def record(kind: int, value: bytes | None, key: bytes = KEY, offset: int = 8):
    return SimpleNamespace(key=struct.pack(">h", kind) + key, value=value, offset=offset)


def test_every_record_type_is_covered():
    assert sorted(c[1] for c in CASES) == sorted(SHARE_STATE_VALUES) == [0, 1]


@pytest.mark.parametrize("name,kind,value,value_json", CASES, ids=[c[0] for c in CASES])
def test_record_reads_reencodes_and_prints_as_kafka(name, kind, value, value_json):
    r = record(kind, struct.pack(">h", 0) + value)
    k = ShareGroupState.from_bytes(r.key)
    assert k.type == kind and k.to_bytes() == r.key and k.key.partition == 3
    v = SHARE_STATE_VALUES[kind].from_bytes(r.value)
    assert not isinstance(v.body, (bytes, bytearray)) and v.to_bytes() == r.value
    dumps = json.dumps(value_json, separators=(",", ":"))
    assert share_group_state(r) == ('{"type":"%d","data":{"groupId":"g","topicId":"%s","partition":3}}' % (kind, J1),
                                    '{"version":"0","data":%s}' % dumps)
    assert decoded_json(r, "share-group-state") == {"keyVersion": kind, "key": KEY_JSON, "valueVersion": 0,
                                                    "value": value_json}


def test_unknown_tags_are_kept_raw():
    v = SHARE_STATE_VALUES[0].from_bytes(struct.pack(">h", 0) + CASES[0][2])
    assert [(f.tag, f.data) for f in v.body.tagged_fields.fields] == [LATER]


@pytest.mark.parametrize("kind,value,line", [
    (0, None, None),
    (2, b"\x00\x00", "Unknown record type 2 at offset 8, skipping."),
    (1, struct.pack(">h", 1), "Error at offset 8, skipping. Found an unknown record version 1 for 1 type"),
    (0, b"", "Error at offset 8, skipping. Could not read version from value's buffer."),
])
def test_what_kafka_cannot_read_is_said_in_its_words(kind, value, line):
    if line is None:
        assert share_group_state(record(kind, value)) == (
            '{"type":"0","data":{"groupId":"g","topicId":"%s","partition":3}}' % J1, "<DELETE>")
        return
    assert share_group_state(record(kind, value)) == (line, None)
    key, _ = share_group_state(record(0, None, key=string("g") + U1))  # the partition is missing
    assert key.startswith("Error at offset 8, skipping. Could not read record with version 0 from key's buffer")


def test_dump_log_and_dump_print_the_decoded_records(tmp_path):
    """Kafka 4.1 (DumpLogSegments.scala, ShareGroupStateMessageParser): key and payload as JSON."""
    from click.testing import CliRunner

    from kafkacodec.cli import main
    from kafkacodec.storage.change.writer import PartitionWriter
    part = tmp_path / "__share_group_state-0"
    with PartitionWriter(part) as w:
        w.append([{"key": struct.pack(">h", 1) + KEY, "value": struct.pack(">h", 0) + CASES[1][2], "timestamp": 5},
                  {"key": struct.pack(">h", 0) + KEY, "value": None, "timestamp": 6}])
    log = str(part / "00000000000000000000.log")
    run = CliRunner().invoke(main, ["dump-log", "--share-group-state-decoder", "--files", log])
    assert run.exit_code == 0, run.output
    lines = run.stdout.splitlines()
    assert lines[-2].endswith(' key: {"type":"1","data":{"groupId":"g","topicId":"%s","partition":3}} payload: '
                              '{"version":"0","data":{"snapshotEpoch":4,"leaderEpoch":9,"startOffset":-1,'
                              '"stateBatches":[{"firstOffset":120,"lastOffset":120,"deliveryState":4,'
                              '"deliveryCount":5}]}}' % J1)
    assert lines[-1].endswith(' payload: <DELETE>')
    run = CliRunner().invoke(main, ["dump", "--share-group-state-decoder", log])
    assert run.exit_code == 0 and run.stdout.splitlines()[-2:] == lines[-2:]
    run = CliRunner().invoke(main, ["dump", "--json", "--share-group-state-decoder", log])
    (batch,) = map(json.loads, run.stdout.splitlines())
    assert [r["decoded"]["keyVersion"] for r in batch["records"]] == [1, 0]
    assert batch["records"][1]["decoded"]["value"] is None
