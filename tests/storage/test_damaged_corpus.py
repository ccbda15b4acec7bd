"""The damaged-segment corpus (tests/fixtures/damaged, made by make_corpus.py): every file gives
its expected typed error at the start of its first bad batch, after every valid batch; the
recovery scan keeps the same prefix for damage it can see; bombs stop at the limit in bounded
memory."""
import json
import subprocess
import sys

import pytest

from tests.support import TESTS
from kafkacodec import read_batches
from kafkacodec.runtime import errors
from kafkacodec.storage.segments.scan import scan_bytes

CORPUS = TESTS / "fixtures" / "damaged"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
# damage inside a batch's records: the CRC still matches, so recovery (which reads batch
# headers and CRCs only, as Kafka's does) keeps the batch; reading its records finds it
INSIDE_RECORDS = {"varint_6_bytes.log", "varlong_11_bytes.log", "record_count_too_high.log",
                  "record_count_too_low.log", "damaged_deflate_stream.log", "bomb_gzip.log", "bomb_zstd.log",
                  "bomb_lz4.log", "bomb_legacy_gzip_wrapper.log"}


def first_damage(data: bytes):
    """(start of the first batch that does not read, its error, the offsets read before it)."""
    offsets, pos = [], 0
    try:
        for batch in read_batches(data):
            pos = batch.position
            offsets += [r.offset for r in batch]
            pos = batch.position + batch.size
    except errors.DecodeError as err:
        return pos, err, offsets
    return None, None, offsets


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_damaged_file_reports_its_error_after_every_valid_batch(name):
    want = EXPECTED[name]
    data = (CORPUS / name).read_bytes()
    assert len(data) == want["size"]
    start, err, offsets = first_damage(data)
    assert start == want["valid_prefix"], (name, err)
    assert isinstance(err, getattr(errors, want["error"])), (name, type(err).__name__, err)
    assert err.position is not None and err.position >= start  # the byte that failed, in or after its batch
    # every record of every batch before the damage was read (five per batch, from offset 0)
    assert offsets == list(range(len(offsets))) and len(offsets) % 5 == 0 and (len(offsets) > 0) == (start > 0)
    scan = scan_bytes(data)
    if name in INSIDE_RECORDS:
        assert scan.is_valid
    else:
        assert not scan.is_valid and scan.valid_bytes == want["valid_prefix"]
        assert isinstance(scan.error, errors.DecodeError)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("bomb_")))
def test_bombs_stop_at_the_limit_in_bounded_memory(name):
    # VmHWM, not ru_maxrss: a forked child's maximum RSS survives exec and counts the parent
    code = ("import sys\n"
            "from kafkacodec import read_batches\n"
            "from kafkacodec.runtime.errors import LimitExceededError\n"
            f"data = open({str(CORPUS / name)!r}, 'rb').read()\n"
            "try:\n"
            "    for batch in read_batches(data):\n"
            "        list(batch)\n"
            "    sys.exit('no limit error')\n"
            "except LimitExceededError:\n"
            "    pass\n"
            "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    peak_kib = int(run.stdout.split()[-1])
    assert peak_kib < 256 * 1024, f"{name}: peak RSS {peak_kib // 1024} MiB"


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True)


def test_dump_lists_a_batch_of_an_unknown_magic_as_kafka_does_and_reports_it():
    """Kafka's tool reads magic 3 and above as v2 and goes on; `dump` lists it too, and reports it
    where `verify` does."""
    path = CORPUS / "unknown_magic.log"
    at = EXPECTED["unknown_magic.log"]["valid_prefix"]
    run = kc("dump", str(path))
    assert run.returncode == 1 and f" position: {at} " in run.stdout and " magic: 7 " in run.stdout
    assert [line.split()[1] for line in run.stdout.splitlines() if line.startswith("baseOffset:")] == ["0", "5", "10"]
    assert f"invalid from byte {at} " in run.stderr


@pytest.mark.parametrize("name", ["negative_length.log"])
def test_skip_corrupt_reads_on_after_the_damaged_batch(name):
    """Kafka's tool stops at the damage; --skip-corrupt finds the next batch whose CRC matches,
    reports the skipped range and prints the rest."""
    path = CORPUS / name
    second = EXPECTED[name]["valid_prefix"]
    stopped = kc("dump", str(path))
    assert stopped.returncode == 1 and stopped.stdout.count("baseOffset:") == 1
    went_on = kc("dump", "--skip-corrupt", str(path))
    assert went_on.returncode == 1
    assert [line.split()[1] for line in went_on.stdout.splitlines() if line.startswith("baseOffset:")] == ["0", "10"]
    third = EXPECTED["torn_write.log"]["valid_prefix"]  # where the third batch starts, in every file
    assert f"(bytes {second}..{third} skipped)" in went_on.stderr
    as_json = kc("dump", "--json", "--skip-corrupt", str(path))
    assert [json.loads(line)["baseOffset"] for line in as_json.stdout.splitlines()] == [0, 10]


def test_a_batch_whose_records_do_not_decode_is_listed_as_such():
    path = CORPUS / "damaged_deflate_stream.log"
    run = kc("dump", "--json", "--skip-corrupt", str(path))
    listed = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(b["baseOffset"], b["recordsValid"]) for b in listed] == [(0, True), (5, False)]
    assert run.returncode == 1 and "records of the batch at byte" in run.stderr and "gzip" in run.stderr
    text = kc("dump", "--deep-iteration", "--skip-corrupt", str(path))
    assert text.stdout.count("baseOffset:") == 2 and "records of the batch at byte" in text.stderr


def test_batches_larger_than_the_limit_are_refused_before_reading(monkeypatch):
    from kafkacodec import write_batch
    from kafkacodec.runtime.limits import LIMITS
    data = write_batch([{"value": b"x" * 5000}]) + write_batch([{"value": b"y"}], base_offset=1)
    monkeypatch.setattr(LIMITS, "max_batch_bytes", 1000)
    with pytest.raises(errors.LimitExceededError) as err:
        list(read_batches(data))
    assert err.value.position == 8
    assert scan_bytes(data).is_valid  # recovery, like Kafka's, has no such limit


def test_verify_skip_corrupt_reports_every_damaged_range(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    damaged = (CORPUS / "unknown_magic.log").read_bytes()
    (part / "00000000000000000000.log").write_bytes(damaged + damaged)  # the same damage twice
    first = kc("verify", str(part))
    assert first.returncode == 1 and first.stderr.count("invalid from byte 141") == 1
    every = kc("verify", "--skip-corrupt", str(part))
    third = EXPECTED["torn_write.log"]["valid_prefix"]
    size = len(damaged)
    assert every.returncode == 1
    assert f"bytes 141..{third} damaged" in every.stderr
    assert f"bytes {size + 141}..{size + third} damaged" in every.stderr
    assert "3 valid batches after the first damage" in every.stderr


def test_counted_lists_are_bounded(monkeypatch):
    """Every decoded item is a Python object: a batch of many tiny records is refused at the
    limit rather than filling memory."""
    from kafkacodec import write_batch
    from kafkacodec.runtime.limits import LIMITS
    data = write_batch([{"value": b""} for _ in range(50)])
    monkeypatch.setattr(LIMITS, "max_items", 40)
    with pytest.raises(errors.LimitExceededError, match="max_items"):
        for batch in read_batches(data):
            list(batch)


def test_the_command_takes_the_limits():
    path = CORPUS / "damaged_deflate_stream.log"  # its first batch is 141 bytes
    small = kc("--max-batch-bytes", "100", "dump", "--json", str(path))
    assert small.returncode == 1 and "max_batch_bytes" in small.stderr and small.stdout == ""
    assert kc("--max-batch-bytes", "0", "dump", str(path)).returncode == 2  # a usage error
