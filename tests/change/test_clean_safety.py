"""`clean` on damaged and unusual input: damage refused with nothing changed, or cleaned past
with what was skipped reported and kept; the log dir's lock; leftovers of interrupted runs."""
import hashlib
import os
import shutil
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.compaction import CompactionConfig, compact
from kafkacodec.storage.change.lock import holding
from kafkacodec.storage.segments.reader import partition_batches, partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter

NOW = 1_800_000_000_000
DAY = 24 * 3600 * 1000
COMPACT = ["--policy", "compact", "--now", str(NOW), "--min-cleanable-dirty-ratio", "0"]


def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def tree(path):
    """Every file below `path` with a digest of its bytes."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file() and p.name != ".kafkacodec.lock"}


def keyed_log(path, batches=45, keys=25):
    """Three segments of v2 batches over a few keys: much for the cleaner to remove."""
    with PartitionWriter(path, segment_bytes=4000) as w:
        for i in range(batches):
            w.append([{"key": b"k%d" % ((i * 3 + j) % keys), "value": b"v%d." % (i * 3 + j) + b"x" * 60,
                       "timestamp": NOW - 2 * DAY + i} for j in range(3)])
    part = logdir.open_partition(path)
    assert len(part.segments) >= 3
    return part


def damage_a_batch(seg, n):
    b = scan_file(seg.log).batches[n]
    data = bytearray(seg.log.read_bytes())
    data[b.position + 40] ^= 0xFF  # inside the CRC's range
    seg.log.write_bytes(bytes(data))
    return b


def test_damage_is_refused_and_nothing_changes(tmp_path):
    """A damaged batch in the active segment used to end the reading of that segment silently:
    every later batch was lost from the cleaned copy, and clean exited 0."""
    part = keyed_log(tmp_path / "logs" / "t-0")
    bad = damage_a_batch(part.segments[-1], 1)
    before = tree(tmp_path / "logs")
    for args in ([], ["--apply", "--in-place"], ["--apply", "--out", tmp_path / "out"]):
        run = kafkacodec("clean", tmp_path / "logs", *COMPACT, *args)
        assert run.returncode == 1, run.stdout + run.stderr
        assert f"{part.segments[-1].log}: byte {bad.position}:" in run.stderr and "Traceback" not in run.stderr
        assert "nothing was changed" in run.stderr
        assert tree(tmp_path / "logs") == before
        assert not (tmp_path / "out" / "t-0").exists()


def test_skip_corrupt_cleans_past_the_damage_reports_it_and_keeps_its_bytes(tmp_path):
    part = keyed_log(tmp_path / "logs" / "t-0")
    active = part.segments[-1]
    bad = damage_a_batch(active, 1)
    damaged = active.log.read_bytes()[bad.position:bad.position + bad.size]
    # the answer: the cleaner's over the same log without the damaged batch
    reference = keyed_log(tmp_path / "ref" / "t-0")
    data = reference.segments[-1].log.read_bytes()
    reference.segments[-1].log.write_bytes(data[:bad.position] + data[bad.position + bad.size:])
    compact(logdir.open_partition(reference.path), CompactionConfig(min_cleanable_dirty_ratio=0), NOW,
            out=tmp_path / "ref-out")
    expected = [(r.offset, r.key, r.value) for _, r in partition_records(
        logdir.open_partition(tmp_path / "ref-out" / "t-0"))]
    dry = kafkacodec("clean", tmp_path / "logs", *COMPACT, "--skip-corrupt")
    assert dry.returncode == 0, dry.stderr
    span = f"{active.log}: bytes {bad.position}..{bad.position + bad.size} ({bad.size} bytes) skipped"
    assert f"would skip: {span}" in dry.stdout
    run = kafkacodec("clean", tmp_path / "logs", *COMPACT, "--skip-corrupt", "--apply", "--in-place")
    assert run.returncode == 0, run.stderr
    kept = tmp_path / "logs" / "t-0" / f"{active.log.name}.corrupt-{bad.position}"
    assert f"skipped: {span}" in run.stdout and f"kept in {kept}" in run.stdout
    assert kept.read_bytes() == damaged
    cleaned = logdir.open_partition(tmp_path / "logs" / "t-0")
    assert [(r.offset, r.key, r.value) for _, r in partition_records(cleaned)] == expected
    assert all(r.ok for r in verify_partition(cleaned))
    # the newest value of every key the damage did not take is there
    newest = {}
    for _, r in partition_records(logdir.open_partition(tmp_path / "ref" / "t-0")):
        newest[r.key] = r.value
    assert {k: v for _, k, v in expected} == newest


def test_a_delete_retention_at_the_largest_long_keeps_tombstones_for_ever(tmp_path):
    with PartitionWriter(tmp_path / "logs" / "t-0", segment_bytes=1) as w:
        w.append([{"key": b"a", "value": b"1", "timestamp": NOW - DAY}])
        w.append([{"key": b"a", "value": None, "timestamp": NOW - DAY}])
        w.append([{"key": b"b", "value": b"2", "timestamp": NOW - DAY}])
    run = kafkacodec("clean", tmp_path / "logs", *COMPACT, "--delete-retention-ms", 2 ** 63 - 1,
                     "--apply", "--in-place")
    assert run.returncode == 0, run.stderr
    part = logdir.open_partition(tmp_path / "logs" / "t-0")
    tomb = [b.entry for _, b in partition_batches(part) if b.entry.base_offset == 1][0]
    assert tomb.has_delete_horizon and tomb.base_timestamp == 2 ** 63 - 1
    assert [(r.offset, r.value, r.timestamp) for _, r in partition_records(part)] == [
        (1, None, NOW - DAY), (2, b"2", NOW - DAY)]
    too_far = kafkacodec("clean", tmp_path / "logs", *COMPACT, "--delete-retention-ms", 2 ** 63)
    assert too_far.returncode == 2 and "Traceback" not in too_far.stderr


def test_a_time_index_with_a_stray_byte_is_named(tmp_path):
    part = keyed_log(tmp_path / "logs" / "t-0")
    with open(part.segments[0].time_index, "ab") as f:
        f.write(b"\x01")
    run = kafkacodec("clean", tmp_path / "logs", *COMPACT)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert f"error: {part.segments[0].time_index}: byte" in run.stderr


def test_a_second_command_on_a_locked_log_dir_is_refused(tmp_path):
    keyed_log(tmp_path / "logs" / "t-0")
    before = tree(tmp_path / "logs")
    with holding(tmp_path / "logs", "clean"):
        for args in (["clean", tmp_path / "logs", *COMPACT, "--apply", "--in-place"],
                     ["clean", tmp_path / "logs" / "t-0", *COMPACT, "--apply", "--in-place"],
                     ["recover", tmp_path / "logs" / "t-0"]):
            run = kafkacodec(*args)
            assert run.returncode == 2, run.stdout + run.stderr
            assert f"{tmp_path / 'logs' / '.kafkacodec.lock'}: locked by another kafkacodec command " \
                   f"(pid {os.getpid()}, clean)" in run.stderr
    assert tree(tmp_path / "logs") == before
    assert kafkacodec("clean", tmp_path / "logs", *COMPACT, "--apply", "--in-place").returncode == 0


def test_keep_old_moves_the_replaced_partition_aside(tmp_path):
    keyed_log(tmp_path / "logs" / "t-0")
    original = tree(tmp_path / "logs" / "t-0")
    (tmp_path / "old").mkdir()
    run = kafkacodec("clean", tmp_path / "logs", *COMPACT, "--apply", "--in-place", "--keep-old", tmp_path / "old")
    assert run.returncode == 0, run.stderr
    assert tree(tmp_path / "old" / "t-0") == original
    assert tree(tmp_path / "logs" / "t-0") != original
    assert kafkacodec("clean", tmp_path / "logs", *COMPACT, "--apply", "--in-place", "--keep-old",
                      tmp_path / "logs").returncode == 2  # never inside the log dir


def test_a_partition_left_aside_by_an_earlier_version_is_put_back(tmp_path):
    """Versions without a journal renamed a partition to <p>.kafkacodec-old before moving its
    copy in; a kill in between left the partition missing, and a re-run did not restore it."""
    keyed_log(tmp_path / "logs" / "t-0")
    original = tree(tmp_path / "logs")
    (tmp_path / "logs" / "t-0").rename(tmp_path / "logs" / "t-0.kafkacodec-old")
    (tmp_path / "logs" / ".kafkacodec-clean").mkdir()
    from kafkacodec.storage.change.unfinished import pending
    assert len(pending(tmp_path / "logs")) == 2
    checked = kafkacodec("verify", tmp_path / "logs")  # read-only: says what is unfinished, changes nothing
    assert checked.returncode == 1 and "t-0.kafkacodec-old" in checked.stderr and "kafkacodec recover" in checked.stderr
    run = kafkacodec("recover", tmp_path / "logs")
    assert run.returncode == 0 and "put back" in run.stdout, run.stdout + run.stderr
    assert tree(tmp_path / "logs") == original and not pending(tmp_path / "logs")
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [".kafkacodec.lock", "t-0"]


def test_an_original_left_beside_its_copy_goes_only_once_the_copy_verifies(tmp_path):
    """Both <p> and <p>.kafkacodec-old (those versions flushed nothing): the old copy is removed
    only when <p> reads whole; otherwise both stay and recover says what to do."""
    logs = tmp_path / "logs"
    part = keyed_log(logs / "t-0")
    shutil.copytree(logs / "t-0", logs / "t-0.kafkacodec-old")
    kept = tree(logs / "t-0.kafkacodec-old")
    damage_a_batch(part.segments[0], 2)  # the copy that replaced it did not survive whole
    run = kafkacodec("recover", "--dry-run", logs)
    assert run.returncode == 1 and "does not verify: neither is removed" in run.stderr, run.stdout + run.stderr
    assert tree(logs / "t-0.kafkacodec-old") == kept
    (logs / "t-0").rename(tmp_path / "damaged")  # the operator keeps the original...
    shutil.copytree(logs / "t-0.kafkacodec-old", logs / "t-0")  # ...and a whole copy of it
    run = kafkacodec("recover", logs)
    assert run.returncode == 0 and "remove" in run.stdout and "t-0.kafkacodec-old" in run.stdout, run.stderr
    assert sorted(p.name for p in logs.iterdir()) == [".kafkacodec.lock", "t-0"] and tree(logs / "t-0") == kept


def test_reindex_takes_the_lock_when_it_writes_and_not_when_it_checks(tmp_path):
    part = keyed_log(tmp_path / "logs" / "t-0")
    log = part.segments[0].log
    with holding(tmp_path / "logs", "recover"):
        run = kafkacodec("reindex", log)
        assert run.returncode == 2 and "locked by another kafkacodec command" in run.stderr
        assert kafkacodec("reindex", "--check", log).returncode == 0
    assert kafkacodec("reindex", log).returncode == 0


def test_the_lock_is_the_real_log_dirs_whatever_the_path_taken(tmp_path):
    """A partition reached through a symbolic link shares the lock of the log dir it is in."""
    from kafkacodec.storage.change.lock import log_root

    keyed_log(tmp_path / "logs" / "t-0")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(tmp_path / "logs" / "t-0")
    assert log_root(tmp_path / "elsewhere" / "link") == (tmp_path / "logs").resolve()
    with holding((tmp_path / "logs").resolve(), "clean"):
        run = kafkacodec("reindex", tmp_path / "elsewhere" / "link" / "00000000000000000000.log")
        assert run.returncode == 2 and "kafkacodec.lock" in run.stderr, run.stderr


def test_out_inside_the_log_dir_is_refused(tmp_path):
    logs = tmp_path / "logs"
    keyed_log(logs / "t-0")
    original = tree(logs)
    (tmp_path / "link").symlink_to(logs)
    for source, out in ((logs, logs / "t-0"), (logs, logs / "cleaned"), (logs / "t-0", logs / "t-1"),
                        (logs, tmp_path / "link" / "cleaned")):
        run = kafkacodec("clean", source, *COMPACT, "--apply", "--out", out)
        assert run.returncode == 2 and "must be outside the log dir" in run.stderr, (out, run.stderr)
    assert tree(logs) == original
    run = kafkacodec("clean", logs, *COMPACT, "--apply", "--out", tmp_path / "cleaned")
    assert run.returncode == 0 and (tmp_path / "cleaned" / "t-0").is_dir(), run.stderr
