"""Compaction offline, on crafted partitions with known answers: what Kafka's cleaner keeps, the
delete horizon of tombstones and markers, aborted transactions, and the cleaned copy read back
with its offsets unchanged."""

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.compaction import CompactionConfig, compact
from kafkacodec.storage.segments.reader import partition_batches, partition_records
from kafkacodec.storage.layout.textfiles import write_checkpoint
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter

NOW = 1_800_000_000_000
DAY = 24 * 3600 * 1000
ABORT = {"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00", "timestamp": NOW - DAY}
ALWAYS = CompactionConfig(min_cleanable_dirty_ratio=0.0)


def rec(key, value, ts=NOW - 2 * DAY):
    return {"key": key, "value": value, "timestamp": ts}


def write(path, batches):
    """Each batch rolls a new segment; a batch is a list of records, or (records, batch options)."""
    with PartitionWriter(path, segment_bytes=1) as w:
        for b in batches:
            records, options = b if isinstance(b, tuple) else (b, {})
            w.append(records, **options)
    return logdir.open_partition(path)


def contents(part):
    return [(r.offset, r.key, r.value) for _, r in partition_records(part)]


def cleaned(part, tmp_path, now=NOW, config=ALWAYS, name="out"):
    report = compact(part, config, now, out=tmp_path / name)
    out = logdir.open_partition(tmp_path / name / part.path.name)
    assert all(r.ok for r in verify_partition(out)), [r.problems for r in verify_partition(out)]
    return report, out


def test_the_latest_record_of_each_key_stays_with_its_offset(tmp_path):
    part = write(tmp_path / "t-0", [[rec(b"k1", b"a"), rec(b"k2", b"b")], [rec(b"k1", b"c")],
                                    [rec(b"k3", b"d"), rec(None, b"no key")], [rec(b"k2", b"e")]])
    report, out = cleaned(part, tmp_path)
    assert report.due and report.first_uncleanable == 5  # the active segment is never cleaned
    # k2's latest is in the active segment, outside the offset map: its older value stays
    assert contents(out) == [(1, b"k2", b"b"), (2, b"k1", b"c"), (3, b"k3", b"d"), (5, b"k2", b"e")]
    assert report.records_removed == 2  # k1=a and the record without a key
    first = next(b for _, b in partition_batches(out))
    assert (first.entry.base_offset, first.entry.last_offset_delta) == (0, 1)  # kept through the rebuild


def test_an_empty_active_segment_stays_in_the_copy(tmp_path):
    part = write(tmp_path / "t-0", [[rec(b"k1", b"a")], [rec(b"k1", b"b")]])
    (part.path / f"{2:020d}.log").write_bytes(b"")  # rolled, nothing appended yet
    part = logdir.open_partition(part.path)
    report, out = cleaned(part, tmp_path)
    assert [(s.base_offset, s.log.stat().st_size) for s in out.segments][-1] == (2, 0)
    assert contents(out) == [(1, b"k1", b"b")] and report.segments[2] == 0


def test_tombstones_stay_until_their_delete_horizon_then_go(tmp_path):
    part = write(tmp_path / "t-0", [[rec(b"k1", b"a"), rec(b"k2", b"b")], [rec(b"k2", None)], [rec(b"k9", b"x")]])
    config = CompactionConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    report, once = cleaned(part, tmp_path, config=config)
    assert contents(once) == [(0, b"k1", b"a"), (2, b"k2", None), (3, b"k9", b"x")]
    tomb = [b.entry for _, b in partition_batches(once) if b.entry.base_offset == 2][0]
    assert tomb.has_delete_horizon and tomb.base_timestamp == NOW + DAY
    assert tomb.records.items[0].timestamp == NOW - 2 * DAY  # rebased onto the horizon, unchanged
    _, early = cleaned(once, tmp_path, now=NOW + DAY - 1, config=config, name="early")
    assert contents(early) == contents(once)
    report, late = cleaned(once, tmp_path, now=NOW + DAY, config=config, name="late")
    assert contents(late) == [(0, b"k1", b"a"), (3, b"k9", b"x")] and report.tombstones_removed == 1
    assert report.segments[2] is None  # the emptied segment is dropped


def test_aborted_records_go_and_the_producers_last_batch_stays_empty_with_its_marker(tmp_path):
    """Kafka keeps the batch of a producer's last data offset as a header without records; its
    transaction then still has a batch in the log, so the ABORT marker never gets a horizon."""
    txn = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}
    part = write(tmp_path / "t-0", [[rec(b"k1", b"a")],
                                    ([rec(b"k1", b"aborted")], dict(txn, base_sequence=0, compression="gzip")),
                                    ([ABORT], dict(txn, is_control=True)), [rec(b"k2", b"b")]])
    config = CompactionConfig(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.0)
    report, once = cleaned(part, tmp_path, config=config)
    assert contents(once) == [(0, b"k1", b"a"), (2, b"\x00\x00\x00\x00", b"\x00" * 6), (3, b"k2", b"b")]
    kept = [b.entry for _, b in partition_batches(once) if b.entry.producer_id == 5]
    assert [(e.base_offset, e.records_count, e.is_control, e.has_delete_horizon) for e in kept] == \
        [(1, 0, False, False), (2, 1, True, False)]
    assert (kept[0].attributes & 0x07, kept[0].base_timestamp) == (0, -1)  # as Kafka writes an empty batch
    _, late = cleaned(once, tmp_path, now=NOW + 30 * DAY, config=config, name="late")
    assert contents(late) == contents(once) and report.records_removed == 1


def test_not_due_below_the_dirty_ratio_and_never_past_an_open_transaction(tmp_path):
    part = write(tmp_path / "t-0", [[rec(b"k", b"1")], [rec(b"k", b"2")], [rec(b"k", b"3")], [rec(b"k", b"4")]])
    checkpoint = tmp_path / "cleaner-offset-checkpoint"
    write_checkpoint(checkpoint, [["t", 0, 2]])  # cleaned up to offset 2: one dirty segment of three
    report = compact(part, CompactionConfig(min_cleanable_dirty_ratio=0.5), NOW, checkpoint)
    assert not report.due and round(report.dirty_ratio, 2) == 0.33 and report.records_removed == 0
    txn = {"producer_id": 8, "producer_epoch": 0, "is_transactional": True, "base_sequence": 0}
    part = write(tmp_path / "u-0", [[rec(b"k", b"1")], ([rec(b"x", b"open")], txn), [rec(b"k", b"2")],
                                    [rec(b"k", b"3")]])
    report = compact(part, ALWAYS, NOW)
    assert report.first_uncleanable == 1 and report.records_removed == 0


def test_a_mixed_v1_and_v2_log(tmp_path):
    """v1 entries and a gzip wrapper are filtered message by message (the wrapper written again
    around what stays), v1 tombstones stay on a first cleaning, v2 batches as above."""
    part = write(tmp_path / "t-0", [([rec(b"k1", b"a"), rec(b"k2", b"b")], {"magic": 1}),
                                    ([rec(b"k1", b"c"), rec(b"k3", b"d"), rec(b"k2", None)],
                                     {"magic": 1, "compression": "gzip"}),
                                    [rec(b"k3", b"e")], [rec(b"k4", b"f")]])
    report, out = cleaned(part, tmp_path)
    assert contents(out) == [(2, b"k1", b"c"), (4, b"k2", None), (5, b"k3", b"e"), (6, b"k4", b"f")]
    assert report.segments[0] is None and report.records_removed == 3
    wrapper = [b for _, b in partition_batches(out) if b.is_legacy][0]
    assert (wrapper.magic, wrapper.compression, wrapper.last_offset) == (1, "gzip", 4)


def test_the_command_compacts_after_retention(tmp_path):
    import subprocess
    import sys
    write(tmp_path / "logs" / "t-0", [[rec(b"k1", b"old", NOW - 30 * DAY)], [rec(b"k1", b"a"), rec(b"k2", b"b")],
                                      [rec(b"k1", b"c")], [rec(b"k3", b"d")]])
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "clean", str(tmp_path / "logs"), "--policy",
                          "compact,delete", "--now", str(NOW), "--min-cleanable-dirty-ratio", "0", "--apply",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "retention" in run.stdout and "compaction" in run.stdout
    out = logdir.open_partition(tmp_path / "out" / "t-0")
    assert contents(out) == [(2, b"k2", b"b"), (3, b"k1", b"c"), (4, b"k3", b"d")]


def test_in_place_replaces_the_partitions_with_their_cleaned_copies(tmp_path):
    import subprocess
    import sys
    write(tmp_path / "logs" / "t-0", [[rec(b"k1", b"a")], [rec(b"k1", b"b")], [rec(b"k2", b"c")]])
    (tmp_path / "logs" / "meta.properties").write_text("version=1\n")
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "clean", str(tmp_path / "logs"), "--policy", "compact",
                          "--now", str(NOW), "--min-cleanable-dirty-ratio", "0", "--apply", "--in-place"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert contents(logdir.open_partition(tmp_path / "logs" / "t-0")) == [(1, b"k1", b"b"), (2, b"k2", b"c")]
    # nothing left beside the partitions but the log dir's lock file (kept: removing a lock file races), and the
    # cleaner's checkpoint, as Kafka's cleaner leaves it
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [".kafkacodec.lock", "cleaner-offset-checkpoint",
                                                                     "meta.properties", "t-0"]
