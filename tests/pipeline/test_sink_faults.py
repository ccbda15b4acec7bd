"""The kafka-log sink's job commit killed (SIGKILL) at every call it makes of a system call that
changes files, then `kafkacodec recover`: the log dir holds the partitions as they were before
the job, or every partition the job wrote, never a mix, a partial segment or a partition lost;
and a commit that fails on a full disk leaves the log dir as it was."""
from __future__ import annotations

import pickle
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from tests.support import faults
from tests.support.faults import Case, every_point

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.indexes.index import iter_offset_index, rebuild
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.change.writer import PartitionWriter

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

SEGMENT_BYTES = 25_000  # the tasks' segments of t-0 join in twos
COMMIT = textwrap.dedent("""
    import pickle, sys
    from pathlib import Path
    from kafkacodec.pipeline.sink import KafkaLogWriter

    class Schema:
        def fieldNames(self):
            return ["value", "topic", "partition", "offset"]

    work = Path(sys.argv[1])
    job, messages = pickle.loads((work / "commit.pickle").read_bytes())
    writer = KafkaLogWriter({"path": str(work / "out"), "segmentBytes": "%d", "recordsPerBatch": "40"},
                            Schema(), overwrite=True)
    writer.job = job
    writer.commit(messages)
""" % SEGMENT_BYTES)
OLD = [(b"old-%d" % i) for i in range(50)]


def new_rows(topic_partition: tuple[str, int], first: int, n: int) -> pa.Table:
    topic, partition = topic_partition
    return pa.table({"value": [b"%s-%d-%d" % (topic.encode(), partition, first + i) + b"." * 60 for i in range(n)],
                     "topic": [topic] * n, "partition": pa.array([partition] * n, pa.int32()),
                     "offset": pa.array(range(first, first + n), pa.int64())})


TASKS = [(("t", 0), 0, 120), (("t", 0), 120, 120), (("t", 0), 240, 120), (("u", 1), 0, 80)]


def prepare(work: Path) -> None:
    """An existing partition t-0 the job overwrites, and the job's four tasks written, not committed."""
    from kafkacodec.pipeline.sink import KafkaLogWriter

    with PartitionWriter(work / "out" / "t-0") as w:
        w.append([{"value": v} for v in OLD])

    class Schema:
        def fieldNames(self):
            return ["value", "topic", "partition", "offset"]

    writer = KafkaLogWriter({"path": str(work / "out"), "segmentBytes": str(SEGMENT_BYTES), "recordsPerBatch": "40"},
                            Schema(), overwrite=True)
    messages = [writer.write(iter(new_rows(tp, first, n).to_batches())) for tp, first, n in TASKS]
    (work / "commit.pickle").write_bytes(pickle.dumps((writer.job, messages)))


def records(part_dir: Path) -> list | None:
    if not part_dir.exists():
        return None
    return [(r.offset, r.value) for _, r in partition_records(logdir.open_partition(part_dir))]


def check(work: Path, _output: str) -> str | None:
    out = work / "out"
    left = [p.name for p in out.iterdir() if p.name.startswith(".kafkacodec-") and p.name != ".kafkacodec.lock"]
    if left:
        return f"left behind: {left}"
    before = ([(i, v) for i, v in enumerate(OLD)], None)
    after = tuple([(first + i, r) for tp2, first, n in TASKS if tp2 == tp
                   for i, r in enumerate(new_rows(tp, first, n)["value"].to_pylist())] for tp in (("t", 0), ("u", 1)))
    now = (records(out / "t-0"), records(out / "u-1"))
    if now not in (before, after):
        return f"neither the log dir before the job nor after it: {[len(p or ()) for p in now]} records"
    for part in logdir.open_log_dir(out).partitions:
        problem = segment_problem(part)
        if problem:
            return problem
    if now == after and len(logdir.open_partition(out / "t-0").segments) != 2:
        return "the tasks' segments of t-0 were not joined"
    return None


def segment_problem(part) -> str | None:
    """The first segment of `part` that does not scan whole or whose .index is not rebuilt's."""
    for seg in part.segments:
        scan = scan_file(seg.log)
        if not scan.is_valid:
            return f"{seg.log}: {scan.error}"
        built, _ = rebuild(scan.batches, seg.base_offset)
        if list(iter_offset_index(seg.index, seg.base_offset, 1 << 20)) != built:
            return f"{seg.index} is not the index of its segment"
    return None


def test_a_commit_killed_anywhere_leaves_the_log_dir_before_or_after_the_job(tmp_path):
    case = Case("sink-commit", [sys.executable, "-c", COMMIT, "{work}"], prepare,
                resume=[["recover", "{work}/out"]], check=check)
    points, problems = every_point(case, tmp_path)
    assert points > 20
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])


@pytest.mark.skipif(not faults.can_mount(), reason="needs root to mount a tmpfs")
def test_a_commit_on_a_full_disk_fails_and_leaves_the_log_dir_as_it_was(tmp_path):
    with faults.tmpfs(tmp_path / "small", "2m") as disk:
        work = disk / "work"
        work.mkdir()
        prepare(work)
        before = records(work / "out" / "t-0")
        faults.fill(disk, 12_000)  # room for the journal, not for the joined segment
        done = faults.run([sys.executable, "-c", COMMIT, "{work}"], work)
        assert done.returncode != 0 and b"no space left" in done.stderr.lower(), done.stderr.decode()[-2000:]
        assert records(work / "out" / "t-0") == before and not (work / "out" / "u-1").exists()
        assert not (work / "out" / ".kafkacodec-clean").exists()


@pytest.mark.skipif(not faults.can_mount(), reason="needs root to mount a tmpfs")
def test_a_commit_on_a_read_only_disk_says_so_and_leaves_the_log_dir_as_it_was(tmp_path):
    with faults.tmpfs(tmp_path / "disk", "8m") as disk:
        work = disk / "work"
        work.mkdir()
        prepare(work)
        before = records(work / "out" / "t-0")
        faults.remount(disk, "ro")
        try:
            done = faults.run([sys.executable, "-c", COMMIT, "{work}"], work)
        finally:
            faults.remount(disk, "rw")
        said = done.stderr.decode()
        # the error raised is the commit's own (taking the log dir's lock), not the cleanup's after it
        assert done.returncode != 0 and said.strip().splitlines()[-1].endswith(
            ".kafkacodec.lock: the file system is read-only"), said[-2000:]
        assert "During handling of the above exception" not in said
        assert records(work / "out" / "t-0") == before and not (work / "out" / "u-1").exists()

