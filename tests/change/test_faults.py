"""Crash consistency of every command that changes files, by injection: each is killed (SIGKILL)
at every call it makes of a system call that changes files (rename, unlink, write, truncate,
fsync, mkdir, link, and openat with O_CREAT), then the command the README names for resuming
is run, and what is on disk is compared with a reference: no record lost, nothing kept aside
lost, `kafkacodec verify` passing, nothing left behind. Then ENOSPC on a small tmpfs, read-only
mounts and concurrent runs. Needs strace (and root for the mounts); skipped otherwise."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support import faults
from tests.support.faults import Case, every_point, kafkacodec

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.guarded import partition_batches
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.change.writer import PartitionWriter

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

NOW = 1_800_000_000_000
DAY = 24 * 3600 * 1000
ABORT = {"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00", "timestamp": NOW - 3 * DAY}
CLEAN = ["--policy", "compact,delete", "--now", str(NOW), "--retention-ms", str(7 * DAY),
         "--min-cleanable-dirty-ratio", "0"]
LEFT_BEHIND = (".kafkacodec-tmp", ".cleaning", ".kafkacodec-clean", ".kafkacodec-journal", ".kafkacodec-old",
               ".index.tmp", ".timeindex.tmp", ".txnindex.tmp", ".snapshot.tmp")


def log_dir(root: Path) -> None:
    """Two partitions of a few KB: keys to compact with a tombstone and an aborted and a committed
    transaction (t-0), and segments past retention (t-1)."""
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    with PartitionWriter(root / "t-0", segment_bytes=1000) as w:
        for i in range(12):
            w.append([{"key": b"k%d" % ((i + j) % 5), "value": b"v%d-%d" % (i, j) + b"." * 40,
                       "timestamp": NOW - 5 * DAY + i, "headers": [("h", b"%d" % i)]} for j in range(2)])
            if i == 4:
                w.append([{"key": b"k1", "value": None, "timestamp": NOW - 4 * DAY}])
            if i == 6:
                w.append([{"key": b"k2", "value": b"aborted", "timestamp": NOW - 3 * DAY}], base_sequence=0, **txn)
                w.append([ABORT], is_control=True, **txn)
            if i == 8:
                w.append([{"key": b"k3", "value": b"committed", "timestamp": NOW - 3 * DAY}], base_sequence=1, **txn)
                w.append([dict(ABORT, key=b"\x00\x00\x00\x01")], is_control=True, **txn)
    with PartitionWriter(root / "t-1", segment_bytes=600) as w:
        for i in range(6):
            w.append([{"key": b"x%d" % j, "value": b"w%d" % i + b"-" * 60, "timestamp": NOW - (16 - i * 2) * DAY}
                      for j in range(2)])
    (root / "meta.properties").write_text("version=1\n")


def contents(root: Path) -> dict:
    """Per partition: every record (offset, key, value, headers), refusing damage, and the bytes
    of every file kept aside."""
    out = {}
    for part in logdir.partitions_at(root):
        records = [(r.offset, r.key, r.value, tuple((h.key, h.value) for h in r.headers))
                   for _, b in partition_batches(part) for r in b]
        kept = {f.name: f.read_bytes() for f in part.path.iterdir() if ".corrupt-" in f.name}
        out[part.path.name] = (records, kept)
    return out


def left_behind(work: Path) -> list[str]:
    return [str(p) for p in work.rglob("*") if any(mark in p.name for mark in LEFT_BEHIND)]


def reference(case: Case, tmp: Path) -> Path:
    """The files after the command ran once, undisturbed."""
    work = tmp / f"{case.name}-reference"
    work.mkdir()
    case.prepare(work)
    done = faults.run(case.argv, work, case.stdin)
    assert done.returncode == 0, done.stderr.decode()
    return work


def report(case: Case, tmp: Path, only: tuple[str, ...] = ()) -> None:
    start = time.monotonic()
    points, problems = every_point(case, tmp, only=only)
    print(f"\n{case.name}: {points} injection points, {time.monotonic() - start:.1f} s")
    assert points > 0
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])


def test_the_injection_catches_a_command_that_is_not_crash_consistent(tmp_path):
    """A file rewritten in place (truncated, then written in two parts) is torn by a kill at its
    writes: the harness must find those points, or its passes above would say nothing."""
    script = ("import sys; f = open(sys.argv[1] + '/f', 'w'); f.write('new-'); f.flush(); f.write('content'); "
              "f.close()")
    case = Case("torn", [sys.executable, "-c", script, "{work}"], lambda work: (work / "f").write_text("old content"),
                resume=[])
    case.check = lambda work, _: None if (work / "f").read_text() in ("old content", "new-content") else "torn"
    points, problems = every_point(case, tmp_path)
    assert len(problems) == 2 and all(p.endswith(": torn") for p in problems), problems
    assert {p.split(":")[0] for p in problems} == {"write#1", "write#2"}


# -- clean --------------------------------------------------------------------------------------
def test_clean_in_place_killed_anywhere_leaves_the_log_before_or_after(tmp_path):
    """A kill then `recover`: every partition as it was, or every one cleaned; never a mix,
    never a partition missing (a kill between the swap's renames used to lose it)."""
    prepare = lambda work: log_dir(work / "logs")  # noqa: E731
    case = Case("clean-in-place", kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"), prepare,
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]])
    before_dir = tmp_path / "before"
    before_dir.mkdir()
    prepare(before_dir)
    before, after = contents(before_dir / "logs"), contents(reference(case, tmp_path) / "logs")
    assert before != after and set(before) == set(after) == {"t-0", "t-1"}

    def check(work, _):
        now = contents(work / "logs")
        if now not in (before, after):
            return "the log is neither as it was nor cleaned: " + ", ".join(
                p for p in sorted(set(now) | set(before)) if now.get(p) not in (before[p], after[p]))
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


def test_clean_in_place_run_again_after_a_kill_in_its_swap_finishes_it(tmp_path):
    """The command itself resumes too: killed at any rename or removal (the swap, the removal of
    the originals; a kill there used to make every later clean --in-place fail), run again, it
    finishes and cleans (cleaning is idempotent: the same records)."""
    argv = ["clean", "{work}/logs", *CLEAN, "--apply", "--in-place"]
    case = Case("clean-again", kafkacodec(*argv), lambda work: log_dir(work / "logs"),
                resume=[argv, ["verify", "{work}/logs"]])
    after = contents(reference(case, tmp_path) / "logs")

    def check(work, _):
        if contents(work / "logs") != after:
            return "the log is not the cleaned one"
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path, only=("rename", "unlink", "unlinkat", "rmdir"))


def test_clean_out_killed_anywhere_leaves_nothing_or_the_whole_copy(tmp_path):
    prepare = lambda work: log_dir(work / "logs")  # noqa: E731
    case = Case("clean-out", kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--out", "{work}/out"), prepare,
                resume=[])
    source_dir = tmp_path / "source"
    source_dir.mkdir()
    prepare(source_dir)
    source = contents(source_dir / "logs")
    after = contents(reference(case, tmp_path) / "out")

    def check(work, _):
        if (work / "out").exists():  # where the journal is: `recover` there finishes or rolls back
            status, output = faults.run_here(["recover", "{work}/out"], work)
            if status != 0:
                return f"recover exited {status}: {output}"
        if contents(work / "logs") != source:
            return "the source changed"
        out = contents(work / "out") if (work / "out").exists() else {}
        if out not in ({}, after):
            return f"the copy is partial: {sorted(out)}"
        if out and faults.run_here(["verify", "{work}/out"], work)[0] != 0:
            return "the copy does not verify"
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


# -- a log dir as a broker leaves it: its own server.log at the root; a partition linked in ------
SERVER_LOG = b"[2024-05-01 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n" * 20


def test_clean_in_place_beside_a_server_log_killed_anywhere_leaves_the_log_before_or_after(tmp_path):
    """server.log made the log dir one empty partition: clean saw nothing, recover looked for the
    journal in the parent directory."""
    def prepare(work):
        log_dir(work / "logs")
        (work / "logs" / "server.log").write_bytes(SERVER_LOG)
    case = Case("clean-server-log", kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"), prepare,
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]])
    before_dir = tmp_path / "before"
    before_dir.mkdir()
    prepare(before_dir)
    before, after = contents(before_dir / "logs"), contents(reference(case, tmp_path) / "logs")
    assert before != after and set(before) == set(after) == {"t-0", "t-1"}

    def check(work, _):
        now = contents(work / "logs")
        if now not in (before, after):
            return "the log is neither as it was nor cleaned"
        if (work / "logs" / "server.log").read_bytes() != SERVER_LOG:
            return "server.log changed"
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


def linked_log_dir(work: Path) -> None:
    """t-1 (which the clean changes) on another disk, linked from the log dir (a relative link:
    every copy of the work directory links to its own)."""
    log_dir(work / "logs")
    (work / "disk2").mkdir()
    (work / "logs" / "t-1").rename(work / "disk2" / "t-1")
    (work / "logs" / "t-1").symlink_to(Path("..") / "disk2" / "t-1")


def test_clean_in_place_of_a_linked_partition_killed_anywhere_changes_nothing(tmp_path):
    """Replacing the link used to fail on removing it (an absolute link), leaving a journal no
    command could finish, or drop it (a relative one) and the data it pointed to with it. Now
    the clean is refused once its copies are built: killed anywhere, the log is as it was."""
    case = Case("clean-linked", kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"), linked_log_dir,
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]], status=2)
    before_dir = tmp_path / "before"
    before_dir.mkdir()
    linked_log_dir(before_dir)
    before = contents(before_dir / "logs")
    assert set(before) == {"t-0", "t-1"}

    def check(work, output):
        if not (work / "logs" / "t-1").is_symlink():
            return "the link was replaced"
        if contents(work / "logs") != before:
            return "the log changed"
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


# -- recover ------------------------------------------------------------------------------------
def damaged_log_dir(work: Path) -> None:
    """The log dir damaged three ways: a bad CRC in a middle segment of t-0, a torn batch at the
    end of t-1, and an aborted transaction missing from t-0's .txnindex."""
    log_dir(work / "logs")
    t0 = logdir.open_partition(work / "logs" / "t-0")
    middle = t0.segments[1].log
    data = bytearray(middle.read_bytes())
    data[scan_file(middle).batches[1].position + 30] ^= 0xFF
    middle.write_bytes(bytes(data))
    for seg in t0.segments:
        if seg.txn_index is not None:
            seg.txn_index.unlink()
    t1 = logdir.open_partition(work / "logs" / "t-1")
    last = t1.segments[-1].log
    with open(last, "ab") as f:
        f.write(last.read_bytes()[:70])  # half a batch


def test_recover_killed_anywhere_finishes_on_the_next_run(tmp_path):
    case = Case("recover", kafkacodec("recover", "{work}/logs"), damaged_log_dir,
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]])
    ref = reference(case, tmp_path)
    after = contents(ref / "logs")
    assert any(kept for _, kept in after.values())
    indexes = {p.relative_to(ref): p.read_bytes() for p in (ref / "logs").rglob("*index")}

    def check(work, _):
        if contents(work / "logs") != after:
            return "records or kept bytes differ from one undisturbed recovery"
        now = {p.relative_to(work): p.read_bytes() for p in (work / "logs").rglob("*index")}
        if now != indexes:
            return "indexes differ: " + ", ".join(str(p) for p in set(now) ^ set(indexes) or
                                                  [p for p in now if now[p] != indexes.get(p)])
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


# -- the other commands that write files ----------------------------------------------------------
def test_reindex_killed_anywhere_is_finished_by_running_it_again(tmp_path):
    def prepare(work):
        log_dir(work / "logs")
        for p in (work / "logs" / "t-0").glob("00000000000000000000.*index"):
            p.unlink()
    args = ["reindex", "{work}/logs/t-0/00000000000000000000.log"]
    case = Case("reindex", kafkacodec(*args), prepare, resume=[args, ["verify", "{work}/logs"]])
    ref = reference(case, tmp_path)
    want = {p.name: p.read_bytes() for p in (ref / "logs" / "t-0").glob("00000000000000000000.*")}

    def check(work, _):
        now = {p.name: p.read_bytes() for p in (work / "logs" / "t-0").glob("00000000000000000000.*")}
        return None if now == want else f"files differ: {sorted(set(now) ^ set(want))}"
    case.check = check
    report(case, tmp_path)


def segment_records(path: Path) -> list:
    part = logdir.Partition("x", 0, path.parent, [logdir.segment_of(path)])
    return [(r.offset, r.key, r.value) for _, b in partition_batches(part) for r in b]


def test_convert_killed_anywhere_leaves_no_partial_output(tmp_path):
    def prepare(work):
        log_dir(work / "logs")
        shutil.copy(work / "logs" / "t-0" / "00000000000000000000.log", work / "in.log")
        shutil.rmtree(work / "logs")
    args = ["convert", "--magic", "1", "{work}/in.log", "{work}/out.log"]
    case = Case("convert", kafkacodec(*args), prepare, resume=[args + ["--force"]])
    want = segment_records(reference(case, tmp_path) / "out.log")

    def check(work, _):
        return None if segment_records(work / "out.log") == want else "the converted segment differs"
    case.check = check
    report(case, tmp_path)


def test_write_killed_anywhere_leaves_no_partial_output(tmp_path):
    def prepare(work):
        log_dir(work / "logs")
        dump = faults.run(kafkacodec("dump", "--json", "{work}/logs/t-0/00000000000000000000.log"), work)
        (work / "in.jsonl").write_bytes(dump.stdout)
        shutil.rmtree(work / "logs")
    args = ["write", "{work}/00000000000000000000.log", "--index"]
    case = Case("write", kafkacodec(*args), prepare, resume=[], stdin="in.jsonl")
    want = segment_records(reference(case, tmp_path) / "00000000000000000000.log")

    def check(work, _):
        status, output = faults.run_here(args + ["--force"], work, "in.jsonl")
        if status != 0:
            return f"write --force exited {status}: {output}"
        return None if segment_records(work / "00000000000000000000.log") == want else "the written segment differs"
    case.check = check
    report(case, tmp_path)


WRITER = textwrap.dedent("""
    import sys
    from kafkacodec.storage.change.writer import PartitionWriter
    txn = {"producer_id": 3, "producer_epoch": 0, "is_transactional": True}
    abort = {"key": b"\\0\\0\\0\\0", "value": b"\\0" * 6, "timestamp": 99}
    with PartitionWriter(sys.argv[1], segment_bytes=600, index_interval_bytes=150) as w:
        for i in range(6):
            last = w.append([{"key": b"k%d" % i, "value": b"v" * 50, "timestamp": 10 + i}])[1]
            print(last, flush=True)
            if i == 3:
                print(w.append([{"key": b"t", "value": b"aborted", "timestamp": 50}], base_sequence=0, **txn)[1],
                      flush=True)
                print(w.append([abort], is_control=True, **txn)[1], flush=True)
""")


def test_partition_writer_killed_anywhere_keeps_every_acknowledged_record(tmp_path):
    argv = [sys.executable, "-c", WRITER, "{work}/logs/t-0"]
    case = Case("writer", argv, lambda work: (work / "logs").mkdir(),
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]])
    full = contents(reference(case, tmp_path) / "logs")["t-0"][0]

    def check(work, stdout):
        acked = [int(x) for x in stdout.split()]
        now = contents(work / "logs")["t-0"][0] if (work / "logs" / "t-0").exists() else []
        if now != full[:len(now)]:
            return "the records are not a prefix of those written"
        if acked and (not now or now[-1][0] < acked[-1]):
            return f"acknowledged offset {acked[-1]} lost (the log ends at {now[-1][0] if now else None})"
        return "left behind: " + ", ".join(left_behind(work)) if left_behind(work) else None
    case.check = check
    report(case, tmp_path)


# -- concurrent runs ------------------------------------------------------------------------------
def test_two_concurrent_cleans_one_runs_the_other_is_refused(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    log_dir(work / "logs")
    argv = kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place")
    ref = reference(Case("c", argv, lambda w: log_dir(w / "logs"), []), tmp_path)
    # the first stops at its second rename (its lock taken, its journal written) while others start
    first = subprocess.Popen([faults.STRACE, "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename",
                              "-e", "inject=rename:signal=STOP:when=2", "--", *faults._argv(argv, work)],
                             cwd=tmp_path, env=faults.ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    holder = None
    try:
        deadline = time.monotonic() + 30
        while not (work / "logs" / ".kafkacodec-journal").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        holder = int((work / "logs" / ".kafkacodec.lock").read_text().split()[0])
        for other in (argv, kafkacodec("recover", "{work}/logs")):
            run = faults.run(other, work)
            assert run.returncode == 2, run.stdout + run.stderr
            assert f".kafkacodec.lock: locked by another kafkacodec command (pid {holder}, clean)".encode() \
                in run.stderr
    finally:
        if holder is not None:
            os.kill(holder, signal.SIGCONT)
        else:
            first.kill()
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert contents(work / "logs") == contents(ref / "logs")


# -- a full disk, a read-only file system ----------------------------------------------------------
mounts = pytest.mark.skipif(not faults.can_mount(), reason="needs root and tmpfs mounts")


@mounts
def test_a_full_disk_stops_clean_with_the_log_unchanged_and_nothing_left(tmp_path):
    with faults.tmpfs(tmp_path / "disk", "2m") as disk:
        log_dir(disk / "logs")
        before = contents(disk / "logs")
        faults.fill(disk, 8 * 1024)  # far less than a copy of the partitions needs
        run = faults.run(kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"), disk)
        assert run.returncode == 2 and b"no space left on the device" in run.stderr, run.stderr
        assert b"/.kafkacodec-clean/" in run.stderr  # the copy being written is named, not its source
        assert b"Traceback" not in run.stderr
        assert contents(disk / "logs") == before
        assert left_behind(disk) == []
        (disk / "filler").unlink()
        assert faults.run(kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"), disk).returncode == 0


@mounts
def test_a_full_disk_stops_recover_before_it_cuts_and_the_next_run_finishes(tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    damaged_log_dir(ref)
    assert faults.run(kafkacodec("recover", "{work}/logs"), ref).returncode == 0
    with faults.tmpfs(tmp_path / "disk", "2m") as disk:
        damaged_log_dir(disk)
        logs = sorted((disk / "logs").rglob("*.log"))
        sizes = {p: p.stat().st_size for p in logs}
        faults.fill(disk, 0)
        run = faults.run(kafkacodec("recover", "{work}/logs"), disk)
        assert run.returncode == 2 and b"no space left on the device" in run.stderr, run.stderr
        assert b"Traceback" not in run.stderr
        assert {p: p.stat().st_size for p in logs} == sizes  # nothing cut without its bytes kept
        assert [p for p in left_behind(disk) if not p.endswith(".kafkacodec-journal")] == []
        (disk / "filler").unlink()
        again = faults.run(kafkacodec("recover", "{work}/logs"), disk)
        assert again.returncode == 0, again.stderr
        assert contents(disk / "logs") == contents(ref / "logs") and left_behind(disk) == []


@mounts
def test_a_read_only_log_dir_is_refused_by_clean_and_recover_and_can_be_copied_from(tmp_path):
    with faults.tmpfs(tmp_path / "disk", "2m") as disk:
        damaged_log_dir(disk)
        before = contents_raw = {p: p.read_bytes() for p in disk.rglob("*") if p.is_file()}
        faults.remount(disk, "ro")
        for argv in (kafkacodec("clean", "{work}/logs", *CLEAN, "--apply", "--in-place"),
                     kafkacodec("recover", "{work}/logs")):
            run = faults.run(argv, disk)
            assert run.returncode == 2 and b"read-only" in run.stderr and b"Traceback" not in run.stderr, run.stderr
        assert {p: p.read_bytes() for p in disk.rglob("*") if p.is_file()} == before == contents_raw
        dry = faults.run(kafkacodec("recover", "--dry-run", "{work}/logs"), disk)
        assert dry.returncode == 0 and b"would truncate" in dry.stdout
        # a read-only source can still be cleaned into a copy elsewhere (after its damage is skipped)
        out = tmp_path / "out"
        copied = faults.run(kafkacodec("clean", "{work}/logs", *CLEAN, "--skip-corrupt", "--apply", "--out",
                                       str(out)), disk)
        assert copied.returncode == 0, copied.stderr
        assert sorted(contents(out)) == ["t-0", "t-1"]
