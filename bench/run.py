"""make bench: v2 batch decode and encode throughput, kafkacodec beside kafka-python's record code.

Same process, same corpus, median of several runs. Decoding materialises offset, timestamp, key,
value and headers of every record; encoding builds whole batches from (offset, timestamp, key,
value, headers) tuples. Prints a table and writes it as JSON under bench/results/.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkacodec import Record, write_batch
from kafkacodec.generated.record_batch import RecordBatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import directory  # noqa: E402
import instructions  # noqa: E402
import spark as spark_bench  # noqa: E402
from reference_reader import read_records  # noqa: E402

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
RECORDS_PER_BATCH = 100


def corpus(value_size: int, batches: int):
    """Tuples per batch: realistic keys, compressible values, a header on every other record."""
    out = []
    for b in range(batches):
        recs = []
        for i in range(RECORDS_PER_BATCH):
            n = b * RECORDS_PER_BATCH + i
            value = (b"%08d:" % n + b"payload-" * (value_size // 8 + 1))[:value_size]
            headers = [("trace", b"%016x" % n)] if i % 2 == 0 else []
            recs.append((i, 1_700_000_000_000 + n, b"key-%06d" % (n % 5000), value, headers))
        out.append(recs)
    return out


def kp_encode(batch, codec):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=CODECS[codec], is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for off, ts, key, value, headers in batch:
        b.append(off, timestamp=ts, key=key, value=value, headers=headers)
    return bytes(b.build())


def kc_records(data):
    """The corpus as kafkacodec Records, built before timing as kafka-python's tuples are."""
    return [[Record(key=k, value=v, timestamp=ts, offset=off, headers=h) for off, ts, k, v, h in batch]
            for batch in data]


def kc_encode(batch, codec):
    return write_batch(batch, compression=codec)


def kp_decode(blobs):
    n = 0
    for blob in blobs:
        for r in DefaultRecordBatch(blob):
            r.offset, r.timestamp, r.key, r.value, r.headers
            n += 1
    return n


def kc_decode(blobs):
    n = 0
    for blob in blobs:
        batch, _ = RecordBatch.read(blob)
        for r in batch.records.items:
            r.offset, r.timestamp, r.key, r.value, r.headers
            n += 1
    return n


def ref_decode(blobs):
    return sum(len(read_records(blob)) for blob in blobs)


def paired(ours, peer, arg_ours, arg_peer, runs):
    """Alternate the two, so a slow phase of the machine hits both; median time of each and the
    median of the per-pair ratios (peer time / our time)."""
    t_ours, t_peer, ratios = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        ours(arg_ours)
        a = time.perf_counter() - t
        t = time.perf_counter()
        peer(arg_peer)
        b = time.perf_counter() - t
        t_ours.append(a)
        t_peer.append(b)
        ratios.append(b / a)
    return statistics.median(t_ours), statistics.median(t_peer), statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, default=60, help="batches of 100 records per row")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-instructions", action="store_true", help="skip the valgrind instruction counts")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark source beside Parquet")
    args = ap.parse_args()
    rows = []
    for value_size in (100, 1024):
        data = corpus(value_size, args.batches)
        records = args.batches * RECORDS_PER_BATCH
        for codec in CODECS:
            kc_data = kc_records(data)
            kp_blobs = [kp_encode(b, codec) for b in data]
            kc_blobs = [kc_encode(b, codec) for b in kc_data]
            assert kc_decode(kp_blobs) == kp_decode(kc_blobs) == records  # each reads the other's
            raw = sum(len(b) for b in (kc_encode(x, "none") for x in kc_data))
            for op, ours, peer, arg_ours, arg_peer in (
                    ("decode", kc_decode, kp_decode, kp_blobs, kp_blobs),
                    ("encode", lambda d: [kc_encode(b, codec) for b in d],
                     lambda d: [kp_encode(b, codec) for b in d], kc_data, data)):
                t_ours, t_peer, ratio = paired(ours, peer, arg_ours, arg_peer, args.runs)
                row = {"op": op, "value_bytes": value_size, "codec": codec, "records": records,
                       "kafkacodec_rps": records / t_ours, "kafka_python_rps": records / t_peer,
                       "kafkacodec_MBps": raw / t_ours / 1e6, "ratio": ratio}
                if op == "decode" and codec == "none":  # the hand-written reference reads only these
                    _, t_ref, ref_ratio = paired(ours, ref_decode, arg_ours, arg_ours, args.runs)
                    row["reference_rps"] = records / t_ref
                    row["ratio_to_reference"] = ref_ratio
                rows.append(row)
    print("| op | value | codec | kafkacodec rec/s | MB/s | kafka-python rec/s | vs kafka-python "
          "| vs hand-written reference |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ref = f"{r['ratio_to_reference']:.2f}x" if "ratio_to_reference" in r else ""
        print(f"| {r['op']} | {r['value_bytes']} | {r['codec']} | {r['kafkacodec_rps']:,.0f} | "
              f"{r['kafkacodec_MBps']:.1f} | {r['kafka_python_rps']:,.0f} | {r['ratio']:.2f}x | {ref} |")
    scans = directory.table()
    print(f"\nWhole partition directory ({RECORDS_PER_BATCH * 2000:,} records of 100 bytes):\n")
    print("| workload | MB/s | records/s |")
    print("|---|---|---|")
    for r in scans:
        print(f"| {r['workload']} | {r['MBps']:.0f} | {r['records_per_s']:,.0f} |")
    sparked = None if args.no_spark else spark_bench.table()
    if sparked:
        print(f"\nSpark, local[2] ({sparked[0]['records']:,} records, lz4, headers; best of 2):\n")
        print("| workload | kafka-log rows/s | Parquet rows/s (same rows) | kafka-log time / Parquet time |")
        print("|---|---|---|---|")
        for r in sparked:
            print(f"| {r['workload']} | {r['kafka_log_rps']:,.0f} | {r['parquet_rps']:,.0f} | {r['slowdown']:.2f}x |")
    counted = None if args.no_instructions else instructions.table()
    if counted:
        print("\nCPU instructions per record (valgrind callgrind; 100-byte values, uncompressed v2):\n")
        print("| workload | instructions/record | vs kafka-python |")
        print("|---|---|---|")
        for r in counted:
            print(f"| {r['workload']} | {r['instructions_per_record']:,} | {r['vs_kafka_python']:.2f}x |")
    out = Path(__file__).resolve().parent / "results" / "v2_codecs.json"
    out.write_text(json.dumps({"python": sys.version.split()[0], "machine": platform.machine(),
                               "runs": args.runs, "rows": rows, "directory": scans, "spark": sparked,
                               "instructions": counted},
                              indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
