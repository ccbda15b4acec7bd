"""make bench: kafkacodec beside its peers, measured in the same process on the same bytes.

Codec rows: decode (offset, timestamp, key, value and headers of every record materialised) and
encode (whole batches from tuples) for magic 0, 1 and 2, 100-byte and 1 KiB values, every codec,
beside kafka-python's record code and aiokafka's C extension; the hand-written reference reader
and the official Kaitai compiler's parser on uncompressed v2. Then v2 batches of 1, 10 and 100
records, the columnar path, lazy access and memory on a 1 GiB segment, a whole partition
directory, Spark, and CPU instruction counts.
Timings are paired run by run (a slow phase of the machine hits both sides); ratios are medians
of the per-run ratios. Prints tables and writes everything as JSON under bench/results/.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from kafkacodec import Record, read_batches, write_batch
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime import compiled

sys.path.insert(0, str(Path(__file__).resolve().parent))
import batch_size  # noqa: E402
import columnar  # noqa: E402
import directory  # noqa: E402
import framing  # noqa: E402
import instructions  # noqa: E402
import lazy  # noqa: E402
import peers  # noqa: E402
import spark as spark_bench  # noqa: E402
import spark_cluster  # noqa: E402
import spark_values  # noqa: E402
import verify as verify_bench  # noqa: E402
from peers import CODECS, kp_decode, kp_encode  # noqa: E402,F401  (instructions.py uses them from here)
from reference_reader import read_records  # noqa: E402

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


def kc_records(data, magic: int = 2):
    """The corpus as kafkacodec Records, built before timing as the peers' tuples are."""
    return [[Record(key=k, value=v, timestamp=ts, offset=off, headers=h if magic == 2 else [])
             for off, ts, k, v, h in batch] for batch in data]


def kc_encode(batch, codec, magic: int = 2):
    return write_batch(batch, compression=codec, magic=magic, base_offset=batch[0].offset)


def kc_decode(blobs, magic: int = 2, verify: bool = True):
    n = 0
    if magic == 2:
        for blob in blobs:
            batch, _ = RecordBatch.read(blob, verify=verify)
            for r in batch.records.items:
                r.offset, r.timestamp, r.key, r.value, r.headers
                n += 1
        return n
    for blob in blobs:
        for batch in read_batches(blob, verify=verify):
            for r in batch:
                r.offset, r.timestamp, r.key, r.value, r.headers
                n += 1
    return n


PURE = "kafkacodec pure Python"
NO_CRC = "kafkacodec, CRCs not checked"


def pure_decode(blobs, magic: int = 2):
    """kc_decode with the generated Python readers (the record view's too)."""
    with compiled.pure():
        return kc_decode(blobs, magic)


def between(row, faster: str, than: str) -> str:
    """How many times faster peer `faster` is than peer `than`, from their ratios to us in the
    same runs: our pure Python against kafka-python, or ours without CRC checks against aiokafka
    (C), which checks none while iterating."""
    f, t = row["peers"].get(faster), row["peers"].get(than)
    return f"{t['ratio'] / f['ratio']:.2f}x" if f and t else ""


def ref_decode(blobs):
    return sum(len(read_records(blob)) for blob in blobs)


def paired(ours, peers_, runs):
    """Run ours and every peer in turn, `runs` times: our median time and, per peer, its median
    time and the median of the per-run ratios (peer time / our time)."""
    t_ours, t_peer = [], {name: [] for name in peers_}
    ratios = {name: [] for name in peers_}
    for _ in range(runs):
        t = time.perf_counter()
        ours()
        a = time.perf_counter() - t
        t_ours.append(a)
        for name, peer in peers_.items():
            t = time.perf_counter()
            peer()
            b = time.perf_counter() - t
            t_peer[name].append(b)
            ratios[name].append(b / a)
    return statistics.median(t_ours), {n: (statistics.median(t_peer[n]), statistics.median(ratios[n]))
                                       for n in peers_}


def codec_rows(batches: int, runs: int, official) -> list[dict]:
    rows = []
    for magic in (2, 1, 0):
        for value_size in (100, 1024):
            data = corpus(value_size, batches)
            if magic < 2:
                data = [[(o, t, k, v, []) for o, t, k, v, _ in b] for b in data]
            records = batches * RECORDS_PER_BATCH
            kc_data = kc_records(data, magic)
            for codec in CODECS if magic == 2 else [c for c in CODECS if c != "zstd"]:
                kp_blobs = [kp_encode(b, codec, magic) for b in data]
                kc_blobs = [kc_encode(b, codec, magic) for b in kc_data]
                assert kc_decode(kp_blobs, magic) == kp_decode(kc_blobs, magic) == records  # each reads the other's
                raw = sum(len(kc_encode(b, "none", magic)) for b in kc_data)
                decode_peers = {"kafka-python": lambda: kp_decode(kp_blobs, magic)}
                if not (magic == 0 and codec == "lz4"):  # aiokafka refuses LZ4 in magic 0
                    decode_peers["aiokafka (C)"] = lambda: peers.aio_decode(kp_blobs, magic)
                if compiled.compiled_types():  # our own pure-Python fallback, as a peer
                    decode_peers[PURE] = lambda: pure_decode(kp_blobs, magic)
                decode_peers[NO_CRC] = lambda: kc_decode(kp_blobs, magic, verify=False)
                if codec == "none" and magic == 2:
                    decode_peers["hand-written reference"] = lambda: ref_decode(kp_blobs)
                    if official is not None:
                        decode_peers["official Kaitai parser"] = lambda: peers.official_decode(official, kp_blobs)
                encode_peers = {"kafka-python": lambda: [kp_encode(b, codec, magic) for b in data]}
                if not (magic == 0 and codec == "lz4"):
                    encode_peers["aiokafka (C)"] = lambda: [peers.aio_encode(b, codec, magic) for b in data]
                for op, ours, peers_ in (
                        ("decode", lambda: kc_decode(kp_blobs, magic), decode_peers),
                        ("encode", lambda: [kc_encode(b, codec, magic) for b in kc_data], encode_peers)):
                    t_ours, measured = paired(ours, peers_, runs)
                    rows.append({"op": op, "magic": magic, "value_bytes": value_size, "codec": codec,
                                 "records": records, "kafkacodec_rps": records / t_ours,
                                 "kafkacodec_MBps": raw / t_ours / 1e6,
                                 "peers": {n: {"rps": records / t, "ratio": r} for n, (t, r) in measured.items()}})
    return rows


def ratio(row, peer):
    p = row["peers"].get(peer)
    return f"{p['ratio']:.2f}x" if p else ""


def spark_table(where: str, figures: list[dict] | None) -> None:
    if not figures:
        return
    print(f"\nSpark, {where} ({figures[0]['records']:,} records, lz4, headers, random values; best of 2):\n")
    print("| workload | Python source rows/s | JVM reader rows/s | Parquet rows/s (same rows) "
          "| Python source time / Parquet time | JVM reader time / Parquet time |")
    print("|---|---|---|---|---|---|")
    for r in figures:
        jvm_rps, jvm = r.get("jvm_rps"), r.get("jvm_slowdown")
        print(f"| {r['workload']} | {r['kafka_log_rps']:,.0f} | {f'{jvm_rps:,.0f}' if jvm_rps else '-'} "
              f"| {r['parquet_rps']:,.0f} | {r['slowdown']:.2f}x | {f'{jvm:.2f}x' if jvm else '-'} |")
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, default=60, help="batches of 100 records per codec row")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-instructions", action="store_true", help="skip the valgrind instruction counts")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark source beside Parquet")
    ap.add_argument("--no-cluster", action="store_true", help="skip the Spark figures on a standalone cluster")
    ap.add_argument("--no-lazy", action="store_true", help="skip the 1 GiB segment")
    args = ap.parse_args()
    official = peers.official_parser()
    rows = codec_rows(args.batches, args.runs, official)
    print("Codecs: records/s of kafkacodec, and how many times faster than each peer (peer time / our time)\n")
    print("| op | magic | value | codec | kafkacodec rec/s | MB/s | vs kafka-python | vs aiokafka (C) "
          "| vs aiokafka (C), neither checking CRCs | vs our pure Python | our pure Python vs kafka-python "
          "| vs hand-written reference | vs official Kaitai parser |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['op']} | {r['magic']} | {r['value_bytes']} | {r['codec']} | {r['kafkacodec_rps']:,.0f} | "
              f"{r['kafkacodec_MBps']:.1f} | {ratio(r, 'kafka-python')} | {ratio(r, 'aiokafka (C)')} | "
              f"{between(r, NO_CRC, 'aiokafka (C)')} | {ratio(r, PURE)} | {between(r, PURE, 'kafka-python')} | "
              f"{ratio(r, 'hand-written reference')} | {ratio(r, 'official Kaitai parser')} |")
    framed = framing.table(corpus, kc_decode, paired, args.runs)
    print("\nDecode of v2 batches as each producer frames them (100-byte values, 100 records a batch), "
          "beside aiokafka (C) on the same bytes:\n")
    print("| codec | producer | batches | kafkacodec rec/s | aiokafka (C) rec/s | vs aiokafka (C) |")
    print("|---|---|---|---|---|---|")
    for r in framed:
        print(f"| {r['codec']} | {r['producer']} | {r['batches']} | {r['kafkacodec_rps']:,.0f} | "
              f"{r['aiokafka_rps']:,.0f} | {r['ratio']:.2f}x |")
    sized = batch_size.table(corpus, kc_decode, paired, args.runs)
    print("\nDecode of uncompressed v2 batches by the number of records in a batch (100-byte values), beside "
          "aiokafka (C) on the same bytes:\n")
    print("| records a batch | batches | kafkacodec µs a batch | aiokafka (C) µs a batch | kafkacodec rec/s "
          "| vs aiokafka (C) |")
    print("|---|---|---|---|---|---|")
    for r in sized:
        print(f"| {r['records_per_batch']} | {r['batches']:,} | {r['kafkacodec_us_per_batch']:.2f} | "
              f"{r['aiokafka_us_per_batch']:.2f} | {r['kafkacodec_rps']:,.0f} | {r['ratio']:.2f}x |")
    cols = columnar.table(corpus, args.runs)
    print("\nColumnar: a segment of 2,000 v2 batches into Arrow arrays (offset, timestamp, key, value, headers),"
          " beside aiokafka (C) materialising every record of the same batches (it checks no CRC):\n")
    print("| value | codec | aiokafka (C) rec/s | columnar rec/s, CRCs checked | vs aiokafka, median (min-max) "
          "| columnar rec/s, no CRC check | vs aiokafka |")
    print("|---|---|---|---|---|---|---|")
    for r in cols:
        print(f"| {r['value_bytes']} | {r['codec']} | {r['aiokafka_rps']:,.0f} | {r['columnar_rps']:,.0f} | "
              f"{r['ratio']:.2f}x ({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | {r['columnar_no_crc_rps']:,.0f} | "
              f"{r['ratio_no_crc']:.2f}x |")
    lazy_figures = None if args.no_lazy else lazy.table()
    if lazy_figures:
        print(f"\nLazy access on a {lazy_figures['file_bytes'] / 2 ** 30:.1f} GiB segment "
              f"(batches of {lazy_figures['largest_batch']:,} bytes):\n")
        print("| workload | GB/s |")
        print("|---|---|")
        for r in lazy_figures["scans"]:
            print(f"| {r['workload']} | {r['GBps']:.2f} |")
        lk = lazy_figures["lookup"]
        print(f"\nLookup by offset: {lk['entries_read_per_lookup']:.1f} of {lk['index_entries']:,} index entries "
              f"read, {lk['microseconds_per_lookup']:.0f} µs per lookup (one batch decoded).\n")
        print("| streaming scan | peak resident memory above the process's own | largest batch |")
        print("|---|---|---|")
        for way, peak in lazy_figures["peak_rss_bytes"].items():
            print(f"| {way} | {peak / 2 ** 20:.1f} MiB | {lazy_figures['largest_batch'] / 2 ** 20:.2f} MiB |")
    verified = None if args.no_lazy else verify_bench.table()
    if verified:
        print(f"\nverify on a {verified[0]['file_bytes'] / 2 ** 30:.1f} GiB segment of 100-byte records "
              "(peak resident memory above the process's own):\n")
        print("| codec | mode | MB/s | records/s | peak RSS |")
        print("|---|---|---|---|---|")
        for r in verified:
            print(f"| {r['codec']} | {r['mode']} | {r['MBps']:,.0f} | {r['records_per_s']:,.0f} | "
                  f"{r['peak_rss_bytes'] / 2 ** 20:.1f} MiB |")
    scans = directory.table()
    print(f"\nWhole partition directory ({RECORDS_PER_BATCH * 2000:,} records of 100 bytes):\n")
    print("| workload | MB/s | records/s |")
    print("|---|---|---|")
    for r in scans:
        print(f"| {r['workload']} | {r['MBps']:.0f} | {r['records_per_s']:,.0f} |")
    sparked = clustered = None
    if not args.no_spark:
        sparked = spark_bench.table()
        spark_table("local[2]", sparked)
    values = None
    if not args.no_spark:
        values = spark_values.table()
        print(f"\nSpark, local[2], typed values ({values[0]['records']:,} Avro records of two schema versions; "
              "best of 2):\n")
        print("| workload | bytes rows/s | typed rows/s | typed time / bytes time |")
        print("|---|---|---|---|")
        for r in values:
            print(f"| {r['workload']} | {r['binary_rps']:,.0f} | {r['typed_rps']:,.0f} | {r['slowdown']:.2f}x |")
    if not args.no_spark and not args.no_cluster:
        clustered = spark_cluster.table()
        spark_table("a standalone cluster of two 1-core workers set up as the README's recipe sets one up", clustered)
    counted = None if args.no_instructions else instructions.table()
    if counted:
        print("\nCPU instructions per record (valgrind callgrind; 100-byte values, uncompressed v2):\n")
        print("| workload | instructions/record | vs kafka-python |")
        print("|---|---|---|")
        for r in counted:
            print(f"| {r['workload']} | {r['instructions_per_record']:,} | {r['vs_kafka_python']:.2f}x |")
    out = Path(__file__).resolve().parent / "results" / "v2_codecs.json"
    out.write_text(json.dumps({"python": sys.version.split()[0], "machine": platform.machine(),
                               "runs": args.runs, "rows": rows, "framing": framed, "batch_sizes": sized,
                               "columnar": cols,
                               "lazy": lazy_figures, "directory": scans, "verify": verified, "spark": sparked,
                               "spark_values": values,
                               "spark_cluster": clustered,
                               "instructions": counted},
                              indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
