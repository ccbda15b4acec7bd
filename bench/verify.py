"""verify on a 1 GiB segment of 100-byte records (100 per batch, half with a header; uncompressed
and lz4): bytes per second of the deep check (every record decoded) and of --quick (framing and
CRCs, what Kafka's recovery checks), and the peak resident memory of each in a fresh process."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkacodec import Record, write_batch
from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout.logdir import open_partition
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.audit.verify import verify_partition

ROOT = Path(__file__).resolve().parent.parent
BASE = "00000000000000000000"


def build(part: Path, size: int, codec: str) -> int:
    """Batches of 100 records with rising base offsets up to `size` bytes, and their indexes; the
    number of records."""
    records = [Record(key=b"key-%06d" % i, value=(b"%08d:" % i + b"payload-" * 13)[:100],
                      timestamp=1_700_000_000_000 + i, headers=[("trace", b"%016x" % i)] if i % 2 == 0 else [])
               for i in range(100)]
    batch = write_batch(records, compression=codec)
    copies = size // len(batch)
    with open(part / f"{BASE}.log", "wb") as f:
        for i in range(copies):
            f.write((i * 100).to_bytes(8, "big") + batch[8:])  # the CRC does not cover the base offset
    offsets, times = index.rebuild(scan_file(part / f"{BASE}.log", verify=False).batches, 0)
    (part / f"{BASE}.index").write_bytes(index.encode_offset_index(offsets, 0))
    (part / f"{BASE}.timeindex").write_bytes(index.encode_time_index(times, 0))
    return copies * 100


def peak_rss(part: Path, quick: bool) -> int:
    """Peak resident memory (VmHWM) of verify in a fresh process, less its resident memory before
    (ru_maxrss would carry the parent's peak across fork and exec)."""
    code = ("import sys\nfrom pathlib import Path\nfrom kafkacodec.storage.layout.logdir import open_partition\n"
            "from kafkacodec.storage.audit.verify import verify_partition\n"
            "def status(field):\n"
            "    return next(int(line.split()[1]) * 1024 for line in open('/proc/self/status') "
            "if line.startswith(field + ':'))\n"
            "p = open_partition(Path(sys.argv[1]))\nbefore = status('VmRSS')\n"
            f"assert all(r.ok for r in verify_partition(p, quick={quick}))\n"
            "print(status('VmHWM') - before)\n")
    return int(subprocess.run([sys.executable, "-c", code, str(part)], capture_output=True, text=True,
                              check=True).stdout)


def table(size: int = 1 << 30) -> list[dict]:
    rows = []
    for codec in ("none", "lz4"):
        with tempfile.TemporaryDirectory() as tmp:
            part = Path(tmp) / "verify-0"
            part.mkdir()
            records = build(part, size, codec)
            file_size = (part / f"{BASE}.log").stat().st_size
            for quick in (False, True):
                times = []
                for _ in range(2):
                    t = time.perf_counter()
                    reports = verify_partition(open_partition(part), quick=quick)
                    times.append(time.perf_counter() - t)
                    assert all(r.ok for r in reports) and (quick or sum(r.records for r in reports) == records)
                rows.append({"codec": codec, "mode": "--quick" if quick else "deep (every record)",
                             "file_bytes": file_size, "MBps": file_size / min(times) / 1e6,
                             "records_per_s": records / min(times), "peak_rss_bytes": peak_rss(part, quick)})
    return rows
