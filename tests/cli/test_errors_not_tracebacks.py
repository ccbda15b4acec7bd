"""Input that used to end in a Python traceback ends in an `error:` line (or click's usage error)
naming what is wrong: times and offsets of more than 4,300 digits (Python's limit on converting
digits to an int), a `quorum-state` or a tiered-storage `.rsm-manifest` nested deeper than the
JSON reader goes (RecursionError), and a `pack-env --python` interpreter that hangs or prints
more than its answer."""
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kafkacodec.cli import main
from kafkacodec.cli.commands import packenv
from kafkacodec.pipeline.files import list_log
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.samples.controller import write_metadata_sample as write_controller_sample
from kafkacodec.storage.change.writer import PartitionWriter

HUGE = "9" * 5000


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("issue")
    write_sample(root / "logs")
    write_controller_sample(root / "kraft")
    return root


@pytest.mark.parametrize("args", [
    ["find", "LOGS", "--timestamp", HUGE], ["offsets", "LOGS", "--time", HUGE], ["offsets", "LOGS", "--time", "-" + HUGE],
    ["metadata", "KRAFT", "--at-time", HUGE], ["metadata", "KRAFT", "--diff", HUGE, "1"],
    ["metadata", "KRAFT", "--diff", "99999999999999999999", "1"]])
def test_numbers_too_long_for_an_int_are_usage_errors(logs, args):
    run = kc(*[str(logs / "logs") if a == "LOGS" else str(logs / "kraft") if a == "KRAFT" else a for a in args])
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "is beyond" in run.stderr
    assert len(run.stderr) < 1000  # the number is not echoed whole


def test_a_deeply_nested_quorum_state_is_an_error(tmp_path):
    write_controller_sample(tmp_path / "kraft")
    (state,) = (tmp_path / "kraft").rglob("quorum-state")
    state.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    run = kc("metadata", tmp_path / "kraft")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.stderr.startswith(f"error: {state}: not JSON Kafka writes: nested deeper")


def test_a_deeply_nested_segment_manifest_passes_its_segment_over(tmp_path):
    with PartitionWriter(tmp_path / "live" / "t-0", segment_bytes=300) as w:
        for i in range(6):
            w.append([{"value": b"v%d" % i * 40}])
    target = tmp_path / "bucket" / "t-AAAAAAAAAAAAAAAAAAAAAA" / "0"
    target.mkdir(parents=True)
    logs = sorted((tmp_path / "live" / "t-0").glob("*.log"))
    assert len(logs) >= 2
    for n, log in enumerate(logs):
        stem = target / f"{log.stem}-seg{n:03d}AAAAAAAAAAAAAAAAA"[:len(log.stem) + 23]
        shutil.copyfile(log, f"{stem}.log")
        manifest = '{"compression": false}' if n else "[" * 100_000 + "]" * 100_000
        stem.with_name(stem.name + ".rsm-manifest").write_text(manifest)
    listing = list_log(str(tmp_path / "bucket"))
    (skipped,) = [why for path, why in listing.skipped if path.endswith(".log")]
    assert "manifest is unreadable" in skipped
    assert len(listing.partitions[0].segments) == len(logs) - 1


def script(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


def test_pack_env_stops_an_interpreter_that_hangs_before_writing_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(packenv, "VERSION_SECONDS", 2)
    hangs = script(tmp_path / "python-that-hangs", "exec sleep 60\n")
    out = tmp_path / "deps.tar.gz"
    result = CliRunner().invoke(main, ["pack-env", str(out), "--python", str(hangs)])
    assert result.exit_code == 1, result.output
    assert f"error: {hangs} did not answer within 2 seconds" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not out.exists() and not os.path.exists(f"{out}.part")


def test_pack_env_finds_the_answer_among_other_output(tmp_path, monkeypatch):
    """A wrapper that prints a banner before the interpreter runs and a line after it."""
    one = tmp_path / "marker.txt"
    one.write_text("x")
    monkeypatch.setattr(packenv, "collect", lambda dists: packenv.Contents(files={"marker.txt": one}))
    chatty = script(tmp_path / "python-with-banner",
                    f'echo "welcome to this node"\n"{sys.executable}" "$@"\nstatus=$?\necho "bye"\nexit $status\n')
    out = tmp_path / "deps.tar.gz"
    result = CliRunner().invoke(main, ["pack-env", str(out), "--python", str(chatty)])
    assert result.exit_code == 0, result.output
    assert f"checked: {chatty} (Python {'%d.%d.%d' % sys.version_info[:3]}) imports kafkacodec from it" in result.output
    silent = script(tmp_path / "python-that-says-nothing", f'"{sys.executable}" -c "print(42)"\n')
    result = CliRunner().invoke(main, ["pack-env", "--force", str(out), "--python", str(silent)])
    assert result.exit_code == 1 and f"error: {silent} gave no answer when asked its version; it printed: 42" \
        in result.output
