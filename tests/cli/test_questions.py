"""describe, offsets and find on the sample log dir, each answer checked against the library's
record-by-record reading of the same partitions (brute force, no index), and on damage."""
import json
import shutil
import subprocess
import sys

import pytest

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.state.transactions import partition_transactions


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def kc_here(*args):
    """kc in this process, for the loops that ask many questions (each process's start-up was most of them)."""
    from types import SimpleNamespace

    from click.testing import CliRunner

    from kafkacodec.cli import main

    result = CliRunner().invoke(main, [*map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


@pytest.fixture(scope="module")
def records(sample):
    """(topic, partition) -> [(offset, timestamp, key)] in offset order, by reading every record."""
    return {(p.topic, p.partition): [(r.offset, r.timestamp, r.key) for _, r in partition_records(p)]
            for p in logdir.open_log_dir(sample).partitions}


def test_describe_agrees_with_reading_every_record(sample, records):
    run = kc("describe", "--json", sample)
    assert run.returncode == 0, run.stderr
    parts = {(o["topic"], o["partition"]): o for o in map(json.loads, run.stdout.splitlines())}
    assert set(parts) == set(records)
    for key, rows in records.items():
        o = parts[key]
        assert o["records"] == len(rows)
        assert (o["firstOffset"], o["lastOffset"]) == (rows[0][0], rows[-1][0])
        assert o["maxTimestamp"] == max(ts for _, ts, _ in rows)
    txns = partition_transactions(logdir.open_partition(sample / "payments-0"))
    counts = {kind: sum(t.outcome == kind for t in txns) for kind in ("COMMIT", "ABORT", "OPEN")}
    t = parts[("payments", 0)]["transactions"]
    assert (t["committed"], t["aborted"], len(t["open"])) == (counts["COMMIT"], counts["ABORT"], counts["OPEN"])
    assert counts["OPEN"] == 1 and counts["ABORT"] == 2
    table = kc("describe", "--segments", sample)
    assert table.returncode == 0 and "payments-0" in table.stdout and "00000000000000000034.log" in table.stdout
    assert "transaction from offset" in table.stderr  # the open one is named


def test_describe_names_damage_where_verify_does(sample, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample, copy)
    log = copy / "clicks-1" / "00000000000000000000.log"
    third = scan_file(log).batches[2]
    data = bytearray(log.read_bytes())
    data[third.position + 30] ^= 0xFF
    log.write_bytes(bytes(data))
    (copy / "clicks-1" / "00000000000000000000.index").unlink()
    run = kc("describe", "--json", "--topic", "clicks", "--partitions", "1", copy)
    assert run.returncode == 1
    (seg,) = json.loads(run.stdout)["segments"]
    assert seg["damage"].startswith(f"byte {third.position}:") and seg["damagedBytes"] == len(data) - third.position
    assert seg["missingIndexes"] == [".index"] and seg["batches"] == 2
    verified = kc("verify", "--quick", copy / "clicks-1")
    assert f"invalid from byte {third.position}" in verified.stderr
    assert f"kafkacodec recover {copy / 'clicks-1'}" in verified.stderr
    assert "kafkacodec recover" in kc("describe", copy).stderr


def first_at_or_after(rows, target):
    return min((o for o, ts, _ in rows if ts >= target), default=None)


def test_offsets_equal_brute_force(sample, records):
    def answers(*args):
        run = kc_here("offsets", sample, *args)
        assert run.returncode == 0, run.stderr
        return {(t, int(p)): int(o) for t, p, o in (line.rsplit(":", 2) for line in run.stdout.splitlines())}

    assert answers() == answers("--time", "-1") == {k: rows[-1][0] + 1 for k, rows in records.items()}
    assert answers("--time", "earliest") == {k: 0 for k in records}
    assert answers("--time", "latest-tiered") == {}
    top = {k: max(ts for _, ts, _ in rows) for k, rows in records.items()}
    assert answers("--time", "max-timestamp") == {k: next(o for o, ts, _ in rows if ts == top[k])
                                                  for k, rows in records.items()}
    times = sorted({ts for rows in records.values() for _, ts, _ in rows if ts >= 0})
    for target in times[::7] + [times[-1] + 1]:
        want = {k: first_at_or_after(rows, target) for k, rows in records.items()}
        assert answers("--time", str(target)) == {k: o for k, o in want.items() if o is not None}, target


def test_offsets_from_an_iso_time_and_a_checkpointed_log_start(sample, records, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample, copy)
    (copy / "log-start-offset-checkpoint").write_text("0\n1\nclicks 1 40\n")
    run = kc("offsets", copy, "--time", "earliest", "--topic", "cl.*")
    assert run.stdout.splitlines() == ["clicks:0:0", "clicks:1:40"]
    iso = kc("offsets", copy, "--time", "2020-09-13T12:28:00Z", "--topic", "clicks")
    assert iso.stdout == kc("offsets", copy, "--time", "1600000080000", "--topic", "clicks").stdout != ""


def test_find_by_offset_time_and_key(sample, records):
    rows = records[("payments", 0)]
    for offset, ts, key in rows[::5]:
        run = kc_here("find", sample, "--offset", offset, "--topic", "payments", "--json")
        assert run.returncode == 0, run.stderr
        (hit,) = map(json.loads, run.stdout.splitlines())
        assert (hit["offset"], hit["timestamp"]) == (offset, ts) and hit["note"] is None
        assert hit["file"].endswith(".log") and hit["position"] >= 0
    times = sorted({ts for _, ts, _ in rows})
    for target in times[::4]:
        run = kc_here("find", sample, "--timestamp", target, "--topic", "payments", "--json")
        (hit,) = map(json.loads, run.stdout.splitlines())
        assert hit["offset"] == first_at_or_after(rows, target)
    everywhere = [(t, p, o) for (t, p), rs in records.items() for o, _, k in rs if k == b"user-1"]
    run = kc("find", sample, "--key", "user-1", "--json")
    assert sorted((h["topic"], h["partition"], h["offset"]) for h in map(json.loads, run.stdout.splitlines())) == \
        sorted(everywhere) and everywhere
    assert kc("find", sample, "--key", "75736572", "--hex").stdout.count("\n") == \
        sum(1 for rs in records.values() for _, _, k in rs if k == b"user")
    missing = kc("find", sample, "--key", "no such key")
    assert missing.returncode == 1 and missing.stdout == ""
    assert kc("find", sample).returncode == 2 and kc("find", sample, "--offset", 1, "--key", "k").returncode == 2


def test_find_an_offset_the_cleaner_removed_gives_the_next(tmp_path):
    from kafkacodec import write_batch
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(
        write_batch([{"key": b"a", "value": b"1", "timestamp": 5}], base_offset=3) +
        write_batch([{"key": b"b", "value": b"2", "timestamp": 6}], base_offset=9))
    run = kc("find", part, "--offset", 5)
    assert run.returncode == 0 and "offset: 9 " in run.stdout and "offset 5 is not in the log" in run.stdout
    assert kc("find", part, "--offset", 10).returncode == 1


def test_bad_arguments_are_usage_errors(sample):
    for args in (["describe", sample, "--topic", "("], ["offsets", sample, "--time", str(2 ** 63)],
                 ["find", sample, "--offset", str(2 ** 63)], ["offsets", sample, "--partitions", "3-1"]):
        run = kc(*args)
        assert run.returncode == 2 and "Traceback" not in run.stderr, (args, run.stderr)
    huge = kc("offsets", sample, "--topic", "clicks", "--partitions", "0-2147483647")  # ranges, not sets
    assert huge.returncode == 0 and huge.stdout.splitlines() == ["clicks:0:390", "clicks:1:100"]


def test_one_damaged_partition_leaves_the_others_answered(sample, records, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample, copy)
    log = copy / "clicks-1" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[4000:6092] = bytes(2092)
    log.write_bytes(bytes(data))
    run = kc("offsets", copy, "--time", "max-timestamp")
    assert run.returncode == 1 and f"{log}: byte " in run.stderr
    assert "payments:0:" in run.stdout and "clicks:1:" not in run.stdout
    latest = kc("offsets", copy, "--topic", "clicks", "--partitions", "1").stdout.strip()
    described = json.loads(kc("describe", "--json", "--topic", "clicks", "--partitions", "1", copy).stdout)
    assert latest == f"clicks:1:{described['lastOffset'] + 1}"  # the end recovery keeps, as describe says


def test_describe_flags_offsets_that_do_not_rise(sample, tmp_path):
    part = tmp_path / "p-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    data = bytearray((sample / "payments-0" / "00000000000000000000.log").read_bytes())
    data[0:8] = (1000).to_bytes(8, "big")  # outside the CRC
    log.write_bytes(bytes(data))
    run = kc("describe", "--json", part)
    assert run.returncode == 1 and "not after the previous batch's last offset 1004" in run.stdout


def test_find_no_index_reads_past_a_misleading_time_index(tmp_path):
    import struct

    from kafkacodec import write_batch
    part = tmp_path / "t-0"
    part.mkdir()
    batches = [write_batch([{"key": b"k", "value": b"v", "timestamp": ts}], base_offset=o)
               for o, ts in ((0, 100), (1, 300), (2, 200))]
    (part / "00000000000000000000.log").write_bytes(b"".join(batches))
    # a well-formed pair of indexes that send a lookup for time 250 to offset 2, past offset 1
    (part / "00000000000000000000.index").write_bytes(struct.pack(">ii", 2, len(batches[0]) + len(batches[1])))
    (part / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", 250, 2))
    through_index = kc("find", part, "--timestamp", 250)
    assert through_index.returncode == 1 and through_index.stdout == ""  # what a broker would answer
    read = kc("find", part, "--timestamp", 250, "--no-index", "--json")
    (hit,) = map(json.loads, read.stdout.splitlines())
    assert (hit["offset"], hit["timestamp"], hit["position"]) == (1, 300, len(batches[0]))
    assert hit["note"] == "found by reading the log"
    by_offset = kc("find", part, "--offset", 2, "--no-index", "--json")
    assert json.loads(by_offset.stdout)["position"] == len(batches[0]) + len(batches[1])


def test_find_prints_each_time_in_iso_8601_too(sample, records):
    from datetime import datetime, timezone

    def iso(ms):  # the record's milliseconds, written out by the standard library
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    hits = [json.loads(line) for line in kc("find", sample, "--key", "user-5", "--json").stdout.splitlines()]
    stamped = [h for h in hits if h["timestamp"] >= 0]
    assert stamped and any(h["timestamp"] < 0 for h in hits)  # clicks-0 opens with magic 0: no time
    for h in hits:
        assert h["time"] == (iso(h["timestamp"]) if h["timestamp"] >= 0 else None)
    lines = kc("find", sample, "--key", "user-5").stdout.splitlines()
    assert len(lines) == len(hits)
    for line, h in zip(lines, hits):
        shown = f"timestamp: {h['timestamp']} ({h['time']}) file: " if h["time"] else f"timestamp: {h['timestamp']} file: "
        assert shown in line, line


@pytest.fixture(scope="module")
def twelve(tmp_path_factory):
    """Topics t (partitions 0..11, partition N holding N+1 records) and u (0..1)."""
    from kafkacodec.storage.change.writer import PartitionWriter

    root = tmp_path_factory.mktemp("twelve")
    for topic, count in (("t", 12), ("u", 2)):
        for n in range(count):
            with PartitionWriter(root / f"{topic}-{n}") as w:
                w.append([{"key": b"k", "value": b"v", "timestamp": 1000 + i} for i in range(n + 1)])
    return root


@pytest.mark.parametrize("rules, wanted", [
    ("t:2", {("t", 2)}), ("t:1-3", {("t", 1), ("t", 2)}), ("t:10-", {("t", 10), ("t", 11)}),
    ("t:-2", {("t", 0), ("t", 1)}), ("u", {("u", 0), ("u", 1)}), (":1", {("t", 1), ("u", 1)}),
    ("t:", {("t", n) for n in range(12)}), ("t:11,u:0-1", {("t", 11), ("u", 0)}), ("[tu]:5-7", {("t", 5), ("t", 6)}),
    ("'u'", {("u", 0), ("u", 1)}), ("", {(t, n) for t, c in (("t", 12), ("u", 2)) for n in range(c)})])
def test_offsets_takes_kafkas_topic_partitions_rules(twelve, rules, wanted):
    run = kc("offsets", twelve, "--topic-partitions", rules)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    got = [(t, int(p), int(o)) for t, p, o in (line.rsplit(":", 2) for line in lines)]
    assert {(t, p) for t, p, _ in got} == wanted
    assert all(o == p + 1 for _, p, o in got)  # the log end: partition N holds N+1 records
    assert [f"{t}-{p}" for t, p, _ in got] == sorted(f"{t}-{p}" for t, p, _ in got)  # t-10 before t-2, as Kafka


def test_offsets_rules_refused_or_matching_nothing(twelve):
    for args in (["--topic-partitions", "t:x"], ["--topic-partitions", "t:1", "--topic", "t"],
                 ["--topic-partitions", "(:1"]):
        run = kc("offsets", twelve, *args)
        assert run.returncode == 2 and "Traceback" not in run.stderr, (args, run.stderr)
    for args in (["--topic-partitions", "t:3-3"], ["--topic", "v"]):
        run = kc("offsets", twelve, *args)
        assert run.returncode == 1 and run.stdout == "" and "no partition" in run.stderr, args


def test_offsets_json_gives_every_partition_selected(sample, records):
    for spec in ("latest", "earliest", "max-timestamp", "latest-tiered", "2020-09-13T12:28:00Z"):
        text = kc("offsets", sample, "--time", spec).stdout.splitlines()
        objects = [json.loads(line) for line in kc("offsets", sample, "--time", spec, "--json").stdout.splitlines()]
        assert {(o["topic"], o["partition"]) for o in objects} == set(records)
        assert [f"{o['topic']}:{o['partition']}:{o['offset']}" for o in objects if o["offset"] is not None] == text
    assert all(o["offset"] is None for o in map(json.loads, kc("offsets", sample, "--time", "latest-tiered",
                                                                 "--json").stdout.splitlines()))


def test_describe_sums_each_topic_and_the_whole_log_dir(sample, records):
    objects = [json.loads(line) for line in kc("describe", "--json", sample).stdout.splitlines()]
    table = kc("describe", sample)
    assert table.returncode == 0, table.stderr
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.split("│")[1:-1]]
                                              for line in table.stdout.splitlines() if line.startswith("│"))}

    def sums(chosen):
        producers = {pid for o in chosen for pid in o["producers"]}  # one producer, however many partitions
        return [str(sum(len(o["segments"]) for o in chosen)), f"{sum(o['bytes'] for o in chosen):,}",
                f"{sum(o['records'] for o in chosen):,}", "-", str(len(producers))]

    clicks = [o for o in objects if o["topic"] == "clicks"]
    assert len(clicks) == 2 and sum(o["records"] for o in clicks) == len(records[("clicks", 0)]) + len(records[("clicks", 1)])
    for name, chosen in (("clicks (2 partitions)", clicks), ("all (9 partitions, 8 topics)", objects)):
        cells = rows[name]
        assert cells[:4] + [cells[6].split()[0]] == sums(chosen), name
    assert rows["all (9 partitions, 8 topics)"][7] == "2 committed, 2 aborted, 1 open"
    assert not any(name.startswith("payments (") for name in rows)  # one partition: its row says it all
    lone = kc("describe", sample / "clicks-0").stdout
    assert "partitions)" not in lone  # one partition: no sums
