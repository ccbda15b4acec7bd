"""The kafka-log sink's job commit of rows written without offsets by several tasks, which moves
the tasks' batches to their offsets and replays the producer state, killed (SIGKILL) at every
call it makes of a system call that changes files, then `kafkacodec recover`: the log dir holds
the partition as it was before the job, or numbered from 0 in task order with the transaction
that spans two tasks in its .txnindex, never a mix."""
from __future__ import annotations

import pickle
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from tests.support import faults
from tests.pipeline.test_sink_faults import segment_problem
from tests.support.faults import Case, every_point

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.indexes.txnindex import iter_txn_index
from kafkacodec.storage.change.writer import PartitionWriter

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

COLUMNS = ["key", "value", "topic", "partition", "producerId", "producerEpoch", "sequence", "isTransactional",
           "isControl"]
COMMIT = textwrap.dedent("""
    import pickle, sys
    from pathlib import Path
    from kafkacodec.pipeline.sink import KafkaLogWriter

    class Schema:
        def fieldNames(self):
            return %r

    work = Path(sys.argv[1])
    job, messages = pickle.loads((work / "commit.pickle").read_bytes())
    writer = KafkaLogWriter({"path": str(work / "out"), "segmentBytes": "6000", "recordsPerBatch": "20"},
                            Schema(), overwrite=True)
    writer.job = job
    writer.commit(messages)
""" % COLUMNS)
OLD = [(b"old-%d" % i) for i in range(30)]
ABORT = (b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00")  # an ABORT marker's key and value


def task_rows(task: int, n: int, marker: bool) -> pa.Table:
    """`n` rows of producer 7's transaction, then (`marker`) its ABORT marker."""
    keys = [b"k"] * n + ([ABORT[0]] if marker else [])
    values = [b"task-%d-%d" % (task, i) + b"." * 60 for i in range(n)] + ([ABORT[1]] if marker else [])
    m = len(keys)
    control = [False] * n + [True] * (m - n)
    return pa.table({"key": keys, "value": values, "topic": ["t"] * m, "partition": pa.array([0] * m, pa.int32()),
                     "producerId": pa.array([7] * m, pa.int64()), "producerEpoch": pa.array([0] * m, pa.int32()),
                     "sequence": pa.array([task * 1000 + i if not c else -1 for i, c in enumerate(control)],
                                          pa.int32()),
                     "isTransactional": [True] * m, "isControl": control})


TASKS = [(0, 50, False), (1, 40, True), (2, 30, False)]  # the transaction opened by task 0 ends in task 1


def prepare(work: Path) -> None:
    """The partition t-0 the job overwrites, and the job's three tasks written, not committed."""
    from kafkacodec.pipeline.sink import KafkaLogWriter

    with PartitionWriter(work / "out" / "t-0") as w:
        w.append([{"value": v} for v in OLD])

    class Schema:
        def fieldNames(self):
            return COLUMNS

    writer = KafkaLogWriter({"path": str(work / "out"), "segmentBytes": "6000", "recordsPerBatch": "20"},
                            Schema(), overwrite=True)
    messages = []
    for task, n, marker in reversed(TASKS):
        messages.append(writer.write(iter(task_rows(task, n, marker).to_batches())))
        messages[-1].task = task
    (work / "commit.pickle").write_bytes(pickle.dumps((writer.job, messages)))


def check(work: Path, _output: str) -> str | None:
    out = work / "out"
    left = [p.name for p in out.iterdir() if p.name.startswith(".kafkacodec-") and p.name != ".kafkacodec.lock"]
    if left:
        return f"left behind: {left}"
    part = logdir.open_partition(out / "t-0")
    now = [(r.offset, r.value) for _, r in partition_records(part)]
    before = list(enumerate(OLD))
    after = list(enumerate(v for task, n, marker in TASKS for v in task_rows(task, n, marker)["value"].to_pylist()))
    if now not in (before, after):
        return f"neither the partition before the job nor after it: {len(now)} records"
    problem = segment_problem(part)
    if problem:
        return problem
    if now == after:
        aborted = [(t.producer_id, t.first_offset, t.last_offset) for seg in part.segments if seg.txn_index
                   for t in iter_txn_index(seg.txn_index, 1 << 20)]
        if aborted != [(7, 0, 90)]:  # task 0's 50 records and task 1's 40, its marker at offset 90
            return f"the aborted transaction is not in the .txnindex: {aborted}"
    return None


def test_a_commit_that_assigns_offsets_killed_anywhere_leaves_the_partition_before_or_after_the_job(tmp_path):
    case = Case("sink-assign", [sys.executable, "-c", COMMIT, "{work}"], prepare,
                resume=[["recover", "{work}/out"]], check=check)
    points, problems = every_point(case, tmp_path)
    assert points > 20
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])
