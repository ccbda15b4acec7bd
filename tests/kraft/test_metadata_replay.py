"""`kafkacodec metadata`: the cluster's state replayed from __cluster_metadata, checked against
answers worked out by hand from Kafka's replay rules (PartitionRegistration.merge, the image
deltas), over logs built here record by record and over the controller sample."""
import json
import shutil
import subprocess
import sys

import pytest

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.storage.kraft.image import Image, ReplayProblem
from kafkacodec.storage.kraft.records import pack
from kafkacodec.storage.kraft.replay import MetadataLogProblem, Point, open_metadata_log, replay
from kafkacodec.storage.kraft.view import history, replay_json, subject
from kafkacodec.storage.samples.controller import (MINUTE, T0, change, config, moved, partition, rec,
                                                   register, uuid, write_metadata_sample)

T1 = uuid(1)


def write_log(root, batches, start=0):
    """`__cluster_metadata-0/<start>.log` holding one batch of records per item, a minute apart."""
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    out, offset = [], start
    for i, records in enumerate(batches):
        out.append(write_batch([Record(value=pack(r), timestamp=T0 + i * MINUTE) for r in records],
                               base_offset=offset, partition_leader_epoch=3))
        offset += len(records)
    (part / f"{start:020d}.log").write_bytes(b"".join(out))
    return open_metadata_log(root)


def state(root, batches, **point):
    replayed, stopped = replay(write_log(root, batches), Point(**point))
    assert stopped is None
    return replayed


def orders(replayed):
    return replayed.image.topic_named("orders")["partitions"]


CREATE = [[register(1, 10), register(2, 11), register(3, 12), register(4, 13)],
          [rec("TOPIC_RECORD", name="orders", topicId=T1), partition(1, 0, [1, 2, 3]), partition(1, 1, [2, 3, 1])]]


def test_topic_creation(tmp_path):
    got = orders(state(tmp_path, CREATE))
    assert got == {
        0: {"replicas": [1, 2, 3], "directories": [uuid(101), uuid(102), uuid(103)], "isr": [1, 2, 3],
            "removingReplicas": [], "addingReplicas": [], "leader": 1, "leaderRecoveryState": 0, "leaderEpoch": 0,
            "partitionEpoch": 0, "eligibleLeaderReplicas": [], "lastKnownElr": []},
        1: {"replicas": [2, 3, 1], "directories": [uuid(102), uuid(103), uuid(101)], "isr": [2, 3, 1],
            "removingReplicas": [], "addingReplicas": [], "leader": 2, "leaderRecoveryState": 0, "leaderEpoch": 0,
            "partitionEpoch": 0, "eligibleLeaderReplicas": [], "lastKnownElr": []}}


def test_reassignment_adding_and_removing_replicas(tmp_path):
    steps = CREATE + [
        [moved(1, 0, replicas=[1, 2, 3, 4], addingReplicas=[4], removingReplicas=[2],
               directories=[uuid(101), uuid(102), uuid(103), uuid(104)])],
        [moved(1, 0, isr=[1, 2, 3, 4])],
        [moved(1, 0, replicas=[1, 3, 4], isr=[1, 3, 4], addingReplicas=[], removingReplicas=[],
               directories=[uuid(101), uuid(103), uuid(104)])]]
    during = orders(state(tmp_path / "a", steps[:3]))[0]
    assert (during["replicas"], during["addingReplicas"], during["removingReplicas"], during["isr"]) == \
        ([1, 2, 3, 4], [4], [2], [1, 2, 3])
    after = orders(state(tmp_path / "b", steps))[0]
    assert (after["replicas"], after["directories"], after["isr"], after["addingReplicas"],
            after["removingReplicas"]) == ([1, 3, 4], [uuid(101), uuid(103), uuid(104)], [1, 3, 4], [], [])
    assert (after["leader"], after["leaderEpoch"], after["partitionEpoch"]) == (1, 0, 3)  # no new leader


def test_replicas_changed_without_directories_become_migrating_only_when_they_were(tmp_path):
    v0 = {**partition(1, 0, [1, 2]), "version": 0}
    v0["data"] = {k: v for k, v in v0["data"].items() if k != "directories"}
    steps = [[rec("TOPIC_RECORD", name="orders", topicId=T1), v0], [moved(1, 0, replicas=[1, 2, 3])]]
    got = orders(state(tmp_path, steps))[0]
    assert got["directories"] == ["AAAAAAAAAAAAAAAAAAAAAA"] * 3  # Kafka's MIGRATING, one per replica


def test_isr_shrink_expand_and_leader_changes(tmp_path):
    steps = CREATE + [[moved(1, 0, isr=[1, 3])], [moved(1, 0, leader=3, isr=[3])], [moved(1, 0, isr=[3, 1, 2])],
                      [moved(1, 0, leader=1)]]
    seen = [orders(state(tmp_path / str(n), steps[:n]))[0] for n in range(3, 7)]
    assert [(p["leader"], p["leaderEpoch"], p["isr"], p["partitionEpoch"]) for p in seen] == [
        (1, 0, [1, 3], 1), (3, 1, [3], 2), (3, 1, [3, 1, 2], 3), (1, 2, [3, 1, 2], 4)]


def test_broker_fencing_shutdown_and_unregistration(tmp_path):
    steps = CREATE + [[change(2, 11, fenced=-1)], [change(2, 11, inControlledShutdown=1)],
                      [rec("FENCE_BROKER_RECORD", id=2, epoch=11)], [rec("UNFENCE_BROKER_RECORD", id=3, epoch=12)],
                      [rec("UNREGISTER_BROKER_RECORD", brokerId=4, brokerEpoch=13)]]
    seen = [state(tmp_path / str(n), steps[:n]).image.brokers for n in range(3, 8)]
    assert [(b[2]["fenced"], b[2]["inControlledShutdown"]) for b in seen] == [
        (False, False), (False, True), (True, True), (True, True), (True, True)]
    assert seen[3][3]["fenced"] is False and 4 in seen[3] and 4 not in seen[4]


def test_a_change_at_another_epoch_is_refused_in_kafkas_words_and_changes_nothing(tmp_path):
    replayed = state(tmp_path, CREATE + [[rec("FENCE_BROKER_RECORD", id=2, epoch=99)],
                                         [change(9, 1, fenced=1)], [moved(1, 7, isr=[1])]])
    assert replayed.image.brokers[2]["fenced"] is True  # registered fenced, never changed
    assert replayed.problems == [
        (7, "Tried to fence broker 2, but the given epoch, 99, did not match the current broker epoch, 11"),
        (8, "Tried to change broker 9, but that broker was not registered."),
        (9, f"Unable to find partition {T1}:7")]


def test_topic_deletion_takes_its_configs(tmp_path):
    steps = CREATE + [[config(2, "orders", "retention.ms", "1000"), config(4, "1", "log.cleaner.threads", "2")],
                      [rec("REMOVE_TOPIC_RECORD", topicId=T1)]]
    replayed = state(tmp_path, steps)
    assert replayed.image.topics == {} and replayed.image.configs == {("BROKER", "1"): {"log.cleaner.threads": "2"}}


def test_config_deletes_with_null_values(tmp_path):
    steps = CREATE + [[config(2, "orders", "retention.ms", "1000"), config(2, "orders", "cleanup.policy", "compact")],
                      [config(2, "orders", "retention.ms", None)], [config(2, "orders", "cleanup.policy", None)]]
    assert state(tmp_path / "a", steps[:4]).image.configs == {("TOPIC", "orders"): {"cleanup.policy": "compact"}}
    assert state(tmp_path / "b", steps).image.configs == {}


def test_clear_elr_bumps_the_partition_epoch_of_partitions_that_had_one(tmp_path):
    with_elr = {**partition(1, 0, [1, 2]), "data": {**partition(1, 0, [1, 2])["data"], "eligibleLeaderReplicas": [2]}}
    steps = [[rec("TOPIC_RECORD", name="orders", topicId=T1), with_elr, partition(1, 1, [1, 2])],
             [rec("CLEAR_ELR_RECORD", topicName="")]]
    got = orders(state(tmp_path, steps))
    assert (got[0]["eligibleLeaderReplicas"], got[0]["partitionEpoch"], got[1]["partitionEpoch"]) == ([], 1, 0)


def test_metadata_transactions_take_effect_at_their_end_and_not_when_aborted(tmp_path):
    begin, end = rec("BEGIN_TRANSACTION_RECORD", name="t"), rec("END_TRANSACTION_RECORD")
    steps = [[begin, rec("TOPIC_RECORD", name="orders", topicId=T1)], [partition(1, 0, [1]), end],
             [begin, rec("TOPIC_RECORD", name="gone", topicId=uuid(2)), rec("ABORT_TRANSACTION_RECORD", reason="x")]]
    assert state(tmp_path / "a", steps, offset=2).image.topics == {}  # inside the open transaction
    assert set(state(tmp_path / "b", steps, offset=3).image.topics) == {T1}
    assert [t["name"] for t in state(tmp_path / "c", steps).image.topics.values()] == ["orders"]


def test_at_time_stops_after_the_last_record_at_or_before_it(tmp_path):
    steps = CREATE + [[moved(1, 0, isr=[1])], [moved(1, 0, isr=[1, 2])]]
    at = state(tmp_path, steps, time=T0 + 2 * MINUTE + 30_000)  # between the two changes
    assert orders(at)[0]["isr"] == [1] and at.offset == 7


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    root = tmp_path_factory.mktemp("controller")
    write_metadata_sample(root)
    return root


def without_snapshot(log):
    log.snapshots = []
    return log


def test_snapshot_plus_log_equals_the_log_alone_from_offset_zero(controller):
    log = open_metadata_log(controller)
    assert [s.end_offset for s in log.snapshots] == [43]
    last = log.partition.segments[-1]
    for offset in range(42, 54):
        from_snapshot, _ = replay(log, Point(offset=offset))
        from_zero, _ = replay(without_snapshot(open_metadata_log(controller)), Point(offset=offset))
        assert from_snapshot.snapshot is not None and from_zero.snapshot is None
        # the quorum's leader comes from LeaderChange control records, which snapshots do not hold
        how = ("snapshot", "logRecords", "quorum")
        assert {k: v for k, v in replay_json(from_snapshot).items() if k not in how} == \
            {k: v for k, v in replay_json(from_zero).items() if k not in how}
    assert last.base_offset == 43


def test_segments_the_snapshot_covers_may_be_gone_but_nothing_else(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    for f in (copy / "__cluster_metadata-0").glob("00000000000000000000.*"):
        f.unlink()
    assert replay_json(replay(open_metadata_log(copy))[0]) == replay_json(replay(open_metadata_log(controller))[0])
    with pytest.raises(MetadataLogProblem, match="offsets 0 to 42 are missing"):
        replay(without_snapshot(open_metadata_log(copy)))


def test_the_sample_tells_its_story(controller):
    end = replay(open_metadata_log(controller))[0]
    assert sorted(t["name"] for t in end.image.topics.values()) == ["orders", "payments"]
    assert orders(end)[0]["replicas"] == [1, 3, 4] and sorted(end.image.brokers) == [1, 2, 3, 4]
    assert end.image.brokers[2]["brokerEpoch"] == 13 and not end.problems
    changes = list(history(open_metadata_log(controller), subject("orders-0")))
    assert [(c.offset, c.causes[-1]) for c in changes] == [
        (18, "CONFIG_RECORD"), (32, "PARTITION_CHANGE_RECORD"), (37, "PARTITION_CHANGE_RECORD"),
        (45, "PARTITION_CHANGE_RECORD"), (46, "PARTITION_CHANGE_RECORD"), (47, "PARTITION_CHANGE_RECORD")]
    assert [c.after["isr"] for c in changes] == [[1, 2, 3], [1, 3], [1, 3, 2], [1, 3, 2], [1, 3, 2, 4], [1, 3, 4]]
    assert [c.offset for c in history(open_metadata_log(controller), subject("topic:scratch"))] == [22, 23, 49]


def test_damage_stops_the_replay_where_it_is_and_says_where(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    seg = copy / "__cluster_metadata-0" / f"{43:020d}.log"
    data = bytearray(seg.read_bytes())
    first = int.from_bytes(data[8:12], "big") + 12  # the second batch
    data[first + 40] ^= 0xFF
    seg.write_bytes(bytes(data))
    replayed, stopped = replay(open_metadata_log(copy))
    assert replayed.offset == 43 and f"{seg}: byte {first}" in stopped
    run = cli("metadata", str(copy))
    assert run.returncode == 1 and f"byte {first}" in run.stderr and "after offset 43" in run.stderr
    assert "Traceback" not in run.stderr and "__cluster_metadata at offset 43" in run.stdout


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, timeout=120)


def test_the_command_answers_at_an_offset_a_time_a_diff_and_a_history(controller):
    text = cli("metadata", str(controller), "--at-offset", "33").stdout
    assert "__cluster_metadata at offset 33" in text and "FENCED" not in text
    assert "  2  epoch 11  controlled shutdown" in text and "isr 1,3  partition epoch 1" in text
    at_time = json.loads(cli("metadata", str(controller), "--at-time", "2023-11-15T01:25:20Z", "--json").stdout)
    assert at_time["offset"] == 34 and at_time["brokers"][1]["fenced"] is True
    diff = json.loads(cli("metadata", str(controller), "--diff", "42", "53", "--json").stdout)
    paths = {d["path"] for d in diff}
    assert {"brokers.4", "topics.scratch", "topics.orders.partitions.0.replicas"} <= paths
    assert "topics.abandoned" not in paths
    lines = cli("metadata", str(controller), "--history", "broker:2").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["6", "9", "29", "34", "35", "36"]
    secrets = json.loads(cli("metadata", str(controller), "--json").stdout)["scramCredentials"]
    assert secrets == [{"mechanism": "SCRAM-SHA-512", "name": "billing", "iterations": 8192}]


@pytest.mark.parametrize("a,b", [("5", "30"), ("30", "50"), ("42", "53"), ("50", "20"), ("36", "36"),
                                 ("2023-11-15T01:25:20Z", "53"), ("53", "-1")])
def test_a_diff_in_one_replay_equals_the_differences_of_two(controller, a, b):
    """The diff carries A's state on to B (or replays B apart when B comes first): the same
    differences as two replays, but for where each replay started from."""
    from click.testing import CliRunner

    from kafkacodec.cli import main
    from kafkacodec.cli.commands.metadata import parse_point
    from kafkacodec.storage.kraft.view import differences

    how = ("snapshot", "logRecords", "quorum")
    run = CliRunner().invoke(main, ["metadata", str(controller), "--diff", a, b, "--json"])
    assert run.exit_code == 0, run.output
    got = [{k: d[k] for k in ("path", "before", "after")} for d in json.loads(run.stdout)
           if d["path"].split(".")[0] not in how]
    log = open_metadata_log(controller)
    views = [replay_json(replay(log, parse_point(p, "--diff"))[0]) for p in (a, b)]
    want = [{"path": p, "before": x, "after": y} for p, x, y in differences(*views) if p.split(".")[0] not in how]
    assert got == want and (a == b) == (not want)


@pytest.mark.parametrize("args,message", [
    (["--history", "orders"], "name a partition as TOPIC-N"),
    (["--at-offset", "1", "--at-time", "0"], "choose one of"),
    (["--diff", "1", "yesterday"], "neither an offset nor an ISO 8601 time"),
])
def test_bad_options_are_usage_errors(controller, args, message):
    run = cli("metadata", str(controller), *args)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr


def test_a_dir_without_the_metadata_log_is_a_clear_error(tmp_path):
    run = cli("metadata", str(tmp_path))
    assert run.returncode == 1 and "no __cluster_metadata-0 directory" in run.stderr


def test_a_refused_record_leaves_the_image_as_it_was():
    image = Image()
    image.apply(register(1, 5))
    before = image.copy().brokers
    with pytest.raises(ReplayProblem):
        image.apply(change(1, 5, fenced=7))
    assert image.brokers == before


def test_packing_a_records_json_gives_the_bytes_kafka_would_write():
    """Every type and version of test_metadata_records, hand-packed there: packed again from the
    JSON they print, they read back to that JSON, and to the same bytes when they hold no tag
    unknown to us and no tagged field written at its default."""
    from tests.kraft.test_metadata_records import CASES, framed

    from kafkacodec.storage.kraft.records import plain, read_record, record_json

    same = 0
    for api_key, version, body, _ in CASES:
        value = framed(api_key, version, body)
        obj = plain(record_json(*read_record(value)))
        packed = pack(obj)
        assert plain(record_json(*read_record(packed))) == obj
        same += packed == value
    assert same >= 26


def test_replay_of_damage_under_valid_crcs_gives_typed_errors_only(controller, tmp_path):
    """Each batch's records section with a byte changed and its CRC made valid again, one batch
    at a time at random places: the replay ends, or stops early saying why, or refuses with a
    MetadataLogProblem; never another exception."""
    import random

    from tests.support.damage import V2_RECORDS_AT, with_valid_crc

    from kafkacodec.storage.segments.scan import batch_positions

    rng = random.Random(7)
    seg = open_metadata_log(controller).partition.segments[0].log
    data = seg.read_bytes()
    positions = batch_positions(data) + [len(data)]
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    target = copy / "__cluster_metadata-0" / seg.name
    outcomes = set()
    for _ in range(300):
        i = rng.randrange(len(positions) - 1)
        start, end = positions[i], positions[i + 1]
        batch = bytearray(data[start:end])
        at = rng.randrange(V2_RECORDS_AT, len(batch))
        batch[at] = rng.randrange(256)
        target.write_bytes(data[:start] + with_valid_crc(bytes(batch)) + data[end:])
        try:
            replayed, stopped = replay(without_snapshot(open_metadata_log(copy)))
            outcomes.add("stopped" if stopped else "problems" if replayed.problems else "clean")
        except MetadataLogProblem:
            outcomes.add("refused")
    assert {"stopped", "problems"} <= outcomes


def test_any_order_of_the_samples_records_gives_replay_problems_only():
    """The sample's records shuffled: Kafka's rules refuse some (a partition before its topic, a
    change at a stale epoch), each as a ReplayProblem leaving the image as it was."""
    import random

    from kafkacodec.storage.samples.controller import AFTER_SNAPSHOT, BEFORE_SNAPSHOT

    records = [r for _, batch in BEFORE_SNAPSHOT + AFTER_SNAPSHOT for r in batch]
    rng = random.Random(3)
    refused = 0
    for _ in range(200):
        image = Image()
        for r in rng.sample(records, len(records)):
            before = replay_json_of(image)
            try:
                image.apply(r)
            except ReplayProblem:
                refused += 1
                assert replay_json_of(image) == before
    assert refused


def replay_json_of(image):
    from kafkacodec.storage.kraft.view import image_json
    return json.dumps(image_json(image, show_secrets=True), sort_keys=True)


def test_a_damaged_snapshot_is_passed_over_for_the_log(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    snap = next((copy / "__cluster_metadata-0").glob("*.checkpoint"))
    data = bytearray(snap.read_bytes())
    data[200] ^= 0xFF
    snap.write_bytes(bytes(data))
    replayed, stopped = replay(open_metadata_log(copy))
    assert replayed.snapshot is None and stopped is None  # the log from offset 0 gives the whole state
    assert len(replayed.notes) == 1 and "snapshot passed over" in replayed.notes[0] and str(snap) in replayed.notes[0]
    how = ("snapshot", "logRecords", "quorum", "notes")
    intact = replay(open_metadata_log(controller))[0]
    assert {k: v for k, v in replay_json(replayed).items() if k not in how} == \
        {k: v for k, v in replay_json(intact).items() if k not in how}
    for f in (copy / "__cluster_metadata-0").glob("00000000000000000000.*"):
        f.unlink()  # nothing left to replay from
    with pytest.raises(MetadataLogProblem, match="snapshot passed over.*offsets 0 to 42 are missing"):
        replay(open_metadata_log(copy))
