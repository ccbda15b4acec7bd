"""The kafka-log sink's job commit (driven without Spark, as test_sink_faults drives it) killed at
every system call that changes files, in a log dir with a broker's server.log at its root, and
in one whose partition is a symbolic link; then `kafkacodec recover`."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from tests.support import faults
from tests.support.faults import Case, every_point
from tests.pipeline.test_sink_faults import COMMIT, OLD, check, prepare, records

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

SERVER_LOG = b"[2024-05-01 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n" * 20


def tree(path: Path) -> dict:
    """Every file below `path` (through symbolic links) with a digest of its bytes, and each link."""
    out = {}
    for top, dirs, files in os.walk(path, followlinks=True):
        for name in dirs + files:
            p = os.path.join(top, name)
            if os.path.islink(p):
                out[os.path.relpath(p, path) + " ->"] = os.readlink(p)
            if name in files and name != ".kafkacodec.lock":
                with open(p, "rb") as f:
                    out[os.path.relpath(p, path)] = hashlib.sha256(f.read()).hexdigest()
    return out


def test_a_commit_beside_a_server_log_killed_anywhere_leaves_the_log_dir_before_or_after_the_job(tmp_path):
    """A kill while the commit published left no partition at the root (all in .kafkacodec-clean/)
    beside server.log: recover looked for the journal in the parent, and verify said ok."""
    def prepare_beside_server_log(work: Path) -> None:
        prepare(work)
        (work / "out" / "server.log").write_bytes(SERVER_LOG)

    def check_beside_server_log(work: Path, output: str) -> str | None:
        if (work / "out" / "server.log").read_bytes() != SERVER_LOG:
            return "server.log changed"
        if faults.run_here(["verify", "{work}/out"], work)[0] != 0:
            return "the log dir does not verify"
        return check(work, output)

    case = Case("sink-commit-server-log", [sys.executable, "-c", COMMIT, "{work}"], prepare_beside_server_log,
                resume=[["recover", "{work}/out"]], check=check_beside_server_log)
    points, problems = every_point(case, tmp_path)
    assert points > 20
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])


def test_a_commit_over_a_linked_partition_killed_anywhere_changes_nothing(tmp_path):
    """Overwriting a partition that is a symbolic link is refused once the job's partitions are
    gathered (a kill anywhere before, during or after the refusal leaves the log dir as it was)."""
    def prepare_linked(work: Path) -> None:
        prepare(work)
        (work / "disk2").mkdir()
        (work / "out" / "t-0").rename(work / "disk2" / "t-0")
        (work / "out" / "t-0").symlink_to(Path("..") / "disk2" / "t-0")  # each copy links to its own

    template = tmp_path / "template"
    template.mkdir()
    prepare_linked(template)
    before = {k: v for k, v in tree(template).items() if not k.startswith("out/_temporary")}

    def check_linked(work: Path, _output: str) -> str | None:
        if not (work / "out" / "t-0").is_symlink():
            return "the link was replaced"
        if records(work / "out" / "t-0") != [(i, v) for i, v in enumerate(OLD)]:
            return "t-0 changed"
        now = {k: v for k, v in tree(work).items() if not k.startswith("out/_temporary") and k != "commit.pickle"}
        if now != {k: v for k, v in before.items() if k != "commit.pickle"}:
            return f"the files changed: {sorted(set(now.items()) ^ set(before.items()))[:6]}"
        return None

    case = Case("sink-commit-linked", [sys.executable, "-c", COMMIT, "{work}"], prepare_linked,
                resume=[["recover", "{work}/out"], ["verify", "{work}/out"]], check=check_linked, status=1)
    points, problems = every_point(case, tmp_path)
    assert points > 10
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])
