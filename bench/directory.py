"""Whole-directory figures: a partition of several segments written by the partition writer, then
the recovery scan of every segment (batch headers and CRCs) and full record iteration."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from kafkacodec.storage.layout.logdir import open_log_dir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.change.writer import PartitionWriter


def build(root: Path, batches: int = 2000, per_batch: int = 100, value_size: int = 100) -> int:
    with PartitionWriter(root / "bench-0", segment_bytes=8 << 20) as w:
        for b in range(batches):
            w.append([{"key": b"key-%d" % (i % 97), "value": b"v" * value_size, "timestamp": 1_700_000_000_000 + b}
                      for i in range(per_batch)])
    return batches * per_batch


def table(batches: int = 2000) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        records = build(root, batches)
        part = open_log_dir(root).partitions[0]
        size = sum(s.log.stat().st_size for s in part.segments)
        rows = []
        for verify, label in ((True, "recovery scan"), (False, "recovery scan, CRCs not checked")):
            t = time.perf_counter()
            for seg in part.segments:
                assert scan_file(seg.log, keep_batches=False, verify=verify).is_valid
            elapsed = time.perf_counter() - t
            rows.append({"workload": f"{label}, {len(part.segments)} segments", "MBps": size / elapsed / 1e6,
                         "records_per_s": records / elapsed})
        for verify, label in ((True, "every record of the partition"), (False, "every record, CRCs not checked")):
            t = time.perf_counter()
            n = sum(1 for _ in partition_records(part, verify=verify))
            elapsed = time.perf_counter() - t
            assert n == records
            rows.append({"workload": label, "MBps": size / elapsed / 1e6, "records_per_s": records / elapsed})
        return rows
