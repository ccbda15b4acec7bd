"""`recover --salvage` killed (SIGKILL) at every system call that changes a file, then run again:
the log dir ends as one undisturbed run leaves it (every record, the kept bytes, the salvaged
segment and its indexes), with nothing left behind. Needs strace; skipped otherwise."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import faults
from tests.support.faults import Case, every_point, kafkacodec

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.guarded import partition_batches
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.change.writer import PartitionWriter

pytestmark = pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")

LEFT_BEHIND = (".kafkacodec-tmp", ".kafkacodec-journal", ".tmp")


def damaged(work: Path) -> None:
    """Two segments; a flipped byte in the first one's fourth batch, an aborted transaction after it."""
    with PartitionWriter(work / "logs" / "t-0", segment_bytes=2500) as w:
        for i in range(30):
            w.append([{"key": b"k%d" % i, "value": b"v%d." % i + b"x" * 30, "timestamp": 1000 + i}])
            if i == 10:
                w.append([{"value": b"aborted"}], producer_id=7, producer_epoch=0, base_sequence=0,
                         is_transactional=True)
                w.append([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x01"}], producer_id=7,
                         producer_epoch=0, is_transactional=True, is_control=True)
    log = logdir.open_partition(work / "logs" / "t-0").segments[0].log
    b = scan_file(log).batches[3]
    data = bytearray(log.read_bytes())
    data[b.position + b.size - 4] ^= 0xFF
    log.write_bytes(bytes(data))


def state(root: Path) -> dict:
    """Every record, and the bytes of every file but the lock."""
    part = logdir.open_partition(root / "t-0")
    records = [(r.offset, r.key, r.value) for _, b in partition_batches(part) for r in b]
    return {"records": records, **{f.name: f.read_bytes() for f in sorted(part.path.iterdir())}}


def test_salvage_killed_anywhere_ends_as_one_undisturbed_run(tmp_path):
    case = Case("salvage", kafkacodec("recover", "--salvage", "{work}/logs"), damaged,
                resume=[["recover", "--salvage", "{work}/logs"]])
    ref = tmp_path / "reference"
    ref.mkdir()
    damaged(ref)
    done = faults.run(case.argv, ref, None)
    assert done.returncode == 0 and b"salvaged offsets" in done.stdout, done.stderr.decode()
    after = state(ref / "logs")
    assert sum(name.endswith(".log") for name in after) == 3  # the cut segment, the salvaged one, the next

    def check(work, _):
        now = state(work / "logs")
        if now != after:
            return "differs from one undisturbed run: " + ", ".join(
                k for k in set(now) | set(after) if now.get(k) != after.get(k))
        left = [str(p) for p in (work / "logs").rglob("*") if any(m in p.name for m in LEFT_BEHIND)]
        return "left behind: " + ", ".join(left) if left else None
    case.check = check
    points, problems = every_point(case, tmp_path, workers=1)
    assert points > 0
    assert not problems, f"{len(problems)} of {points} points failed:\n" + "\n".join(problems[:20])
