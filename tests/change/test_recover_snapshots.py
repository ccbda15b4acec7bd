"""recover and the producer snapshots past the log end it leaves: Kafka, having cut a segment in
recovery, deletes every snapshot past the new log end (ProducerStateManager.truncateAndReload),
or a broker would load a producer state of records that are gone. recover left the sample's
clicks-1 `…100.snapshot` after cutting the log at offset 45. They are set aside, their bytes
kept as the cut bytes are, said in the plan, and a kill anywhere is finished by the next run."""
import shutil
import subprocess
import sys

from tests.support import faults
import pytest
from tests.support.faults import Case, every_point

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.state.producers import latest_snapshot
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.segments.scan import scan_file


def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def clicks(root):
    """The sample's clicks-1, its CRC broken in the batch holding offset 45; its snapshot at 100,
    and the offset recovery cuts at (the batch's first)."""
    write_sample(root)
    part = logdir.open_partition(root / "clicks-1")
    log = part.segments[-1].log
    hit = next(b for b in scan_file(log).batches if b.last_offset >= 45)
    data = bytearray(log.read_bytes())
    data[hit.position + 30] ^= 0xFF  # in the first timestamp, which the CRC covers
    log.write_bytes(bytes(data))
    return part, hit.entry.base_offset


def test_recover_sets_aside_the_snapshots_past_the_new_log_end(tmp_path):
    part, cut = clicks(tmp_path / "logs")
    assert sorted(part.snapshots) == [100] and cut < 100  # the sample's, past the damage
    snapshot = part.snapshots[100]
    held = snapshot.read_bytes()
    kept = snapshot.with_name(f"{snapshot.name}.past-end-{cut}")

    dry = kafkacodec("recover", "--dry-run", part.path)
    assert dry.returncode == 0 and f"{snapshot.name} in {kept}" in dry.stdout, dry.stdout
    assert f"past the new log end {cut}" in dry.stdout and snapshot.read_bytes() == held and not kept.exists()
    run = kafkacodec("recover", part.path)
    assert run.returncode == 0, run.stderr
    # the real run says what the dry run said, but the tense
    assert run.stdout.replace("truncated", "would truncate").replace("are kept", "would be kept").replace(
        "rebuilt", "would rebuild") == dry.stdout
    assert not snapshot.exists() and kept.read_bytes() == held
    after = logdir.open_partition(part.path)
    assert after.snapshots == {} and latest_snapshot(after, 2 ** 63 - 1) == (None, [])
    assert kafkacodec("verify", part.path).returncode == 0
    assert "nothing to recover" in kafkacodec("recover", part.path).stdout  # nothing moved twice
    assert kept.read_bytes() == held


def test_a_snapshot_at_or_below_the_new_log_end_stays(tmp_path):
    part, cut = clicks(tmp_path / "logs")
    shutil.copy(part.snapshots[100], part.path / f"{cut:020d}.snapshot")  # only its offset is judged here
    assert kafkacodec("recover", part.path).returncode == 0
    assert sorted(logdir.open_partition(part.path).snapshots) == [cut]


@pytest.mark.skipif(faults.STRACE is None, reason="strace is not installed")
def test_recover_killed_anywhere_sets_each_snapshot_aside_once(tmp_path):
    def prepare(work):
        clicks(work / "logs")

    reference = tmp_path / "reference"
    reference.mkdir()
    prepare(reference)
    assert faults.run(faults.kafkacodec("recover", "{work}/logs"), reference).returncode == 0
    want = {p.name: p.read_bytes() for p in (reference / "logs" / "clicks-1").iterdir()}

    def check(work, _):
        now = {p.name: p.read_bytes() for p in (work / "logs" / "clicks-1").iterdir()}
        return None if now == want else f"clicks-1 differs: {sorted(set(now) ^ set(want))}"
    case = Case("recover-snapshots", faults.kafkacodec("recover", "{work}/logs"), prepare,
                resume=[["recover", "{work}/logs"], ["verify", "{work}/logs"]], check=check)
    points, problems = every_point(case, tmp_path, only=("rename", "renameat", "renameat2", "ftruncate", "truncate"))
    assert points > 0 and not problems, "\n".join(problems[:20])
