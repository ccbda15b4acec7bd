"""The long fuzz driver (tests/support/fuzz_long.py) finds what it is for: an untyped exception, an input
that loops, one that takes too much memory, a command that fails; and counts the rest."""
import argparse
import time

import pytest

from tests.support import fuzz_long
from kafkacodec.runtime.errors import InvalidValueError


def fake_readers():
    def parse(data: bytes) -> None:
        if data[:1] == b"\x01":
            raise InvalidValueError("typed", 0, "fake")
        if data[:1] == b"\x02":
            raise TypeError("untyped")
        if data[:1] == b"\x03":
            while True:
                pass
        if data[:1] == b"\x04":
            hog = b"\x01" * (400 << 20)  # noqa: F841 - resident (written), held while the parent looks
            time.sleep(60)  # no CPU time: only the parent's memory watch can stop it

    seeds = [(f"seed{b}", bytes([b]) * 8) for b in range(5)]

    class Exact(fuzz_long.Reader):  # no edits: each input is its seed, so every kind comes up
        def input(self, i, seed):
            return self.seeds[i % len(self.seeds)]

    return {"fake": Exact("fake", seeds, parse)}


@pytest.fixture
def args(tmp_path):
    return argparse.Namespace(inputs=10, seed=1, timeout=1.0, memory_limit=300, out=str(tmp_path / "out"))


def test_each_kind_of_failure_is_found_counted_and_kept(monkeypatch, args, tmp_path):
    monkeypatch.setattr(fuzz_long, "build_readers", fake_readers)
    result = fuzz_long.run_reader("fake", args)
    assert result["inputs"] == 10 and result["ok"] == 2 and result["typed"] == 2
    kinds = result["kinds"]
    assert kinds["hang"] == 2  # seeds 3: stopped by the alarm, on CPU time
    assert kinds["memory"] == 2  # seeds 4: killed by the parent, the worker restarted after it
    assert [k for k in kinds if k.startswith("TypeError at test_fuzz_driver.py:")] and sum(kinds.values()) == 6
    saved = sorted(p.name for p in (tmp_path / "out").glob("*.bin"))
    assert saved == sorted(f"fake-{i}.bin" for i in (2, 3, 4, 7, 8, 9))
    assert "raise TypeError" in (tmp_path / "out" / "fake-2.txt").read_text()
    assert result["peak_rss_mib"] >= 300


def test_mutations_are_the_same_for_the_same_seed_and_input():
    reader = fuzz_long.Reader("r", [("a", bytes(range(200)))], None, fix=lambda d: d[::-1])
    assert reader.input(7, 1) == reader.input(7, 1) != reader.input(8, 1)
    edited = [reader.input(i, 1)[1] for i in range(200)]
    assert sum(e != bytes(range(200)) for e in edited) > 190


def test_a_failing_command_is_reported_with_its_log_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(fuzz_long, "cli_commands", lambda root: [(["verify", str(root)], True),
                                                                 (["no-such-command"], True)])
    args = argparse.Namespace(cli=1, seed=1, cli_timeout=60, memory_limit=1024, out=str(tmp_path / "out"))
    result = fuzz_long.run_cli(args)
    assert result["commands"] == 2 and result["exit_codes"].get("2") == 1  # click's usage error: exit 2, fine
    assert not result["kinds"]
    monkeypatch.setattr(fuzz_long, "cli_commands", lambda root: [(["sample", str(root / "x")], True)])
    result = fuzz_long.run_cli(args)  # a command that changes the log dir it was told to leave alone
    assert list(result["kinds"]) == ["sample: the log dir changed"]
    assert (tmp_path / "out" / "cli-0").is_dir() and "kafkacodec sample" in (tmp_path / "out" / "cli-0.txt").read_text()
