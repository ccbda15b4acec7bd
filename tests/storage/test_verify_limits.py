"""verify applies this run's reading limits (kafkacodec --max-batch-bytes, --max-decompressed-bytes,
--max-items) as the readers do: a batch they would refuse is said, naming its file and byte, as
not checked (not damage), and verify does not say ok (exit 1)."""
import os
import subprocess
import sys

import pytest

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.scan import iter_file_batches


def verify(limits, path, *options, pure=False):
    env = dict(os.environ, **({"KAFKACODEC_PURE": "1"} if pure else {}))
    return subprocess.run([sys.executable, "-m", "kafkacodec", *limits, "verify", *options, str(path)],
                          capture_output=True, text=True, env=env)


def batch_sizes(part):
    return {(seg.log, b.position): b.size for seg in part.segments for b in iter_file_batches(seg.log)}


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("quick", [False, True])
def test_a_batch_larger_than_max_batch_bytes_is_not_said_ok(sample, pure, quick):
    part = logdir.open_partition(sample / "clicks-0")
    sizes = batch_sizes(part)
    limit = sorted(sizes.values())[len(sizes) // 2]  # about half the batches are larger
    over = sorted(where for where, size in sizes.items() if size > limit)
    assert over and len(over) < len(sizes)
    options = ("--quick",) if quick else ()
    said = verify(["--max-batch-bytes", str(limit)], part.path, *options, pure=pure)
    assert said.returncode == 1, said.stdout
    lines = {line for line in said.stderr.splitlines() if "larger than the limit" in line}
    assert lines == {f"{log.with_suffix('')}: log: batch at position {position}: records not checked: batch of "
                     f"{sizes[(log, position)]} bytes is larger than the limit of {limit} (--max-batch-bytes; "
                     "kafkacodec.runtime.limits.LIMITS.max_batch_bytes) (a larger limit reads them; this is not damage)"
                     for log, position in over}
    # the largest batch within the limit: every batch is read, and verify says ok
    said = verify(["--max-batch-bytes", str(max(sizes.values()))], part.path, *options, pure=pure)
    assert said.returncode == 0, said.stderr


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("limits, words", [
    (["--max-decompressed-bytes", "10"], "decompressed size exceeds the limit"),
    (["--max-items", "1"], "over the limit of 1"),
])
def test_decoding_limits_leave_batches_unchecked_and_said(sample, pure, limits, words):
    said = verify(limits, sample / "clicks-0", pure=pure)
    assert said.returncode == 1
    assert "log: batch at position" in said.stderr and words in said.stderr
    assert verify([], sample / "clicks-0", pure=pure).returncode == 0
