"""Lazy access and memory on a 1 GiB segment: reading batch headers only (offsets, timestamps,
counts), lookups by offset through the index, and the peak resident memory of
streaming scans (each in a fresh process) against the largest batch."""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkacodec import Record, write_batch
from kafkacodec.storage.indexes import index, index_search
from kafkacodec.storage.layout.logdir import open_partition
from kafkacodec.storage.indexes.lookup import find_offset
from kafkacodec.storage.segments.scan import scan_file

ROOT = Path(__file__).resolve().parent.parent
BASE = "00000000000000000000"


def build(part: Path, size: int) -> tuple[int, int]:
    """Copies of one 100-record batch (1 KiB values) with rising base offsets, and its indexes."""
    batch = write_batch([Record(key=b"key-%d" % i, value=b"v" * 1024, timestamp=1_700_000_000_000 + i)
                         for i in range(100)])
    copies = size // len(batch)
    with open(part / f"{BASE}.log", "wb") as f:
        for i in range(copies):
            f.write((i * 100).to_bytes(8, "big") + batch[8:])
    scanned = scan_file(part / f"{BASE}.log", verify=False)
    offsets, times = index.rebuild(scanned.batches, 0)
    (part / f"{BASE}.index").write_bytes(index.encode_offset_index(offsets, 0))
    (part / f"{BASE}.timeindex").write_bytes(index.encode_time_index(times, 0))
    return len(batch), copies * 100


def table(size: int = 1 << 30) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / "big-0"
        part.mkdir()
        largest, records = build(part, size)
        log = part / f"{BASE}.log"
        file_size = log.stat().st_size
        rows = []
        for verify, label in ((False, "batch headers only (offsets, timestamps, counts)"),
                              (True, "batch headers and CRC-32C of every batch")):
            times = []
            for _ in range(3):
                t = time.perf_counter()
                assert scan_file(log, keep_batches=False, verify=verify).is_valid
                times.append(time.perf_counter() - t)
            rows.append({"workload": label, "GBps": file_size / min(times) / 1e9})
        seg = open_partition(part).segments[0]
        reads = []
        real = index_search.offset_entry
        index_search.offset_entry = lambda buf, i: reads.append(i) or real(buf, i)
        try:
            rng = random.Random(1)
            targets = [rng.randrange(records) for _ in range(200)]
            t = time.perf_counter()
            for target in targets:
                batch = find_offset(seg, target)
                assert batch.base_offset <= target <= batch.last_offset
            lookup_us = (time.perf_counter() - t) / len(targets) * 1e6
        finally:
            index_search.offset_entry = real
        entries = (part / f"{BASE}.index").stat().st_size // 8
        memory = {}
        for way in ("headers", "batches", "columns"):
            out = subprocess.run([sys.executable, str(ROOT / "tests" / "support" / "scan_memory.py"), way, str(log)],
                                 capture_output=True, text=True, check=True).stdout
            memory[way] = int(out)
        return {"file_bytes": file_size, "largest_batch": largest, "scans": rows,
                "lookup": {"index_entries": entries, "entries_read_per_lookup": len(reads) / len(targets),
                           "microseconds_per_lookup": lookup_us},
                "peak_rss_bytes": memory}
