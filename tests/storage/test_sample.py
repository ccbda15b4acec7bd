"""The sample log directory: deterministic, valid, and holding what it says it holds."""
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_batches, partition_records
from kafkacodec.storage.samples.broker import write_sample


def test_sample_is_valid_complete_and_the_same_every_time(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_sample(a)
    write_sample(b)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)

    run = subprocess.run([sys.executable, "-m", "kafkacodec", "verify", str(a)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr

    d = logdir.open_log_dir(a)
    assert [(p.topic, p.partition) for p in d.partitions] == [
        ("__consumer_offsets", 0), ("__transaction_state", 0), ("_schemas", 0), ("clicks", 0), ("clicks", 1),
        ("payments", 0), ("shop.orders", 0), ("shop.reviews", 0), ("shop.shipments", 0)]
    clicks0, clicks1, payments = d.partitions[3:6]
    assert len(clicks0.segments) >= 2
    batches = [b for _, b in partition_batches(clicks0)]
    assert {b.magic for b in batches} == {0, 1, 2}
    assert {b.compression for b in batches} == {"none", "gzip", "snappy", "lz4", "zstd"}
    offsets = [r.offset for _, r in partition_records(clicks0)]
    assert offsets == list(range(len(offsets)))
    recs = [r for _, r in partition_records(clicks1)]
    assert any(r.key is None for r in recs) and any(r.value is None for r in recs)
    assert any(r.headers for r in recs)
    pay = [b for _, b in partition_batches(payments)]
    controls = [b for b in pay if not b.is_legacy and b.entry.is_control]
    kinds = [next(iter(b)).key[3] for b in controls]
    assert kinds.count(0) == 2 and kinds.count(1) == 2  # two aborts, two commits
    assert {b.entry.producer_id for b in pay} == {1000, 2000, 3000}
    assert len(payments.segments) >= 3 and payments.snapshots
    assert sum(s.txn_index is not None for s in payments.segments) >= 1
