"""`write` applies the limits every reader here applies (--max-items, --max-batch-bytes,
--max-decompressed-bytes): a batch that `verify` would refuse for them is refused, naming the
line and the field, before it is written. A 6 MB line of 2,000,000 empty records used to become
one batch (16.7 s, 1.34 GB peak) that `verify` then refused, and `--max-items` had no effect."""
import base64
import json
import subprocess
import sys

import pytest


def kc(*args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, input=stdin)


def line(**batch):
    return json.dumps(batch).encode() + b"\n"


def test_max_items_bounds_the_records_of_a_batch(tmp_path):
    out = tmp_path / "00000000000000000000.log"
    run = kc("--max-items", "100", "write", out, stdin=line(records=[{}] * 101))
    assert run.returncode == 2 and not out.exists()
    assert run.stderr.decode().startswith("error: line 1: records: 101 records, over the limit of 100 per batch")
    assert kc("--max-items", "100", "write", out, stdin=line(records=[{}] * 100)).returncode == 0
    verify = kc("--max-items", "100", "verify", out)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_max_items_bounds_the_headers_of_a_record(tmp_path):
    out = tmp_path / "00000000000000000000.log"
    headers = [["h%d" % i, None] for i in range(11)]
    run = kc("--max-items", "10", "write", out, stdin=line(records=[{}]) + line(records=[{}, {"headers": headers}]))
    assert run.returncode == 2 and not out.exists()
    assert run.stderr.decode().startswith("error: line 2: records[1].headers: 11 headers, over the limit of 10")


def test_millions_of_empty_records_are_refused_at_once_in_bounded_memory(tmp_path):
    """Measured in a process of its own: the peak resident memory of the command alone."""
    src = tmp_path / "big.jsonl"
    src.write_bytes(b'{"records":[' + b"{}," * 1_999_999 + b"{}]}\n")
    out = tmp_path / "00000000000000000000.log"
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             f"run = subprocess.run([sys.executable, '-m', 'kafkacodec', 'write', {str(out)!r}], "
             f"stdin=open({str(src)!r}, 'rb'), capture_output=True)\n"
             "print(run.returncode, time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.stderr.buffer.write(run.stderr)\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    status, seconds, peak_kib = run.stdout.split()
    assert int(status) == 2 and not out.exists()
    assert "error: line 1: records: 2,000,000 records, over the limit of 1,048,576" in run.stderr
    assert int(peak_kib) < 512 * 1024, peak_kib  # the parsed line, not a batch of it (1.34 GB)
    assert float(seconds) < 12, seconds


@pytest.mark.parametrize("options", [[], ["--recompute"]])
def test_a_batch_over_the_size_limit_is_refused(tmp_path, options):
    out = tmp_path / "00000000000000000000.log"
    value = base64.b64encode(bytes(3000)).decode()
    run = kc("--max-batch-bytes", "1000", "write", *options, out, stdin=line(records=[{"value": value}]))
    assert run.returncode == 2 and not out.exists()
    assert run.stderr.decode().startswith("error: line 1: the batch written would not read back: batch of 30")
    assert "larger than the limit of 1000" in run.stderr.decode()


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_a_compressed_batch_that_would_inflate_over_the_limit_is_refused(tmp_path, codec):
    out = tmp_path / "00000000000000000000.log"
    value = base64.b64encode(bytes(5000)).decode()
    batch = line(compression=codec, records=[{"value": value}])
    run = kc("--max-decompressed-bytes", "1000", "write", out, stdin=batch)
    assert run.returncode == 2 and not out.exists()
    assert "the batch written would not read back" in run.stderr.decode()
    assert "limit of 1000" in run.stderr.decode()
    assert kc("write", out, stdin=batch).returncode == 0  # within the default limit
