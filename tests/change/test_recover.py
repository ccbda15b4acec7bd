"""`recover`: cut bytes kept under names never written over, a segment file whose name is not an
offset, indexes rebuilt where they disagree with the log, a dry run that says what the real run
does, and the exit status."""
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.indexes.txnindex import read_txn_index
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter

ABORT = {"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00", "timestamp": 50}
TXN = {"producer_id": 5, "producer_epoch": 0, "is_transactional": True}


def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def partition(path, batches=6):
    with PartitionWriter(path) as w:
        for i in range(batches):
            w.append([{"key": b"k%d" % i, "value": b"v" * 40, "timestamp": 10 + i}])
    return logdir.open_partition(path)


def flip(path, position):
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_second_cut_at_the_same_position_never_overwrites_the_first(tmp_path):
    part = partition(tmp_path / "t-0")
    log = part.segments[0].log
    third = scan_file(log).batches[2]
    flip(log, third.position + 30)
    first_tail = log.read_bytes()[third.position:]
    assert kafkacodec("recover", part.path).returncode == 0
    kept = log.with_name(f"{log.name}.corrupt-{third.position}")
    assert kept.read_bytes() == first_tail
    # the same damage again at the same place: a second file, the first untouched
    with open(log, "ab") as f:
        f.write(first_tail[:-5] + b"other")
    second_tail = log.read_bytes()[third.position:]
    run = kafkacodec("recover", part.path)
    assert run.returncode == 0, run.stderr
    again = log.with_name(f"{kept.name}-2")
    assert kept.read_bytes() == first_tail and again.read_bytes() == second_tail
    assert str(again) in run.stdout


def test_a_segment_file_named_otherwise_is_recovered_and_the_dry_run_says_so(tmp_path):
    part = partition(tmp_path / "t-0")
    suspect = tmp_path / "t-0" / "suspect.log"
    suspect.write_bytes(part.segments[0].log.read_bytes())
    fourth = scan_file(suspect).batches[3]
    flip(suspect, fourth.position + 40)
    before = suspect.read_bytes()
    dry = kafkacodec("recover", "--dry-run", suspect)
    assert dry.returncode == 0, dry.stderr
    assert f"would truncate to {fourth.position} bytes" in dry.stdout and "nothing to recover" not in dry.stdout
    assert suspect.read_bytes() == before  # a dry run changes nothing
    real = kafkacodec("recover", suspect)
    assert real.returncode == 0, real.stderr
    # the real run does what the dry run said, word for word but the tense
    assert real.stdout.replace("truncated", "would truncate").replace("are kept", "would be kept").replace(
        "rebuilt", "would rebuild") == dry.stdout
    assert suspect.read_bytes() == before[:fourth.position]
    assert (tmp_path / "t-0" / f"suspect.log.corrupt-{fourth.position}").read_bytes() == before[fourth.position:]


def test_an_abort_marker_missing_from_the_transaction_index_is_put_back(tmp_path):
    """As a kill between the marker and its .txnindex entry leaves it: a broker (and the Spark
    source) serving read-committed fetches from the index would show the aborted records."""
    path = tmp_path / "t-0"
    with PartitionWriter(path) as w:
        w.append([{"key": b"a", "value": b"kept", "timestamp": 1}])
        w.append([{"key": b"a", "value": b"aborted", "timestamp": 2}], base_sequence=0, **TXN)
        w.append([ABORT], is_control=True, **TXN)
        w.append([{"key": b"b", "value": b"after", "timestamp": 3}])
    txn = next(path.glob("*.txnindex"))
    entries = read_txn_index(txn.read_bytes())
    txn.unlink()
    assert not all(r.ok for r in verify_partition(logdir.open_partition(path)))
    dry = kafkacodec("recover", "--dry-run", path)
    assert "would rebuild 00000000000000000000.txnindex (lacks 1 aborted transaction" in dry.stdout
    run = kafkacodec("recover", path)
    assert run.returncode == 0 and "rebuilt 00000000000000000000.txnindex" in run.stdout, run.stdout + run.stderr
    assert read_txn_index(txn.read_bytes()) == entries
    part = logdir.open_partition(path)
    assert all(r.ok for r in verify_partition(part))
    assert kafkacodec("recover", path).stdout.strip().endswith("nothing to recover")


def test_index_entries_kept_when_the_log_no_longer_explains_them(tmp_path):
    """The cleaner removes aborted data and keeps the entry: recover keeps it too, adding only
    what is missing and dropping what lies past the log's end."""
    path = tmp_path / "t-0"
    with PartitionWriter(path) as w:
        w.append([{"key": b"a", "value": b"1", "timestamp": 1}])
        w.append([{"key": b"a", "value": b"2", "timestamp": 2}], base_sequence=0, **TXN)
        w.append([ABORT], is_control=True, **TXN)
    txn = next(path.glob("*.txnindex"))
    (real,) = read_txn_index(txn.read_bytes())
    from kafkacodec.storage.indexes.txnindex import AbortedTxn, encode_txn_index
    compacted_away = AbortedTxn(9, 0, 0, 1)  # a marker at offset 0, whose data the cleaner removed
    past_the_end = AbortedTxn(9, 5, 70, 71)
    txn.write_bytes(encode_txn_index([compacted_away, past_the_end]))
    run = kafkacodec("recover", path)
    assert run.returncode == 0, run.stderr
    assert read_txn_index(txn.read_bytes()) == [compacted_away, real]


def test_missing_and_inconsistent_indexes_are_rebuilt_and_valid_ones_left_alone(tmp_path):
    part = partition(tmp_path / "t-0", batches=200)  # several index entries
    seg = part.segments[0]
    untouched = seg.time_index.read_bytes()
    stamp = seg.time_index.stat().st_mtime_ns
    seg.index.write_bytes(seg.index.read_bytes()[:-8] + (7).to_bytes(4, "big") + (3).to_bytes(4, "big"))
    run = kafkacodec("recover", part.path)
    assert run.returncode == 0 and "rebuilt 00000000000000000000.index (offset index:" in run.stdout, run.stdout
    assert seg.time_index.read_bytes() == untouched and seg.time_index.stat().st_mtime_ns == stamp
    assert all(r.ok for r in verify_partition(logdir.open_partition(part.path)))
    seg.time_index.write_bytes(untouched + b"\x01")  # a stray byte
    run = kafkacodec("recover", part.path)
    assert "rebuilt 00000000000000000000.timeindex (unreadable (" in run.stdout, run.stdout
    assert "timeindex: byte 72: time_index: time index of 73 bytes is not a multiple of 12" in run.stdout
    assert seg.time_index.read_bytes() == untouched
    seg.index.unlink()
    assert "rebuilt 00000000000000000000.index (missing)" in kafkacodec("recover", part.path).stdout
    assert all(r.ok for r in verify_partition(logdir.open_partition(part.path)))


def test_a_segment_argument_that_cannot_be_read_is_refused(tmp_path):
    import os
    part = partition(tmp_path / "t-0")
    fifo = part.path / f"{99:020d}.log"
    os.mkfifo(fifo)
    run = kafkacodec("recover", fifo)  # a file that cannot be used: refused at once, naming it
    assert run.returncode == 2 and f"{fifo}: is a FIFO" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    fifo.unlink()  # a partition holding a FIFO by a segment's name is refused as a whole
    assert [r.offset for _, r in partition_records(logdir.open_partition(part.path))] == list(range(6))


def test_recover_says_which_offsets_and_records_the_cut_holds(tmp_path):
    """Damage in the middle: the cut holds the damaged batch (unreadable) and the batches after it,
    whose offsets and records recover names; `dump --skip-corrupt` reads the kept file the same."""
    path = tmp_path / "t-0"
    with PartitionWriter(path) as w:
        for i in range(10):
            w.append([{"key": b"k", "value": b"v%d" % j, "timestamp": 10 + j} for j in range(i * 3, i * 3 + 3)])
    log = logdir.open_partition(path).segments[0].log
    batches = scan_file(log).batches
    flip(log, batches[4].position + 40)
    run = kafkacodec("recover", path)
    assert run.returncode == 0, run.stderr
    kept = path / f"{log.name}.corrupt-{batches[4].position}"
    assert f"kept in {kept}: offsets 15..29 in 5 batches (15 records readable) and {batches[4].size} bytes " \
           "that do not read" in run.stdout, run.stdout
    dumped = kafkacodec("dump", kept)  # listed as Kafka lists a log: the damaged batch with isvalid: false
    listed = [line for line in dumped.stdout.splitlines() if line.startswith("baseOffset")]
    assert [line.split()[1] for line in listed] == ["12", "15", "18", "21", "24", "27"], dumped.stdout
    assert listed[0].endswith("isvalid: false") and all(line.endswith("isvalid: true") for line in listed[1:])
