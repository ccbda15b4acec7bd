"""`dump --json` reports damage as the text listing does (it exited 0 with nothing on stderr for a
batch whose CRC does not match, so scripts built on it missed damage), and `dump` takes a
partition directory or a log dir as `verify` does."""
import json
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.change.writer import PartitionWriter


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def errors(run):
    return [line for line in run.stderr.splitlines() if line.startswith("error: ")]


def crc_damaged(path):
    """Four plain batches; the second's value has one bit flipped: its records still decode, its
    CRC does not match."""
    with PartitionWriter(path) as w:
        for i in range(4):
            w.append([{"key": b"k%d" % i, "value": b"value-%d" % i, "timestamp": 1000 + i}])
    log = logdir.open_partition(path).segments[0].log
    b = scan_file(log).batches[1]
    data = bytearray(log.read_bytes())
    data[b.position + b.size - 3] ^= 0x01
    log.write_bytes(bytes(data))
    return log, b


def test_dump_json_reports_a_crc_mismatch_as_the_text_listing_does(tmp_path):
    log, bad = crc_damaged(tmp_path / "t-0")
    text = kc("dump", log)
    as_json = kc("dump", "--json", log)
    assert text.returncode == 1
    assert as_json.returncode == 1, as_json.stderr
    expected = f"error: {log}: invalid from byte {bad.position} ({bad.size} bytes): byte {bad.position}: record_batch/crc"
    assert errors(as_json) == errors(text) and errors(as_json)[0].startswith(expected)
    batches = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [b["crcValid"] for b in batches] == [True, False, True, True]  # every batch still listed
    # and with --skip-corrupt the same
    skipping = kc("dump", "--json", "--skip-corrupt", log)
    assert skipping.returncode == 1 and errors(skipping) == errors(text)


def test_an_intact_segment_still_dumps_with_exit_0(tmp_path):
    with PartitionWriter(tmp_path / "t-0") as w:
        w.append([{"value": b"x"}])
    run = kc("dump", "--json", tmp_path / "t-0" / "00000000000000000000.log")
    assert run.returncode == 0 and run.stderr == "" and json.loads(run.stdout)["crcValid"] is True


def test_dump_takes_a_partition_directory_and_a_log_dir(tmp_path):
    write_sample(tmp_path / "logs")
    root = logdir.open_log_dir(tmp_path / "logs")
    every_log = [seg.log for part in root.partitions for seg in part.segments]
    payments = next(p for p in root.partitions if p.topic == "payments")
    for options in ([], ["--json"], ["--print-data-log"]):
        by_files = kc("dump", *options, *every_log)
        by_dir = kc("dump", *options, tmp_path / "logs")
        assert by_dir.returncode == by_files.returncode == 0, by_dir.stderr
        assert by_dir.stdout == by_files.stdout
        one = kc("dump", *options, payments.path)
        assert one.returncode == 0
        assert one.stdout == kc("dump", *options, *[s.log for s in payments.segments]).stdout
    assert len(payments.segments) == 3


def test_damage_found_in_a_directory_is_reported_and_an_empty_one_is_an_error(tmp_path):
    log, bad = crc_damaged(tmp_path / "logs" / "t-0")
    for options in ([], ["--json"]):
        run = kc("dump", *options, tmp_path / "logs")
        assert run.returncode == 1, run.stderr
        assert errors(run)[0].startswith(f"error: {log}: invalid from byte {bad.position}")
    (tmp_path / "empty").mkdir()
    run = kc("dump", tmp_path / "empty")
    assert run.returncode == 2 and errors(run) == [f"error: {tmp_path / 'empty'}: no segments to dump"]
