"""Columnar figures: a segment of v2 batches decoded into Arrow arrays (offset, timestamp, key,
value, headers) by storage.segments.columnar, with and without CRC checks, beside aiokafka's C extension
materialising every record of the same batches (which checks no CRC), paired run by run."""
from __future__ import annotations

import statistics
import time

import pyarrow as pa

from kafkacodec.storage.segments.columnar import read_columns
from kafkacodec.storage.segments.scan import batch_positions

import peers


def to_arrow(seg: bytes, verify: bool = True) -> pa.RecordBatch:
    c = read_columns(seg, batch_positions(seg), verify=verify)
    return pa.record_batch([pa.array(c.offset), pa.array(c.timestamp), c.arrow_bytes("key"), c.arrow_bytes("value"),
                            c.arrow_headers()], names=["offset", "timestamp", "key", "value", "headers"])


def table(corpus, runs: int, batches: int = 2000) -> list[dict]:
    rows = []
    for value_size, codecs in ((100, peers.CODECS), (1024, ["none"])):
        data = corpus(value_size, batches)
        for codec in codecs:
            blobs = [peers.kp_encode(b, codec) for b in data]
            seg = b"".join(blobs)
            records = sum(len(b) for b in data)
            assert to_arrow(seg).num_rows == peers.aio_decode(blobs) == records
            ours, unchecked, theirs, ratios, unchecked_ratios = [], [], [], [], []
            for _ in range(runs):
                t = time.perf_counter()
                to_arrow(seg, verify=False)
                u = time.perf_counter() - t
                t = time.perf_counter()
                peers.aio_decode(blobs)
                b = time.perf_counter() - t
                t = time.perf_counter()
                to_arrow(seg)
                a = time.perf_counter() - t
                ours.append(a)
                unchecked.append(u)
                theirs.append(b)
                ratios.append(b / a)
                unchecked_ratios.append(b / u)
            rows.append({"value_bytes": value_size, "codec": codec, "records": records,
                         "columnar_rps": records / statistics.median(ours),
                         "columnar_no_crc_rps": records / statistics.median(unchecked),
                         "aiokafka_rps": records / statistics.median(theirs),
                         "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
                         "ratio_no_crc": statistics.median(unchecked_ratios)})
    return rows
