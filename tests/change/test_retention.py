"""Time and size retention offline: the segments Kafka's deleteOldSegments would take, on crafted
partitions with known answers, and the cleaned copy read back."""
import os
import subprocess
import sys

import pytest

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.change.retention import RetentionConfig, copy_without, deletions, segment_facts
from kafkacodec.storage.diskio.safeio import FileProblem
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter

DAY = 24 * 3600 * 1000


def partition(tmp_path, stamps_per_segment, name="t-0"):
    """One segment per list of timestamps, each record 200 bytes; returns the Partition."""
    path = tmp_path / name
    with PartitionWriter(path, segment_bytes=1) as w:  # every batch rolls a new segment
        for stamps in stamps_per_segment:
            w.append([{"key": b"k%d" % i, "value": b"v" * 200, "timestamp": ts} for i, ts in enumerate(stamps)])
    return logdir.open_partition(path)


def taken(part, **config):
    now = config.pop("now")
    return [(d.facts.segment.base_offset, d.reason) for d in deletions(part, RetentionConfig(**config), now)]


def test_time_retention_takes_the_expired_prefix_only(tmp_path):
    part = partition(tmp_path, [[1 * DAY, 2 * DAY], [3 * DAY], [1 * DAY], [9 * DAY]])  # offsets 0-1, 2, 3, 4
    assert [s.base_offset for s in part.segments] == [0, 2, 3, 4]
    # at day 10 with 7 days: segments whose largest timestamp is before day 3 (strictly) go, oldest
    # first; the third (day 1) is expired too but the second (day 3, exactly 7 days) stops the search
    assert taken(part, now=10 * DAY, retention_ms=7 * DAY) == [(0, "retention.ms")]
    assert taken(part, now=10 * DAY + 1, retention_ms=7 * DAY) == [(0, "retention.ms"), (2, "retention.ms"),
                                                                   (3, "retention.ms")]
    assert taken(part, now=10 * DAY, retention_ms=-1) == []


def test_size_retention_deletes_whole_segments_until_under_the_limit(tmp_path):
    part = partition(tmp_path, [[1], [2], [3], [4]])
    sizes = [segment_facts(s).size for s in part.segments]
    total = sum(sizes)
    keep = lambda limit: taken(part, now=10, retention_ms=-1, retention_bytes=limit)  # noqa: E731
    assert keep(total) == []
    assert keep(total - 1) == []  # a segment goes only if the log stays at or above the limit
    assert keep(total - sizes[0]) == [(0, "retention.bytes")]
    assert keep(total - sizes[0] - 1) == [(0, "retention.bytes")]
    assert keep(total - sizes[0] - sizes[1]) == [(0, "retention.bytes"), (1, "retention.bytes")]
    assert keep(0) == [(b, "retention.bytes") for b in (0, 1, 2, 3)]
    # both rules: the longer prefix, each segment under the rule that took it first
    assert taken(part, now=2 + 10, retention_ms=10, retention_bytes=total - sizes[0] - sizes[1]) == [
        (0, "retention.ms"), (1, "retention.bytes")]


def test_an_empty_last_segment_is_never_deleted_and_the_copy_rolls_one(tmp_path):
    part = partition(tmp_path, [[1, 2], [3]])
    (part.path / f"{5:020d}.log").write_bytes(b"")  # an empty active segment at the log end... of a sort
    part = logdir.open_partition(part.path)
    assert [b for b, _ in taken(part, now=10 ** 9, retention_ms=0)] == [0, 2]
    part = partition(tmp_path, [[1, 2], [3]], name="u-0")
    due = deletions(part, RetentionConfig(retention_ms=0), 10 ** 9)
    assert [d.facts.segment.base_offset for d in due] == [0, 2]
    copied = logdir.open_partition(copy_without(part, due, tmp_path / "out"))
    assert [(s.base_offset, s.log.stat().st_size) for s in copied.segments] == [(3, 0)]
    assert list(partition_records(copied)) == []


def test_the_cleaned_copy_verifies_and_reads_back_the_kept_records_with_their_offsets(tmp_path):
    part = partition(tmp_path, [[1 * DAY] * 3, [2 * DAY] * 2, [8 * DAY] * 4, [9 * DAY]])
    due = deletions(part, RetentionConfig(retention_ms=7 * DAY), 10 * DAY)
    assert [d.facts.segment.base_offset for d in due] == [0, 3]
    assert [d.facts.records for d in due] == [3, 2]
    out = copy_without(part, due, tmp_path / "out")
    copied = logdir.open_partition(out)
    assert all(report.ok for report in verify_partition(copied)), [r.problems for r in verify_partition(copied)]
    kept = [(r.offset, r.timestamp) for _, r in partition_records(copied)]
    assert kept == [(o, ts) for o, ts in ((5, 8 * DAY), (6, 8 * DAY), (7, 8 * DAY), (8, 8 * DAY), (9, 9 * DAY))]
    assert not any(p.name.startswith(".") for p in (tmp_path / "out").iterdir())  # no work directory left
    with pytest.raises(FileProblem, match="exists"):
        copy_without(part, due, tmp_path / "out")
    assert len(logdir.open_partition(part.path).segments) == 4  # the log itself is untouched


def test_without_a_time_index_the_file_modification_time_counts(tmp_path):
    part = partition(tmp_path, [[5 * DAY], [6 * DAY]])
    first = part.segments[0]
    first.time_index.unlink()
    os.utime(first.log, (1, 1))  # 1 s after the epoch
    part = logdir.open_partition(part.path)
    assert segment_facts(part.segments[0]).largest_timestamp == 1000
    assert taken(part, now=7 * DAY, retention_ms=2 * DAY) == [(0, "retention.ms")]


def test_the_command_reports_and_applies(tmp_path):
    partition(tmp_path / "logs", [[1 * DAY], [2 * DAY], [9 * DAY]])
    run = lambda *args: subprocess.run([sys.executable, "-m", "kafkacodec", "clean", *args],  # noqa: E731
                                       capture_output=True, text=True)
    report = run(str(tmp_path / "logs"), "--now", str(10 * DAY), "--retention-ms", str(7 * DAY))
    assert report.returncode == 0, report.stderr
    assert "would remove" in report.stdout and " 2 records" in report.stdout
    assert run(str(tmp_path / "logs"), "--apply").returncode == 2
    applied = run(str(tmp_path / "logs"), "--now", str(10 * DAY), "--retention-ms", str(7 * DAY), "--apply",
                  "--out", str(tmp_path / "out"))
    assert applied.returncode == 0, applied.stderr
    assert [s.base_offset for s in logdir.open_partition(tmp_path / "out" / "t-0").segments] == [2]
