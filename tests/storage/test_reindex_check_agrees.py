"""`reindex --check` and `verify` agree on the index files: an index Kafka writes that differs from
the one its recovery would build (the append path indexes a multi-batch append by its last
offset; the cleaner keeps the broker's .txnindex entries) is not called wrong, and an entry that
is wrong is reported by both."""
import shutil
import subprocess
import sys

from kafkacodec.storage.indexes import index

from tests.storage.test_verify_txn_index_compacted import compacted


def run(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def test_the_sample_as_written_passes_both(sample, tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    indexed = logs / "clicks-0" / "00000000000000000000.index"
    as_written = index.read_offset_index(indexed.read_bytes(), 0)
    checked = run("reindex", "--check", logs)
    assert checked.returncode == 0, checked.stderr
    assert f"note: {indexed}: not the index recovery would build, but it agrees with the log" in checked.stderr
    assert run("verify", logs).returncode == 0
    # recovery's index differs (the append indexed 80..89, appended at once, by 89): both are right
    assert run("reindex", logs).returncode == 0
    rebuilt = index.read_offset_index(indexed.read_bytes(), 0)
    assert rebuilt != as_written and [e.position for e in rebuilt] == [e.position for e in as_written]
    checked = run("reindex", "--check", logs)
    assert checked.returncode == 0 and "note:" not in checked.stderr, checked.stderr
    assert run("verify", logs).returncode == 0


def test_a_wrong_entry_fails_both(sample, tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    indexed = logs / "clicks-0" / "00000000000000000000.index"
    entries = index.read_offset_index(indexed.read_bytes(), 0)
    # an offset past the entry's batches, before the next entry: a lookup of it would start too late
    entries[0] = index.OffsetEntry(entries[1].offset - 1, entries[0].position)
    indexed.write_bytes(index.encode_offset_index(entries, 0))
    checked, verified = run("reindex", "--check", logs), run("verify", logs)
    assert checked.returncode == 1 and verified.returncode == 1
    said = f"offset index: entry offset {entries[0].offset} but the batch at position {entries[0].position} ends at"
    assert said in checked.stderr and said in verified.stderr
    assert f"{indexed}: differs from the rebuilt index" in checked.stderr


def test_a_transaction_index_the_cleaner_kept_passes_both(tmp_path):
    part, txn_index = compacted(tmp_path)
    checked = run("reindex", "--check", part.path)
    assert checked.returncode == 0, checked.stderr
    assert f"note: {txn_index}: not the index recovery would build" in checked.stderr
    assert run("verify", part.path).returncode == 0
