"""kafkacodec lag: consumer groups as kafka-consumer-groups --describe prints them, from the
sample's __consumer_offsets and from groups of KIP-848's protocol written record by record,
each figure checked against the committed offsets and log ends read independently."""
import base64
import json
import subprocess
import sys

import pytest

from kafkacodec.generated.consumer_offsets import ConsumerOffsets as C
from kafkacodec.generated.kafka_types import KafkaTypes as K
from kafkacodec.storage.layout import logdir
from kafkacodec.codec.internal_topics import offset_commit_record
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.state.groups import partition_committed_offsets
from kafkacodec.storage.change.writer import PartitionWriter

HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def kafka_line(cells, wide=(15, 15, 15, 15)):
    """A line as Kafka's format string lays it out: %-Gs %-Ts %-10s %-15s %-15s %-15s %-Cs %-Hs %s."""
    g, t, c, h = wide
    return "%-*s %-*s %-10s %-15s %-15s %-15s %-*s %-*s %s" % (g, cells[0], t, cells[1], *cells[2:6], c, cells[6],
                                                              h, cells[7], cells[8])


def tables(stdout: str) -> list[list[list[str]]]:
    """Each group's table (after the blank line Kafka's tool prints first), as rows of cells."""
    out = []
    for block in stdout.split("\n\n"):
        lines = [line for line in block.splitlines() if line]
        if lines:
            assert lines[0].split() == HEADER, lines[0]
            out.append([line.split() for line in lines[1:]])
    return out


def log_end(part) -> int:
    return max(r.offset for _, r in partition_records(part)) + 1


def test_the_samples_groups_as_kafkas_tool_prints_them(sample):
    run = kc("lag", sample)
    assert run.returncode == 0, run.stderr
    root = logdir.open_log_dir(sample)
    parts = {(p.topic, p.partition): p for p in root.partitions}
    commits = partition_committed_offsets(parts[("__consumer_offsets", 0)])
    want = {}
    for (group, topic, partition), c in commits.items():
        end = log_end(parts[(topic, partition)])
        member = ("billing-1", "/10.0.0.1", "billing") if group == "billing" else ("-", "-", "-")
        want.setdefault(group, []).append([group, topic, str(partition), str(c.offset), str(end), str(end - c.offset),
                                           *member])
    assert sorted(want) == ["analytics", "billing"]  # legacy-app's commits and metadata were deleted
    assert tables(run.stdout) == [sorted(want["analytics"]), want["billing"]]
    assert run.stdout.startswith("\n" + kafka_line(HEADER) + "\n")
    assert kafka_line(want["billing"][0]) in run.stdout.splitlines()
    # analytics' member has an assignment in no protocol's form: said, its partitions shown without it
    assert "member analytics-1's assignment is not in the consumer protocol's form" in run.stderr
    as_json = [json.loads(line) for line in kc("lag", sample, "--json", "--group", "billing").stdout.splitlines()]
    assert as_json == [{"group": "billing", "state": "Stable", "topic": "payments", "partition": 0,
                        "currentOffset": commits[("billing", "payments", 0)].offset,
                        "logEndOffset": log_end(parts[("payments", 0)]),
                        "lag": log_end(parts[("payments", 0)]) - commits[("billing", "payments", 0)].offset,
                        "consumerId": "billing-1", "host": "/10.0.0.1", "clientId": "billing"}]


def test_a_group_not_there_and_a_log_dir_without_the_groups(sample, tmp_path):
    run = kc("lag", sample, "--group", "billing", "--group", "legacy-app")
    assert run.returncode == 1
    assert "\nError: Consumer group 'legacy-app' does not exist." in run.stderr
    assert [row[0] for table in tables(run.stdout) for row in table] == ["billing"]
    (tmp_path / "orders-0").mkdir()
    none = kc("lag", tmp_path)
    assert none.returncode == 1 and "holds no __consumer_offsets partition" in none.stderr


def s(text):
    return K.String(value=text)


def cs(text):
    return K.CompactString(value=text)


def cns(text):
    return K.CompactNullableString(value=text)


def group_record(group):
    return C(version=3, key=C.ConsumerGroupMetadataKey(group_id=s(group))).to_bytes(), C.ConsumerGroupMetadataValue(
        version=0, body=C.ConsumerGroupMetadataValueBody(epoch=5, tagged_fields=K.TaggedFields(fields=[]))).to_bytes()


def member_record(group, member, client, host):
    return C(version=5, key=C.ConsumerGroupMemberMetadataKey(group_id=s(group), member_id=s(member))).to_bytes(), \
        C.ConsumerGroupMemberMetadataValue(version=0, body=C.ConsumerGroupMemberMetadataValueBody(
            instance_id=cns(None), rack_id=cns(None), client_id=cs(client), client_host=cs(host),
            subscribed_topic_names=[cs("orders")], subscribed_topic_regex=cns(None), rebalance_timeout_ms=1000,
            server_assignor=cns(None), tagged_fields=K.TaggedFields(fields=[]))).to_bytes()


def assignment_record(group, member, assigned):
    return C(version=8, key=C.ConsumerGroupCurrentMemberAssignmentKey(group_id=s(group), member_id=s(member))).to_bytes(), \
        C.ConsumerGroupCurrentMemberAssignmentValue(version=0, body=C.ConsumerGroupCurrentMemberAssignmentValueBody(
            member_epoch=5, previous_member_epoch=4, state=0,
            assigned_partitions=[C.TopicPartitions(topic_id=tid, partitions=ps, tagged_fields=K.TaggedFields(fields=[]))
                                 for tid, ps in assigned],
            partitions_pending_revocation=[], tagged_fields=K.TaggedFields(fields=[]))).to_bytes()


ORDERS_ID = bytes(range(100, 116))
GONE_ID = bytes(range(200, 216))
TXN = {"producer_id": 9, "producer_epoch": 0, "is_transactional": True}


def marker(kind):  # a control record: key (version 0, type), value (version 0, coordinator epoch 0)
    return [{"key": b"\x00\x00" + kind.to_bytes(2, "big"), "value": bytes(6), "timestamp": 5}]


@pytest.fixture
def kip848(tmp_path):
    """orders-0..2 (10, 20 and 30 records); a consumer-protocol group `shop` whose member m2 has
    three partitions and m1 two (each one of a topic no longer here), m3 gone; offsets committed directly and
    in transactions; a group `idle` with offsets and no members."""
    root = tmp_path / "logs"
    for n in range(3):
        with PartitionWriter(root / f"orders-{n}") as w:
            w.append([{"key": b"k", "value": b"v", "timestamp": 1000 + i} for i in range(10 * (n + 1))])
        (root / f"orders-{n}" / "partition.metadata").write_text(
            "version: 0\ntopic_id: " + base64.urlsafe_b64encode(ORDERS_ID).decode().rstrip("=") + "\n")

    def rec(kv):
        return {"key": kv[0], "value": kv[1], "timestamp": 5}

    def commit(group, partition, offset):
        return rec(offset_commit_record(group, "orders", partition, offset, 5, leader_epoch=0))

    with PartitionWriter(root / "__consumer_offsets-0") as w:
        w.append([rec(group_record("shop"))])
        for member, client in (("m1", "c1"), ("m2", "c2"), ("m3", "c3")):
            w.append([rec(member_record("shop", member, client, "/10.0.0." + member[1]))])
        w.append([rec(assignment_record("shop", "m1", [(ORDERS_ID, [0]), (GONE_ID, [4])]))])
        w.append([rec(assignment_record("shop", "m2", [(ORDERS_ID, [2, 1]), (GONE_ID, [5])]))])
        w.append([{"key": C(version=5, key=C.ConsumerGroupMemberMetadataKey(group_id=s("shop"), member_id=s("m3"))).to_bytes(),
                   "value": None, "timestamp": 5}])  # m3 left
        w.append([commit("shop", 0, 4), commit("shop", 1, 7)])
        w.append([commit("shop", 1, 11)], base_sequence=0, **TXN)  # committed below
        w.append(marker(1), is_control=True, **TXN)
        w.append([commit("shop", 0, 9)], base_sequence=1, **TXN)  # aborted below: 4 stands
        w.append(marker(0), is_control=True, **TXN)
        w.append([commit("idle", 2, 25), commit("idle", 7, 3)])  # orders-7 is not in this log dir
        w.append([commit("shop", 2, 1)], base_sequence=2, **TXN)  # still open: not counted
    return root


def test_a_consumer_protocol_group_its_transactions_and_an_empty_group(kip848):
    run = kc("lag", kip848)
    assert run.returncode == 0, run.stderr
    gone = base64.urlsafe_b64encode(GONE_ID).decode().rstrip("=")
    idle, shop = tables(run.stdout)
    assert idle == [["idle", "orders", "2", "25", "30", "5", "-", "-", "-"],
                    ["idle", "orders", "7", "3", "-", "-", "-", "-", "-"]]
    m2 = sorted([["shop", "orders", "1", "11", "20", "9"], ["shop", "orders", "2", "-", "30", "-"],  # open: none
                 ["shop", gone, "5", "-", "-", "-"]], key=lambda r: (r[1], int(r[2])))  # by topic, then partition
    m1 = sorted([["shop", "orders", "0", "4", "10", "6"], ["shop", gone, "4", "-", "-", "-"]],
                key=lambda r: (r[1], int(r[2])))
    assert shop == [r + ["m2", "/10.0.0.2", "c2"] for r in m2] + [r + ["m1", "/10.0.0.1", "c1"] for r in m1]
    assert "\nConsumer group 'idle' has no active members." in run.stderr
    assert "Consumer group 'shop'" not in run.stderr
    assert f"topic id {gone} is not a topic of this log dir" in run.stderr
    assert "1 offset commit of transactions still open is not counted" in run.stderr
    states = {json.loads(line)["group"]: json.loads(line)["state"] for line in kc("lag", kip848, "--json").stdout.splitlines()}
    assert states == {"idle": "Empty", "shop": "Stable"}


def test_damage_in_the_groups_topic_is_said_and_what_was_read_still_shown(sample, tmp_path):
    import shutil

    from kafkacodec.storage.segments.scan import scan_file
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    log = logs / "__consumer_offsets-0" / "00000000000000000000.log"
    batches = scan_file(log).batches
    data = bytearray(log.read_bytes())
    data[batches[-1].position + 30] ^= 0xFF  # the tombstones that delete legacy-app: unknown now
    log.write_bytes(bytes(data))
    run = kc("lag", logs)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert f"warning: {log}: byte {batches[-1].position}: " in run.stderr
    assert [t[0][0] for t in tables(run.stdout)] == ["analytics", "billing", "legacy-app"]  # as read before it
