"""clean --apply writes the log dir's cleaner-offset-checkpoint as Kafka's cleaner does after it
cleans a partition (version 0, a count, then `topic partition offset` lines; the offset is
where the next cleaning's dirty part begins): in --out's log dir, or in place, keeping the
entries there for other partitions. Without it verify called the offsets compaction removed
records lost, and the next clean took the whole log for dirty again."""
import json
import shutil
import subprocess
import sys

from kafkacodec.storage.change import journal
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.compaction import CompactionConfig, compact
from kafkacodec.storage.change.replace import Publication
from kafkacodec.storage.layout.textfiles import read_offset_checkpoint
from kafkacodec.storage.change.writer import PartitionWriter

TS = 1_600_000_000_000
CHECKPOINT = "cleaner-offset-checkpoint"


def run(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def log_dir(root):
    """Partition t-0: single-record batches a, b, b, c, a2 (offsets 0..4), then the active
    segment at 5. Compaction removes offset 1, a whole batch: no batch left shows it was
    cleaned, and the segment still starts at its base offset."""
    with PartitionWriter(root / "t-0", segment_bytes=1 << 20) as w:
        for key in (b"a", b"b", b"b", b"c", b"a2"):
            w.append([{"key": key, "value": b"v", "timestamp": TS}])
        w.roll()
        w.append([{"key": b"z", "value": b"v", "timestamp": TS}])
    (root / "meta.properties").write_text("version=1\nbroker.id=0\n")
    return root


def clean(*args):
    done = run("clean", *args, "--policy", "compact", "--min-cleanable-dirty-ratio", "0", "--apply")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_compacted_copy_verifies_and_the_next_clean_starts_where_it_ended(tmp_path):
    source = log_dir(tmp_path / "logs")
    said = clean(source, "--out", tmp_path / "out")
    assert f"write {tmp_path / 'out' / CHECKPOINT}" in said
    assert (tmp_path / "out" / CHECKPOINT).read_text() == "0\n1\nt 0 5\n"
    assert not (source / CHECKPOINT).exists()  # the source is read only
    verified = run("verify", tmp_path / "out")
    assert verified.returncode == 0, verified.stderr
    # the gap is what verify would call records lost, were it not for the checkpoint
    (tmp_path / "out" / CHECKPOINT).rename(tmp_path / "aside")
    assert "offset 1 is missing" in run("verify", tmp_path / "out").stderr
    (tmp_path / "aside").rename(tmp_path / "out" / CHECKPOINT)
    # the next cleaning's dirty part begins at 5: nothing cleanable is dirty
    part = logdir.open_partition(tmp_path / "out" / "t-0")
    report = compact(part, CompactionConfig(), TS, tmp_path / "out" / CHECKPOINT)
    assert (report.first_dirty, report.dirty_ratio, report.due) == (5, 0.0, False)
    without = compact(part, CompactionConfig(), TS, None)
    assert (without.first_dirty, without.dirty_ratio > 0.5, without.due) == (0, True, True)


def test_in_place_it_keeps_the_other_partitions_entries(tmp_path):
    root = log_dir(tmp_path / "logs")
    (root / "other-3").mkdir()
    (root / CHECKPOINT).write_text("0\n2\nother 3 17\ngone 0 4\n")  # gone-0 is no longer in the log dir
    clean(root, "--in-place")
    assert read_offset_checkpoint(root / CHECKPOINT) == {("other", 3): 17, ("t", 0): 5}
    assert run("verify", root).returncode == 0
    # a single partition, in place, updates its log dir's file too
    clean(root / "t-0", "--in-place")
    assert read_offset_checkpoint(root / CHECKPOINT) == {("other", 3): 17, ("t", 0): 5}


def test_out_merges_with_its_log_dir_and_the_sources_entries(tmp_path):
    source = log_dir(tmp_path / "logs")
    (source / "u-0").mkdir()
    (source / CHECKPOINT).write_text("0\n1\nu 0 9\n")
    out = tmp_path / "out"
    (out / "w-1").mkdir(parents=True)
    (out / CHECKPOINT).write_text("0\n1\nw 1 3\n")
    clean(source, "--out", out)
    assert read_offset_checkpoint(out / CHECKPOINT) == {("t", 0): 5, ("u", 0): 9, ("w", 1): 3}


def test_an_interrupted_publication_replaces_the_checkpoint_when_finished(tmp_path):
    """The checkpoint is published under the clean's journal: a crash after the journal turned to
    "publish" is finished by the next command, the staged checkpoint renamed over the old one."""
    root = log_dir(tmp_path / "logs")
    (root / CHECKPOINT).write_text("0\n1\nt 0 0\n")
    pub = Publication(root, in_place=True)
    pub.begin()
    (pub.files / CHECKPOINT).write_text("0\n1\nt 0 5\n")
    pub.state.update(phase="publish", partitions=[], files=[], replacing=[CHECKPOINT], kept_as={})
    journal.record(root, pub.state)  # as publish() leaves it, had it stopped right there
    assert json.loads(journal.journal_path(root).read_text())["replacing"] == [CHECKPOINT]
    done = run("recover", root)
    assert done.returncode == 0, done.stderr
    assert read_offset_checkpoint(root / CHECKPOINT) == {("t", 0): 5}
    assert not journal.journal_path(root).exists() and not pub.staging.exists()
    shutil.rmtree(root)
