"""`kafkacodec dump-log` against golden files (tests/golden/dump_log): each holds the arguments,
the exit status and the output Kafka 4.1.1's kafka-dump-log gives for one of the files in
tests/fixtures/dump_log, its expected text written from Kafka's source (cited in its header).
A stderr line starting `starts:` is matched as a prefix: where Kafka's tool fails it prints a
Java stack trace, and ours a one-line error naming the file and the byte."""
import os
import subprocess
import sys

import pytest

from tests.support import TESTS

GOLDEN = TESTS / "golden" / "dump_log"
FIXTURES = TESTS / "fixtures" / "dump_log"


def golden(name: str) -> dict:
    text = (GOLDEN / name).read_text()
    header, _, rest = text.partition("== stdout\n")
    out, _, err = rest.partition("== stderr\n")
    fields = dict(line[2:].split(": ", 1) for line in header.splitlines() if line.startswith(("# args", "# exit")))
    return {"args": fields["args"].split(), "exit": int(fields["exit"]), "stdout": out.splitlines(),
            "stderr": err.splitlines(), "cites": "Kafka 4.1.1:" in header}


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.txt")))
def test_dump_log_prints_what_kafka_prints(name):
    want = golden(name)
    assert want["cites"], f"{name} does not cite Kafka's source"
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", *want["args"]], cwd=FIXTURES,
                         capture_output=True, text=True)
    here = os.path.realpath(FIXTURES)
    assert run.returncode == want["exit"], run.stderr
    assert run.stdout.splitlines() == want["stdout"]
    got_err = run.stderr.splitlines()
    assert len(got_err) >= len(want["stderr"]) if any(w.startswith("starts: ") for w in want["stderr"]) \
        else len(got_err) == len(want["stderr"]), run.stderr
    for got, expected in zip(got_err, want["stderr"]):
        expected = expected.replace("{abs}", here)
        if expected.startswith("starts: "):
            assert got.startswith(expected[len("starts: "):]), (got, expected)
        else:
            assert got == expected


def test_the_fixtures_are_what_make_py_packs(tmp_path):
    """The committed bytes are make.py's, packed by hand from Kafka's rules."""
    import shutil
    shutil.copy(FIXTURES / "make.py", tmp_path / "make.py")
    subprocess.run([sys.executable, "make.py"], cwd=tmp_path, check=True)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and p.name != "make.py")
    kept = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*") if p.is_file() and p.name != "make.py")
    assert made == kept
    assert all((tmp_path / p).read_bytes() == (FIXTURES / p).read_bytes() for p in made)


def test_options_are_parsed_as_kafkas_tool_parses_them():
    """`-name value`, `--name=value`, arguments that are no option ignored, trailing empty file
    names dropped (Java's split), the value of a required option taken even when it looks like one."""
    same = [["--files", "v2/00000000000000000000.log"], ["-files", "v2/00000000000000000000.log", "stray"],
            ["--files=v2/00000000000000000000.log,"], ["--files", "v2/00000000000000000000.log", "--", "--json"]]
    outputs = {subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", *args], cwd=FIXTURES,
                              capture_output=True, text=True).stdout for args in same}
    assert len(outputs) == 1 and outputs.pop().startswith("Dumping v2/00000000000000000000.log\n")
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", "--files", "--deep-iteration"],
                         cwd=FIXTURES, capture_output=True, text=True)
    assert run.stdout.startswith("Dumping --deep-iteration\n") and run.returncode == 1
    for args in ([], ["--help"]):
        run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", *args], capture_output=True, text=True)
        assert run.returncode == 1 and run.stdout == "" and "--files <String: file1, file2, ...>" in run.stderr
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", "--files", "a.log", "--files", "b.log"],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "multiple arguments for option files" in run.stderr
