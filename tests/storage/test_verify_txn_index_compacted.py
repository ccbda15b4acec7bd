"""verify's transaction index check on a compacted log: the cleaner keeps each aborted
transaction's entry as the broker wrote it, whose first offset and last stable offset may come
before what a rebuild from the compacted log gives (the first batches are gone). Such an entry is
right; one that is missing, that begins after the transaction's first batch left or at or before
the producer's previous marker, or whose last stable offset is later, is wrong."""
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.indexes.txnindex import AbortedTxn, encode_txn_index, read_txn_index
from kafkacodec.storage.change.writer import PartitionWriter

TS = 1_600_000_000_000
ABORT = {"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00", "timestamp": TS}
COMMIT = {"key": b"\x00\x00\x00\x01", "value": b"\x00\x00\x00\x00\x00\x00", "timestamp": TS}


def run(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def compacted(tmp_path):
    """Producer 8 opens a transaction at 0; producer 7 commits one at 1 (marker 2), then aborts
    one at 4-5 (marker 6: last stable offset 0, 8 still open); 8 commits at 8. Compaction removes
    8's first batch (its key comes again) and 7's first aborted batch; 7's last data batch
    stays as an empty header, keeping 7's state, and so does the ABORT marker."""
    p8 = {"producer_id": 8, "producer_epoch": 0, "is_transactional": True}
    p7 = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    with PartitionWriter(tmp_path / "logs" / "t-0", segment_bytes=1 << 20) as w:
        w.append([{"key": b"o", "value": b"first", "timestamp": TS}], **p8, base_sequence=0)
        w.append([{"key": b"c", "value": b"committed", "timestamp": TS}], **p7, base_sequence=0)
        w.append([COMMIT], **p7, is_control=True)
        w.append([{"key": b"n", "value": b"plain", "timestamp": TS}])
        w.append([{"key": b"k1", "value": b"a", "timestamp": TS}], **p7, base_sequence=1)
        w.append([{"key": b"k2", "value": b"b", "timestamp": TS}], **p7, base_sequence=2)
        w.append([ABORT], **p7, is_control=True)
        w.append([{"key": b"o", "value": b"second", "timestamp": TS}], **p8, base_sequence=1)
        w.append([COMMIT], **p8, is_control=True)
        w.roll()
        w.append([{"key": b"z", "value": b"active", "timestamp": TS}])
    cleaned = run("clean", tmp_path / "logs", "--policy", "compact", "--min-cleanable-dirty-ratio", "0",
                  "--now", TS + 1000, "--apply", "--out", tmp_path / "out")
    assert cleaned.returncode == 0, cleaned.stderr
    part = logdir.open_partition(tmp_path / "out" / "t-0")
    return part, part.segments[0].txn_index


def test_an_entry_the_cleaner_kept_as_the_broker_wrote_it_verifies(tmp_path):
    part, txn_index = compacted(tmp_path)
    # the broker's entry: from 4, last stable offset 0; the compacted log starts 7's at 5, 8's open one is gone
    assert read_txn_index(txn_index.read_bytes()) == [AbortedTxn(7, 4, 6, 0)]
    offsets = [b.base_offset for b in _batches(part)]
    assert 0 not in offsets and 4 not in offsets and 5 in offsets and 6 in offsets
    said = run("verify", tmp_path / "out")
    assert said.returncode == 0, said.stdout + said.stderr
    assert "transaction index" not in said.stdout + said.stderr


def _batches(part):
    from kafkacodec.storage.segments.reader import partition_batches
    return [b.entry for _, b in partition_batches(part) if not b.is_legacy]


def test_a_missing_or_wrong_entry_is_still_reported(tmp_path):
    part, txn_index = compacted(tmp_path)
    cases = {
        "missing": ([], "lacks the aborted transaction of producer 7 (offsets 5..6, last stable offset 7)"),
        # 7's first batch left is at 5: an entry from 6 on would let a consumer read it
        "late first": ([AbortedTxn(7, 6, 6, 0)], "begins at 6, but the log has its first batch at 5"),
        # 7's COMMIT at 2 ended its previous transaction: from 2 or before, its committed record looks aborted
        "too early": ([AbortedTxn(7, 2, 6, 0)], "after the producer's previous marker at 2"),
        "late stable": ([AbortedTxn(7, 4, 6, 8)], "has last stable offset 8, but the log gives 7"),
    }
    for name, (entries, said_part) in cases.items():
        txn_index.write_bytes(encode_txn_index(entries))
        said = run("verify", tmp_path / "out")
        assert said.returncode == 1, name
        assert said_part in said.stderr, (name, said.stderr)
