"""Everyday questions to `metadata`: one topic, the under-replicated and offline partitions (as
kafka-topics --under-replicated-partitions and --unavailable-partitions define them), the fenced
brokers; and a diff that tells an ISR reordered from one whose members changed. Over a log built
here whose answers are worked out by hand."""
import json
import subprocess
import sys

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.storage.kraft.records import pack
from kafkacodec.storage.samples.controller import (MINUTE, T0, change, config, moved, partition, rec,
                                                   register, uuid)

A, B, C = 1, 2, 3


def write_log(root, batches):
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    out, offset = [], 0
    for i, records in enumerate(batches):
        out.append(write_batch([Record(value=pack(r), timestamp=T0 + i * MINUTE) for r in records],
                               base_offset=offset))
        offset += len(records)
    (part / f"{0:020d}.log").write_bytes(b"".join(out))
    return offset - 1


def topic(name: str, n: int, *partitions) -> list[dict]:
    return [rec("TOPIC_RECORD", name=name, topicId=uuid(n)), *partitions]


CLUSTER = [
    [register(1, 10), register(2, 11), register(3, 12)],  # registered fenced
    [change(1, 10, fenced=-1), change(2, 11, fenced=-1)],  # broker 3 stays fenced
    topic("a", A, partition(A, 0, [1, 2]), partition(A, 1, [1, 2]), config(2, "a", "retention.ms", "1000")),
    topic("b", B, partition(B, 0, [3]), partition(B, 1, [1, 2])),
    topic("c", C, partition(C, 0, [1, 2, 3])),
    [moved(A, 1, isr=[1]),  # under-replicated
     moved(B, 1, leader=-1, isr=[1]),  # no leader, and under-replicated
     moved(C, 0, addingReplicas=[3], isr=[1, 2]),  # reassigning onto 3: two of its replicas are the ones to count
     config(2, "b", "retention.ms", "5")],
]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, timeout=120)


def partitions_of(view: dict) -> set[str]:
    return {f"{t['name']}-{p['partition']}" for t in view["topics"] for p in t["partitions"]}


def test_under_replicated_offline_and_fenced_as_kafka_topics_counts_them(tmp_path):
    write_log(tmp_path, CLUSTER)
    ask = lambda *opts: json.loads(cli("metadata", str(tmp_path), "--json", *opts).stdout)  # noqa: E731
    assert partitions_of(ask("--under-replicated")) == {"a-1", "b-1"}
    assert partitions_of(ask("--offline")) == {"b-0", "b-1"}  # leader fenced; no leader
    assert partitions_of(ask("--under-replicated", "--offline")) == {"a-1", "b-0", "b-1"}
    assert [b["brokerId"] for b in ask("--fenced")["brokers"]] == [3]
    only_a = ask("--topic", "a")
    assert partitions_of(only_a) == {"a-0", "a-1"} and "brokers" not in only_a
    assert only_a["configs"] == [{"resourceType": "TOPIC", "resourceName": "a", "configs": {"retention.ms": "1000"}}]
    assert partitions_of(ask("--topic", "b", "--topic", "a", "--under-replicated")) == {"a-1", "b-1"}
    assert partitions_of(ask("--topic", "c", "--under-replicated")) == set()
    assert ask("--under-replicated", "--at-offset", "10")["offset"] == 10 and \
        partitions_of(ask("--under-replicated", "--at-offset", "10")) == set()


def test_the_text_answers_show_only_what_was_asked(tmp_path):
    write_log(tmp_path, CLUSTER)
    text = cli("metadata", str(tmp_path), "--under-replicated").stdout
    assert "topics: 2 with partitions under-replicated" in text
    assert "    1  leader 1 (epoch 0)  replicas 1,2  isr 1  " in text and "    0  leader 1" not in text
    assert "brokers:" not in text and "configs:" not in text and "features:" not in text
    text = cli("metadata", str(tmp_path), "--fenced").stdout
    assert "brokers: 1 fenced" in text and "  3  epoch 12  FENCED" in text and "topics:" not in text


def test_a_topic_asked_for_that_is_not_there_is_said(tmp_path):
    last = write_log(tmp_path, CLUSTER)
    run = cli("metadata", str(tmp_path), "--topic", "a", "--topic", "nope")
    assert run.returncode == 1 and f"no topic named 'nope' at offset {last}" in run.stderr and "  a  id" in run.stdout


def test_filters_other_than_topic_go_with_the_state_only(tmp_path):
    write_log(tmp_path, CLUSTER)
    for opts in (["--history", "a-0", "--fenced"], ["--diff", "1", "2", "--offline"]):
        run = cli("metadata", str(tmp_path), *opts)
        assert run.returncode == 2 and "only with the state" in run.stderr, opts


REORDER = [
    [register(1, 10), register(2, 11), register(3, 12)],
    topic("a", A, partition(A, 0, [1, 2, 3]), partition(A, 1, [1, 2])),
    [moved(A, 0, isr=[3, 1, 2])],  # offset 6: the same members in another order
    [moved(A, 0, isr=[3, 1])],  # offset 7: broker 2 leaves
    [moved(A, 0, isr=[3, 1, 4]), moved(A, 1, isr=[2, 1])],  # offsets 8, 9: 4 joins a-0; a-1 reordered
]


def test_a_diff_tells_a_reordered_isr_from_a_change_of_its_members(tmp_path):
    write_log(tmp_path, REORDER)
    diff = lambda a, b, *o: json.loads(cli("metadata", str(tmp_path), "--diff", a, b, "--json", *o).stdout)  # noqa
    isr = {d["path"]: d for d in diff("5", "6") if d["path"].endswith(".isr")}
    assert isr == {"topics.a.partitions.0.isr": {"path": "topics.a.partitions.0.isr", "before": [1, 2, 3],
                                                 "after": [3, 1, 2], "reordered": True}}
    isr = {d["path"]: d for d in diff("6", "9") if d["path"].endswith(".isr")}
    assert isr["topics.a.partitions.0.isr"]["joined"] == [4] and isr["topics.a.partitions.0.isr"]["left"] == [2]
    assert "reordered" not in isr["topics.a.partitions.0.isr"]
    assert isr["topics.a.partitions.1.isr"]["reordered"] is True and "joined" not in isr["topics.a.partitions.1.isr"]
    assert {d["path"] for d in diff("5", "9", "--topic", "a")} >= {"topics.a.partitions.0.isr"}
    text = cli("metadata", str(tmp_path), "--diff", "6", "9").stdout
    assert "topics.a.partitions.0.isr: [3,1,2] -> [3,1,4] (joined 4; left 2)" in text
    assert "topics.a.partitions.1.isr: [1,2] -> [2,1] (reordered: the same members)" in text
    history = cli("metadata", str(tmp_path), "--history", "a-0").stdout
    assert "isr [1,2,3] -> [3,1,2] (reordered: the same members)" in history and "(left 2)" in history


def test_a_diff_for_one_topic_leaves_out_the_rest(tmp_path):
    write_log(tmp_path, CLUSTER)
    diff = json.loads(cli("metadata", str(tmp_path), "--diff", "11", "17", "--json", "--topic", "b").stdout)
    paths = {d["path"] for d in diff}
    assert all(p.startswith("topics.b") or p in ("offset", "time", "logRecords", "configs") for p in paths), paths
    assert next(d for d in diff if d["path"] == "configs")["after"] == [
        {"resourceType": "TOPIC", "resourceName": "b", "configs": {"retention.ms": "5"}}]
    assert "topics.b.partitions.1.leader" in paths and not any(p.startswith("topics.a") for p in paths)
