"""`kafkacodec write` killed (SIGKILL) at every system call that changes a file, over a segment
with its indexes (--force --index, and --force alone) and into an empty partition (--index).
What a kill leaves is the old .log with its old indexes, the new .log with its new ones, or a
.log with no .index (which Kafka's recovery rebuilds, trusting no other index): never an offset
index beside a .log it does not describe. It wrote the .log first, so a kill before the indexes
left the new .log beside the old .index. Then `recover` leaves a .log, old or new, with the
indexes Kafka's recovery builds, and nothing behind, and `verify` says ok; the same write run
again ends as one undisturbed run. Needs strace; skipped otherwise."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support import faults
from tests.support.faults import Case, every_point, kafkacodec, run_here

from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.exchange.jsonl import to_json
from kafkacodec.storage.state.producers import rebuild_txn_index
from kafkacodec.storage.segments.reader import batches_of
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.change.writer import PartitionWriter

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

SEGMENT = "00000000000000000000"
INDEXES = (".index", ".timeindex", ".txnindex")
TEMPORARY = (".tmp", ".kafkacodec-tmp")


def fill(part: Path, seed: int) -> None:
    """A segment of 40 batches (about 12 KB: several offset index entries) with an aborted
    transaction, so that it has a .index, a .timeindex and a .txnindex; `seed` varies the bytes."""
    with PartitionWriter(part) as w:
        for i in range(40):
            w.append([{"key": b"k%d" % i, "value": bytes([seed + i % 7]) * (250 + seed), "timestamp": 1000 + i}])
            if i == 20:
                w.append([{"value": b"aborted"}], producer_id=7, producer_epoch=0, base_sequence=0,
                         is_transactional=True)
                w.append([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x01"}], producer_id=7,
                         producer_epoch=0, is_transactional=True, is_control=True)


def files(part: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(part.iterdir()) if f.is_file()}


def segment_files(state: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in state.items() if name.startswith(SEGMENT) and not name.endswith(TEMPORARY)}


def indexes_rebuilt(part: Path) -> str | None:
    """What of the partition's segment indexes differs from what Kafka's recovery builds from its .log."""
    p = logdir.open_partition(part)
    for seg in p.segments:
        scan = scan_file(seg.log)
        offsets, times = index.rebuild(scan.batches, seg.base_offset)
        aborted, _ = rebuild_txn_index(p, seg.base_offset, scan.batches)
        if seg.index is None or index.read_offset_index(seg.index.read_bytes(), seg.base_offset) != offsets:
            return f"{seg.log}: its .index is not the one its .log gives"
        if seg.time_index is None or index.read_time_index(seg.time_index.read_bytes(), seg.base_offset) != times:
            return f"{seg.log}: its .timeindex is not the one its .log gives"
        if (read_txn_index(seg.txn_index.read_bytes()) if seg.txn_index else []) != aborted:
            return f"{seg.log}: its .txnindex is not the one its .log gives"
    return None


def left_behind(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(TEMPORARY) or ".kafkacodec-" in p.name]


CASES = {  # name: (options, whether the partition holds a segment first)
    "force-index": (["--force", "--index"], True),
    "force": (["--force"], True),
    "new-index": (["--index"], False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_write_killed_anywhere_never_pairs_a_log_with_stale_indexes(tmp_path, name):
    options, existing = CASES[name]
    source = tmp_path / "source"
    fill(source, 3)
    batches = [to_json(b) for b in batches_of((source / f"{SEGMENT}.log").read_bytes())]
    new_log = (source / f"{SEGMENT}.log").read_bytes()

    def prepare(work: Path) -> None:
        part = work / "logs" / "t-0"
        if existing:
            fill(part, 0)
        else:
            part.mkdir(parents=True)
        (work / "input.jsonl").write_text("".join(json.dumps(b) + "\n" for b in batches))

    argv = ["write", *options, f"{{work}}/logs/t-0/{SEGMENT}.log"]
    case = Case(f"write-{name}", kafkacodec(*argv), prepare, resume=[], stdin="input.jsonl")
    ref = tmp_path / "reference"
    ref.mkdir()
    prepare(ref)
    old = segment_files(files(ref / "logs" / "t-0"))
    done = faults.run(case.argv, ref, "input.jsonl")
    assert done.returncode == 0, done.stderr.decode()
    new = segment_files(files(ref / "logs" / "t-0"))
    assert new[f"{SEGMENT}.log"] == new_log and new != old
    if "--index" in options:
        assert set(new) == {SEGMENT + s for s in (".log", *INDEXES)}
        assert indexes_rebuilt(ref / "logs" / "t-0") is None
    else:  # the old indexes go: they described the bytes replaced
        assert set(new) == {f"{SEGMENT}.log"} and b"note: removed" in done.stderr
    assert left_behind(ref) == []

    def check(work: Path, _) -> str | None:
        part = work / "logs" / "t-0"
        now = segment_files(files(part))
        log = now.get(f"{SEGMENT}.log")
        if now not in (old, new) and not (f"{SEGMENT}.index" not in now and log in (old.get(f"{SEGMENT}.log"),
                                                                                       new_log)):
            kept = "none" if log is None else "the old" if log == old.get(f"{SEGMENT}.log") else \
                "the new" if log == new_log else "another"
            return (f"{kept} .log with {sorted(now)}: neither segment as it was, and a .index that has Kafka "
                    "trust indexes not built from this .log")
        if log is None and now:
            return f"indexes without a .log: {sorted(now)}"
        recovered = work.with_name(work.name + "-recovered")
        shutil.copytree(work, recovered)
        try:
            status, output = run_here(["recover", str(recovered / "logs")], recovered)
            if status != 0:
                return f"recover exited {status}: {output[-1000:]}"
            after = recovered / "logs" / "t-0"
            if log is not None and (problem := indexes_rebuilt(after)):
                return f"after recover: {problem}"
            if left_behind(recovered):
                return f"after recover, left behind: {left_behind(recovered)}"
            status, output = run_here(["verify", str(recovered / "logs")], recovered)
            if status != 0:
                return f"after recover, verify exited {status}: {output[-1000:]}"
        finally:
            shutil.rmtree(recovered)
        status, output = run_here([*argv[:-1], *([] if "--force" in argv else ["--force"]), argv[-1]], work,
                                  "input.jsonl")
        if status != 0:
            return f"the write run again exited {status}: {output[-1000:]}"
        if segment_files(files(part)) != new or left_behind(work / "logs"):
            return "the write run again does not end as one undisturbed run"
        return None

    case.check = check
    points, problems = every_point(case, tmp_path, workers=1)
    assert points > 0
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])
