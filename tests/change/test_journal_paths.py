"""An interrupted command's journal names files relative to its log dir: a copy (or a moved log
dir) is finished where it is, and finishing a copy never touches the original."""
import hashlib
import shutil
import subprocess
import sys

import pytest

from tests.support.faults import STRACE

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.unfinished import pending
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import batch_positions

pytestmark = pytest.mark.skipif(STRACE is None, reason="needs strace")
CLEAN = ["clean", "--policy", "compact", "--min-cleanable-dirty-ratio", "0", "--now", "1600000500000",
         "--apply", "--in-place"]


def kafkacodec(*args, cwd=None, kill_at=None):
    inject = ["-e", f"trace={kill_at[0]}", "-e", f"inject={kill_at[0]}:signal=KILL:when={kill_at[1]}"] if kill_at else []
    prefix = [STRACE, "-f", "-qq", "-o", "/dev/null", *inject, "--"] if kill_at else []
    return subprocess.run(prefix + [sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def tree(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file() and p.name != ".kafkacodec.lock"}


def records(root):
    return {f"{p.topic}-{p.partition}": [(r.offset, r.key, r.value) for _, r in partition_records(p)]
            for p in logdir.open_log_dir(root).partitions}


def test_an_interrupted_clean_is_finished_in_the_copy_it_is_resumed_in(tmp_path):
    original = tmp_path / "logs"
    assert kafkacodec("sample", original).returncode == 0
    killed = kafkacodec(*CLEAN, original, kill_at=("rename", 9))
    assert killed.returncode in (-9, 137) and pending(original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    before = tree(original)
    resumed = kafkacodec("recover", copy)
    assert resumed.returncode == 0, resumed.stderr
    assert tree(original) == before  # the original is left as the kill left it
    assert not pending(copy)
    assert kafkacodec("verify", copy).returncode == 0
    assert kafkacodec("recover", original).returncode == 0  # the original finishes the same way
    assert records(copy) == records(original)


def test_an_interrupted_recover_is_finished_where_it_is_not_where_it_was_started(tmp_path):
    damaged = tmp_path / "logs"
    assert kafkacodec("sample", damaged).returncode == 0
    for part in logdir.open_log_dir(damaged).partitions:  # a bad CRC in the middle of each first segment
        log = part.segments[0].log
        data = bytearray(log.read_bytes())
        starts = batch_positions(bytes(data))
        if len(starts) > 2:
            data[starts[len(starts) // 2] + 30] ^= 0xFF
            log.write_bytes(bytes(data))
    reference = tmp_path / "reference"
    shutil.copytree(damaged, reference)
    killed = kafkacodec("recover", "logs", cwd=tmp_path, kill_at=("truncate", 2))  # started with a relative path
    assert killed.returncode in (-9, 137) and pending(damaged)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(reference, elsewhere / "logs")  # another log dir at the same relative path
    before = tree(elsewhere)
    moved = tmp_path / "moved"
    damaged.rename(moved)
    assert kafkacodec("recover", moved, cwd=elsewhere).returncode == 0
    assert tree(elsewhere) == before  # a log dir of the same relative name elsewhere is not touched
    assert kafkacodec("recover", reference).returncode == 0
    assert records(moved) == records(reference) and not pending(moved)
    assert kafkacodec("verify", moved).returncode == 0
