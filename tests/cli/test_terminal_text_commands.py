"""Names and data read from a log dir reach the terminal as text, not as commands to it, in every
command's text output (describe, verify, find, offsets, lag, dump, and errors): a log dir built
here whose partition and file names, keys, values, headers and consumer group hold carriage
returns, escape sequences (OSC ones, which click does not strip from piped output), newlines and
a right-to-left override. JSON output carries them escaped as JSON; dump-log prints Kafka's bytes."""
import json
import os
import subprocess
import sys

import pytest

from kafkacodec.cli.commands.terminal import shown
from kafkacodec.codec.internal_topics import offset_commit_record
from kafkacodec.storage.samples.broker import T0, _group_metadata, _protocol
from kafkacodec.storage.change.writer import PartitionWriter

OSC = "\x1b]0;owned\x07"  # sets a terminal's title
KEY, VALUE = f"k\r{OSC}ey", "v\u202eal\nforged line"
HEADER_KEY, HEADER_VALUE = f"h{OSC}", "hv\r"
GROUP = f"grp\nforged line{OSC}"
TOPIC = f"t{OSC}x"  # a name Kafka's log loading takes (it checks only the `-N` at its end)
ODD_DIR, STRAY = f"odd{OSC}dir", "\r\u202estray.log"
# what no text output may hold: C0 controls but the newline ending lines, DEL, C1, bidi controls
RAW = {chr(c) for c in [*range(0x0A), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
                        *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


esc = shown  # the escaped text a name is shown as


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    with PartitionWriter(root / "events-0") as w:
        w.append([{"key": KEY.encode(), "value": VALUE.encode(), "timestamp": T0,
                   "headers": [(HEADER_KEY, HEADER_VALUE.encode())]}])
    with PartitionWriter(root / "__consumer_offsets-0") as w:
        w.append([_group_metadata(GROUP, 1, [f"mem{OSC}-1"], T0, lambda i: _protocol("events", [0]))])
        key, value = offset_commit_record(GROUP, "events", 0, 0, T0 + 1, leader_epoch=0)
        w.append([{"key": key, "value": value, "timestamp": T0 + 1}])
    with PartitionWriter(root / f"{TOPIC}-0") as w:
        w.append([{"key": b"a", "value": b"b", "timestamp": T0}])
    (root / ODD_DIR).mkdir()  # not a partition: passed over, and said to be
    (root / "events-0" / STRAY).write_bytes(b"x")  # not a segment: passed over, and said to be
    return root


def cli(*args):
    """The command's run, its output as written (text mode would turn \\r into \\n)."""
    run = subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, timeout=120)
    run.stdout, run.stderr = (out.decode("utf-8", "surrogateescape") for out in (run.stdout, run.stderr))
    return run


def plain(run) -> str:
    """stdout and stderr, asserted to hold nothing a terminal acts on and no forged line."""
    text = run.stdout + run.stderr
    assert not RAW & set(text), sorted(RAW & set(text))
    assert not any(line.startswith("forged line") for line in text.splitlines())
    return text


def test_describe_and_verify_escape_partition_directory_and_file_names(hostile):
    skipped = [f"skipped {esc(str(hostile / ODD_DIR))}: ", f"skipped {esc(str(hostile / 'events-0' / STRAY))}: "]
    for args in (("describe", "--segments"), ("verify",)):
        run = cli(*args, hostile)
        assert run.returncode == 0, run.stderr
        plain(run)
        assert f"{esc(TOPIC)}-0" in run.stdout and "\\x1b]0;owned\\x07" in run.stdout
        assert all(s in run.stderr for s in skipped), run.stderr


def test_find_escapes_keys_and_payloads(hostile):
    run = cli("find", hostile, "--topic", "events", "--offset", "0")
    assert run.returncode == 0, run.stderr
    plain(run)
    assert f"key: {esc(KEY)} payload: {esc(VALUE)}" in run.stdout
    assert "key: k\\r\\x1b]0;owned\\x07ey payload: v\\u202eal\\nforged line" in run.stdout


def test_offsets_escape_topic_names(hostile):
    run = cli("offsets", hostile)
    assert run.returncode == 0, run.stderr
    plain(run)
    assert f"{esc(TOPIC)}:0:1" in run.stdout.splitlines() and "events:0:1" in run.stdout.splitlines()


def test_lag_escapes_group_and_member_names_and_keeps_its_columns(hostile):
    run = cli("lag", hostile)
    assert run.returncode == 0, run.stderr
    plain(run)
    header, row = [line for line in run.stdout.splitlines() if line]
    assert row.startswith(esc(GROUP) + " events ")
    assert row.split() == [*esc(GROUP).split(), "events", "0", "0", "1", "1", esc(f"mem{OSC}-1"), "/10.0.0.1", esc(f"mem{OSC}")]
    assert header.index("TOPIC") == row.index("events")  # the columns as wide as the names as shown


def test_dump_escapes_keys_values_and_headers(hostile):
    run = cli("dump", "--print-data-log", hostile / "events-0")
    assert run.returncode == 0, run.stderr
    plain(run)
    assert f"headerKeys: [{esc(HEADER_KEY)}] key: {esc(KEY)} payload: {esc(VALUE)}" in run.stdout
    decoded = cli("dump", "--offsets-decoder", hostile / "__consumer_offsets-0")
    assert decoded.returncode == 0, decoded.stderr
    plain(decoded)
    assert '"group":"grp\\\\nforged line\\\\u001B]0;owned\\\\u0007"' in decoded.stdout  # Jackson's JSON, escaped


def test_dump_log_prints_kafkas_bytes_and_says_so(hostile):
    log = hostile / "events-0" / "00000000000000000000.log"
    run = cli("dump-log", "--print-data-log", "--files", log)
    assert f"key: {KEY} payload: {VALUE}" in run.stdout  # raw, as Kafka's kafka-dump-log prints them
    assert "raw" in cli("dump-log", "--help").stderr


def test_json_output_escapes_them_as_json(hostile):
    runs = [cli("describe", "--json", hostile), cli("offsets", "--json", hostile), cli("lag", "--json", hostile),
            cli("find", "--json", hostile, "--topic", "events", "--offset", "0"),
            cli("dump", "--json", hostile / "events-0")]
    for run in runs:
        assert run.returncode == 0, run.stderr
        plain(run)
        assert all(line.isascii() for line in run.stdout.splitlines())
    objects = [json.loads(line) for run in runs for line in run.stdout.splitlines()]
    assert {o["topic"] for o in objects if "offset" in o and "topic" in o} >= {TOPIC, "events"}
    assert any(o.get("group") == GROUP and o.get("consumerId") == f"mem{OSC}-1" for o in objects)
    record = json.loads(runs[-1].stdout)["records"][0]
    assert [h[0] for h in record["headers"]] == [HEADER_KEY]


def test_errors_quoting_a_name_read_from_the_log_dir_are_escaped(hostile, tmp_path):
    part = tmp_path / f"{TOPIC}-0"
    part.mkdir()
    os.mkfifo(part / f"{0:020d}.log")  # not a regular file: the command ends, naming it
    for command in ("describe", "verify", "offsets", "lag", "dump"):
        run = cli(command, tmp_path)
        assert run.returncode == 2, (command, run.stderr)
        plain(run)
        assert f"error: {esc(str(part))}/{0:020d}.log: " in run.stderr, (command, run.stderr)


def test_recover_and_clean_reports_escape_partition_names(hostile, tmp_path):
    import shutil

    root = tmp_path / "logs"
    shutil.copytree(hostile, root)
    log = root / f"{TOPIC}-0" / f"{0:020d}.log"
    log.write_bytes(log.read_bytes() + f"torn{OSC}\r".encode())
    recovered = cli("recover", root)
    assert recovered.returncode == 0, recovered.stderr
    plain(recovered)
    assert f"{esc(str(log))}: truncated to " in recovered.stdout
    for policy in ("delete", "compact"):
        cleaned = cli("clean", root, "--policy", policy, "--retention-ms", "1", "--min-cleanable-dirty-ratio", "0")
        assert cleaned.returncode == 0, cleaned.stderr
        plain(cleaned)
        assert f"{esc(TOPIC)}-0" in cleaned.stdout, cleaned.stdout


def test_write_errors_quoting_the_input_escape_it(tmp_path):
    name = json.dumps(f"a{OSC}\nforged line")  # a field name given twice
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "write", tmp_path / "out.log"], timeout=120,
                         input=f'{{{name}: 1, {name}: 2}}\n'.encode(), capture_output=True)
    run.stdout, run.stderr = run.stdout.decode(), run.stderr.decode()
    assert run.returncode == 2
    plain(run)
    assert run.stderr == f"error: line 1: {esc(f'a{OSC}')}\\nforged line: given twice in one object\n"
