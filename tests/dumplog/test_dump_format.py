"""`kafkacodec dump` prints what Kafka 4.1's kafka-dump-log prints (FORMATS.md section 10.2), and
reports damage where and as `verify` does. tests/dumplog/test_dump_log.py holds the golden files of the
drop-in `dump-log`."""
import subprocess
import sys

from tests.support import TESTS
from kafkacodec import write_batch
from kafkacodec.storage.indexes import index

SAMPLE = (TESTS / "fixtures" / "sample.log").read_bytes()
V2 = bytes.fromhex("0000000000000000" "00000039" "00000000" "02" "ebf1884b" "0000" "00000000"
                   "00000000000003e8" "00000000000003e8" "ffffffffffffffff" "ffff" "ffffffff" "00000001"
                   "0e" "00" "00" "00" "01" "02" "61" "00")


def dump(path, *options):
    return subprocess.run([sys.executable, "-m", "kafkacodec", "dump", *options, str(path)],
                          capture_output=True, text=True)


def test_batch_line_is_kafkas(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(V2)
    run = dump(log)
    assert run.returncode == 0
    assert run.stdout.splitlines() == [
        f"Dumping {log}",
        "Log starting offset: 0",
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1000 size: 69 magic: 2 compresscodec: none crc: 3958474827 isvalid: true"]


def test_record_lines_for_every_magic(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(SAMPLE)
    lines = dump(log, "--print-data-log").stdout.splitlines()
    assert lines[2].startswith("offset: 0 position: 0 NoTimestampType: -1 size: 58 magic: 0 compresscodec: none")
    assert lines[3] == ('| offset: 0 NoTimestampType: -1 keySize: 6 valueSize: 26 isValid: true crc: 1590934967}'
                        ' key: user-0 payload: {"event": "login", "n": 0}')
    v2 = next(line for line in lines if line.startswith("| offset: 9 "))
    assert v2 == ('| offset: 9 CreateTime: 1500000009000 keySize: 6 valueSize: 26 sequence: -1 '
                  'headerKeys: [source,trace-id] key: user-1 payload: {"event": "click", "n": 9}')
    txn = next(line for line in lines if line.startswith("| offset: 55 "))
    assert " sequence: 1 headerKeys: [] " in txn  # baseSequence 0 + offset delta 1


def test_control_markers_and_damage(tmp_path):
    log = tmp_path / "00000000000000000007.log"
    marker = write_batch([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x05", "timestamp": 9}],
                         base_offset=7, is_control=True, is_transactional=True, producer_id=4, producer_epoch=1)
    log.write_bytes(marker + b"\x00" * 30)
    run = dump(log, "--print-data-log")
    lines = run.stdout.splitlines()
    assert lines[1] == "Log starting offset: 7"
    assert lines[3] == ("| offset: 7 CreateTime: 9 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
                        "endTxnMarker: ABORT coordinatorEpoch: 5")
    assert lines[4] == f"Found 30 invalid bytes at the end of {log.name}"
    assert run.returncode == 1
    verified = subprocess.run([sys.executable, "-m", "kafkacodec", "verify", str(log)], capture_output=True, text=True)
    said = next(line for line in verified.stderr.splitlines() if "invalid from byte" in line)
    assert said.startswith(f"{log}: invalid from byte {len(marker)} (30 bytes): byte {len(marker) + 8}: ")
    assert run.stderr.strip() == f"error: {said}"  # the same byte, the same words
    assert dump(log, "--max-bytes", "100").stdout.splitlines()[-1].startswith("baseOffset: 7")


def test_index_dumps(tmp_path):
    idx = tmp_path / "00000000000000000100.index"
    idx.write_bytes(index.encode_offset_index([index.OffsetEntry(150, 4200), index.OffsetEntry(190, 8500)], 100)
                    + bytes(16))
    assert dump(idx).stdout.splitlines() == [f"Dumping {idx}", "offset: 150 position: 4200",
                                             "offset: 190 position: 8500"]
    tidx = tmp_path / "00000000000000000100.timeindex"
    tidx.write_bytes(bytes(24))  # slot 0 is read even when zero; the next at the base offset ends the list
    run = dump(tidx)
    assert run.stdout.splitlines() == [f"Dumping {tidx}", "timestamp: 0 offset: 100"]
    assert run.returncode == 0 and "is missing: the entries of the index beside it are listed unchecked" in run.stderr
    tidx.write_bytes(b"")
    assert dump(tidx).stdout.splitlines() == [f"Dumping {tidx}"]  # no "is empty." for a time index


def test_verify_index_only_and_sanity_check(tmp_path):
    import struct
    from kafkacodec.storage.change.writer import PartitionWriter
    with PartitionWriter(tmp_path / "t-0", index_interval_bytes=300) as w:
        for i in range(30):
            w.append([{"value": b"x" * 100, "timestamp": 5000 + 10 * i}] * 2)
    idx, tidx = tmp_path / "t-0" / "00000000000000000000.index", tmp_path / "t-0" / "00000000000000000000.timeindex"
    run = dump(idx, "--verify-index-only")
    assert run.stdout.splitlines() == [f"Dumping {idx}"] and run.stderr == ""
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", "--verify-index-only", str(tidx)],
                         capture_output=True, text=True)
    assert run.stderr == ""
    assert dump(idx, "--index-sanity-check").stdout.splitlines()[-1] == f"{idx} passed sanity check."
    data = bytearray(idx.read_bytes())
    struct.pack_into(">i", data, 0, struct.unpack_from(">i", data, 0)[0] + 1)  # first entry's offset
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 8)[0] + 1)  # and the second's
    idx.write_bytes(bytes(data))
    entries = index.read_offset_index(bytes(data), 0)
    run = dump(idx, "--verify-index-only")
    assert run.stderr.splitlines() == [f"Mismatches in :{idx.resolve()}",
                                       f"  Index offset: {entries[1].offset}, log offset: {entries[1].offset - 1}",
                                       f"  Index offset: {entries[0].offset}, log offset: {entries[0].offset - 1}"]
    tdata = bytearray(tidx.read_bytes())
    struct.pack_into(">q", tdata, 12, 1)  # second entry: timestamp 1, below the first
    tidx.write_bytes(bytes(tdata))
    err = dump(tidx, "--verify-index-only").stderr.splitlines()
    assert f"Found timestamp mismatch in :{tidx.resolve()}" in err
    assert f"Found out of order timestamp in :{tidx.resolve()}" in err


def test_skip_record_metadata_non_consecutive_offsets_and_unknown_files(tmp_path):
    log = tmp_path / "00000000000000000010.log"
    log.write_bytes(write_batch([{"key": b"a", "value": b"1", "offset": 10}, {"value": b"2", "offset": 12},
                                 {"key": b"c", "value": None, "offset": 13}], base_offset=10))
    run = dump(log, "--print-data-log", "--skip-record-metadata")
    assert run.stdout.splitlines()[3:] == ["| key: a payload: 1", " payload: 2", "| key: c"]
    assert run.stderr.splitlines() == [f"Non-consecutive offsets in {log.resolve()}", "  10 is followed by 12"]
    other = tmp_path / "00000000000000000010.log.deleted"
    other.write_bytes(b"")
    run = dump(other)
    assert run.returncode == 0 and run.stderr.strip() == f"Ignoring unknown file {other}"
    assert run.stdout == f"Dumping {other}\n"  # first, as Kafka prints it for any file


def test_a_corrupt_snapshot_is_damage_to_dump_and_not_to_dump_log(tmp_path):
    snap = tmp_path / "00000000000000000000.snapshot"
    snap.write_bytes(b"\x00\x07" + bytes(30))
    ours = dump(snap)
    assert ours.returncode == 1 and "error: " in ours.stderr and "unknown file version 7" in ours.stderr
    kafkas = subprocess.run([sys.executable, "-m", "kafkacodec", "dump-log", "--files", str(snap)],
                            capture_output=True, text=True)
    assert kafkas.returncode == 0 and kafkas.stderr.startswith("Snapshot failed schema validation")
