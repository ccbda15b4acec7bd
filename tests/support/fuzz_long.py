"""The long fuzz run, outside pytest: every reader fed mutations of real bytes, and the command on
mutated copies of the sample log dir.

    python tests/support/fuzz_long.py --inputs 2000000 --cli 1000 --out fuzz-out    # the acceptance run
    python tests/support/fuzz_long.py --inputs 50000 --readers read_batches,read_columns
    python tests/support/fuzz_long.py --inputs 0 --cli 100                           # the command only
    python tests/support/fuzz_long.py --replay fuzz-out/read_batches-123.bin --reader read_batches

A reader's input is a seed (bytes written by the project or by Kafka's clients) changed by a few
random edits; most then have their checksums recomputed, so that the damage reaches past them,
and segments are also damaged inside their (re)compressed records. Input i of a reader is the
same on every run with the same --seed. Each reader runs in its own process: an input that takes
more than --timeout CPU seconds is a hang (as is one blocked for minutes; the process is killed
and restarted after it), one growing the process past --memory-limit MiB is a failure too. Any
exception that is not a KafkaCodecError is a failure; the first inputs of each kind of failure
are saved with their tracebacks under --out. The command runs on mutated log dirs in
subprocesses; a traceback on stderr, an exit status other than 0, 1 or 2, a signal, a timeout or
a dry run that changes the log dir is a failure, and the log dir is kept. The summary gives, per
reader, the inputs, the typed errors, the failures, the slowest input (CPU seconds) and the peak
RSS; the exit status is 1 when anything failed. Limits are CPU time, not wall time, so that a
machine busy with other work does not make hangs of slow inputs.
"""
from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
sys.path.insert(0, str(ROOT))  # run as a script: the repository root, for tests.support

READERS = ["classes", "read_batches", "read_columns", "scan", "offset_index", "time_index", "txn_index",
           "snapshot", "checkpoint", "partition_metadata", "meta_properties", "topic_decoders"]
KINDS = ("flip", "set", "cut", "insert", "splice", "varint", "zero", "duplicate")
SHM_SIZE = 64 << 20
# what a worker is doing, for the parent to see even if it has to kill it: the input's index, its
# length, when it started (wall and CPU seconds), the counts so far (decoded, typed errors, the
# slowest input's CPU seconds and index), the seed's label; then the input's bytes
HEADER = struct.Struct("<qqddqqdq200s")
TICK = os.sysconf("SC_CLK_TCK")
EXAMPLES = 3  # inputs saved per kind of failure (exception and the line that raised it)


# -- mutations ------------------------------------------------------------------------------------
def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four random edits: bit flips, bytes set, cuts, insertions, int32 splices of boundary
    values, runs of varint continuation bytes, zeroed ranges, duplicated ranges."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not b:
            b += bytes(rng.randrange(1, 16))
        i = rng.randrange(len(b))
        kind = rng.choice(KINDS)
        if kind == "flip":
            b[i] ^= 1 << rng.randrange(8)
        elif kind == "set":
            b[i] = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif kind == "cut":
            del b[i:(len(b) if rng.random() < 0.5 else i + rng.randint(1, 64))]
        elif kind == "insert":
            b[i:i] = rng.randbytes(rng.randint(1, 16))
        elif kind == "splice":
            value = rng.choice((-1, 0, 1, 2 ** 31 - 1, -2 ** 31, 2 ** 24, 61, 48, rng.randrange(-2 ** 31, 2 ** 31)))
            b[i:i + 4] = struct.pack(">i", value)
        elif kind == "varint":
            b[i:i + 1] = b"\xff" * rng.randint(1, 11) + bytes([rng.randrange(128)])
        elif kind == "zero":
            b[i:i + rng.randint(1, 64)] = bytes(min(64, len(b) - i))
        else:
            n = rng.randint(1, 64)
            b[i:i] = b[i:i + n]
    return bytes(b)


def mutate_inside(segment: bytes, rng: random.Random) -> bytes:
    """Edit the records of one batch of an intact segment below its compression, then compress
    again and fix sizes and CRCs: damage a reader meets only after decompressing."""
    from tests.support import damage
    spans = damage.batch_spans(segment)
    start, end = rng.choice(spans)
    batch = segment[start:end]
    try:
        if batch[16] >= 2:
            section = damage.records_section(batch)
            count = None if rng.random() < 0.8 else struct.unpack_from(">i", batch, 57)[0] + rng.choice((-1, 1))
            new = damage.rebuild_v2(batch, records=mutate(section, rng), count=count)
        else:
            value = damage.legacy_value(batch)
            codec = batch[damage.LOG_OVERHEAD + 5] & 0x07
            if value is None or not codec:
                return mutate(segment, rng)
            inner = damage.decompress(codec, value, batch[16])
            new = damage.rebuild_legacy(batch, damage.compress(codec, mutate(inner, rng), batch[16]))
    except Exception:  # noqa: BLE001 - a seed whose codec cannot re-encode this: plain edits instead
        return mutate(segment, rng)
    return segment[:start] + new + segment[end:]


# -- the readers ----------------------------------------------------------------------------------
class Reader:
    def __init__(self, name, seeds, run, fix=None, inside=False, warm=False):
        self.name = name
        self.seeds = seeds  # [(label, bytes)]
        self.run = run  # bytes -> None; raises on bad input
        self.fix = fix  # bytes -> bytes: checksums recomputed after the edits, if it has any
        self.inside = inside  # segments: also damaged below their compression
        self.warm = warm  # read the seeds once before timing: imports and caches warm up

    def input(self, i: int, seed: int) -> tuple[str, bytes]:
        rng = random.Random(f"{seed}:{self.name}:{i}")
        label, data = self.seeds[rng.randrange(len(self.seeds))]
        roll = rng.random()
        if self.inside and roll < 0.3:
            return f"{label}/inside", mutate_inside(data, rng)
        data = mutate(data, rng)
        if self.fix is not None and roll < 0.75:
            return f"{label}/crc", self.fix(data)
        return f"{label}/plain", data


def sample_dir() -> Path:
    """The sample log dir, written once per run by `kafkacodec sample` into a temporary directory."""
    global _SAMPLE
    if _SAMPLE is None:
        _SAMPLE = Path(tempfile.mkdtemp(prefix="fuzz-sample-")) / "logs"
        subprocess.run([str(kafkacodec_command()), "sample", str(_SAMPLE)], check=True, capture_output=True)
    return _SAMPLE


_SAMPLE = None


def kafkacodec_command() -> Path:
    return Path(sys.executable).with_name("kafkacodec")


def sample_files(suffix: str) -> list[tuple[str, bytes]]:
    return [(f"{p.parent.name}/{p.name}", p.read_bytes()) for p in sorted(sample_dir().rglob(f"*{suffix}"))
            if p.stat().st_size]


def segments(v2_only: bool = False) -> list[tuple[str, bytes]]:
    from kafkacodec import write_batch, write_batches
    recs = [{"key": b"key-%d" % i, "value": b"value " * (i % 7), "timestamp": 1_700_000_000_000 + i,
             "headers": [("trace", b"t%d" % i)] if i % 3 == 0 else []} for i in range(12)]
    out = []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        out.append((f"v2_{codec}", write_batches([recs[:5], recs[5:], recs[:1]], compression=codec)))
        out.append((f"v2_{codec}_txn", write_batch(recs[:3], compression=codec, producer_id=7, producer_epoch=1,
                                                    base_sequence=0, is_transactional=True, base_offset=40)))
    out += [(name, data) for name, data in sample_files(".log") if not v2_only or data[16] == 2]
    out += [(p.name, p.read_bytes()) for p in sorted((TESTS / "fixtures" / "librdkafka").glob("v2_*.bin"))]
    if not v2_only:
        plain = [dict(r, headers=[]) for r in recs]
        for magic in (0, 1):
            for codec in ("none", "gzip", "snappy", "lz4"):
                out.append((f"v{magic}_{codec}", write_batches([plain[:4], plain[4:6]], magic=magic,
                                                               compression=codec)))
        out.append(("fixtures/sample.log", (TESTS / "fixtures" / "sample.log").read_bytes()))
    return out


def temp_file_path(pid: int) -> Path:
    memory = Path("/dev/shm")  # no disk under the file readers' inputs, where there is a tmpfs
    return (memory if memory.is_dir() else Path(tempfile.gettempdir())) / f"fuzz-{pid}.txt"


def temp_file(data: bytes) -> Path:
    """A file holding `data`, for the readers that read files (the worker's one file, rewritten)."""
    path = temp_file_path(os.getpid())
    path.write_bytes(data)
    return path


def build_readers() -> dict[str, Reader]:
    from tests.support import damage
    from kafkacodec import read_batches
    from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
    from kafkacodec.generated.producer_snapshot import ProducerSnapshot
    from kafkacodec.generated.record_batch import RecordBatch
    from kafkacodec.storage.segments import columnar, scan
    from kafkacodec.storage.dump_log import decoders
    from kafkacodec.storage.indexes import index, index_search, txnindex
    from kafkacodec.storage.state import producers
    from kafkacodec.storage.layout import textfiles
    from tests.codecs.test_fuzz import SEEDS

    classes = {}
    for label, cls, data in SEEDS:
        if cls is not None:
            classes.setdefault(cls, []).append((label, data))
    class_seeds = [(f"{cls.__qualname__}:{label}", data) for cls, seeds in classes.items() for label, data in seeds]
    by_label = {f"{cls.__qualname__}:{label}": cls for cls, seeds in classes.items() for label, _ in seeds}

    def run_class(data: bytes, label: str) -> None:
        cls = by_label[label]
        obj = cls.from_bytes(data) if len(data) % 2 else cls.read(memoryview(bytearray(data)))[0]
        obj.to_dict()
        repr(obj)
        encoded = obj.to_bytes()
        assert obj.size() == len(encoded), "size() disagrees with to_bytes()"
        assert cls.from_bytes(encoded, verify=False) == obj, "what decodes does not re-encode to an equal object"

    def fix_class(data: bytes, label: str) -> bytes:
        cls = by_label[label]
        if cls is RecordBatch or cls is LegacyLogEntry:
            return damage.with_valid_crc(data) if len(data) > 20 else data
        if cls is ProducerSnapshot:
            return damage.snapshot_with_valid_crc(data)
        return data

    def run_batches(data: bytes) -> None:
        verify = len(data) % 2 == 0  # half the inputs read past bad CRCs too, as dump does
        for batch in read_batches(data, verify=verify):
            e = batch.entry
            for r in batch:
                (r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            e.to_dict()
            assert e.size() == len(e.to_bytes()), "size() disagrees with to_bytes()"

    def run_columns(data: bytes) -> None:
        cols = columnar.read_columns(data, scan.batch_positions(data))
        cols.arrow_bytes("key"), cols.arrow_bytes("value"), cols.arrow_headers()
        cols.arrow_headers().validate(full=True)  # header keys must be valid UTF-8 for Arrow

    def run_scan(data: bytes) -> None:
        result = scan.scan_bytes(data)
        for b in scan.iter_batches(data, verify=False):
            if isinstance(b, Exception):
                break
        result.truncated_bytes

    def run_offset_index(data: bytes) -> None:
        entries = index.read_offset_index(data, 1000)
        for target in (0, 1000, 1005, 2 ** 40):
            if entries:
                index.lookup_offset(entries, 1000, target)
            if len(data) >= 8:
                index_search.lookup_offset(data, 1000, target)

    def run_time_index(data: bytes) -> None:
        entries = index.read_time_index(data, 1000)
        for target in (0, 1_700_000_000_000, 2 ** 62):
            if entries:
                index.lookup_time(entries, 1000, target)
            if len(data) >= 12:
                index_search.lookup_time(data, 1000, target)

    def run_txn_index(data: bytes) -> None:
        txnindex.check_txn_index(txnindex.read_txn_index(data), 0)

    def run_snapshot(data: bytes) -> None:
        producers.ProducerState.from_snapshot(data, 0).to_snapshot()

    def text_reader(read):
        return lambda data: read(temp_file(data))

    def run_topic_decoders(data: bytes) -> None:
        (n,) = struct.unpack_from(">H", data) if len(data) >= 2 else (0,)

        class R:
            key, value, offset = data[2:2 + n] or None, data[2 + n:] or None, 7
        for decode in (decoders.offsets, decoders.transaction_log):
            decode(R)
        decoders.decoded_json(R, "offsets")
        decoders.decoded_json(R, "transactions")

    def key_value_seeds():
        out = []
        for name in ("__consumer_offsets-0", "__transaction_state-0"):
            for path in sorted((sample_dir() / name).glob("*.log")):
                for batch in read_batches(path.read_bytes()):
                    for r in batch:
                        if r.key is not None:
                            out.append((name, struct.pack(">H", len(r.key)) + r.key + (r.value or b"")))
        return out

    texts = {n: sample_files(n) for n in ("offset-checkpoint", "leader-epoch-checkpoint", "partition.metadata",
                                           "meta.properties")}
    index_seeds = sample_files(".index") + [("built", index.encode_offset_index(
        [index.OffsetEntry(1000 + 10 * i, 4096 * i) for i in range(1, 9)], 1000))]
    time_seeds = sample_files(".timeindex") + [("built", index.encode_time_index(
        [index.TimeEntry(1_700_000_000_000 + i, 1000 + 10 * i) for i in range(1, 9)], 1000))]
    txn_seeds = sample_files(".txnindex") + [("built", txnindex.encode_txn_index(
        [txnindex.AbortedTxn(7, 10 * i, 10 * i + 5, 10 * i) for i in range(4)]))]
    snapshot_seeds = sample_files(".snapshot")
    readers = [
        LabelledReader("classes", class_seeds, run_class, fix_class),
        Reader("read_batches", segments(), run_batches, damage.with_valid_crcs, inside=True),
        Reader("read_columns", segments(v2_only=True), run_columns, damage.with_valid_crcs, inside=True),
        Reader("scan", segments(), run_scan, damage.with_valid_crcs),
        Reader("offset_index", index_seeds, run_offset_index),
        Reader("time_index", time_seeds, run_time_index),
        Reader("txn_index", txn_seeds, run_txn_index),
        Reader("snapshot", snapshot_seeds, run_snapshot, damage.snapshot_with_valid_crc),
        Reader("checkpoint", texts["offset-checkpoint"] + texts["leader-epoch-checkpoint"],
               lambda d: (textfiles.read_offset_checkpoint(temp_file(d)),
                          textfiles.read_leader_epoch_checkpoint(temp_file(d)))),
        Reader("partition_metadata", texts["partition.metadata"], text_reader(textfiles.read_partition_metadata)),
        Reader("meta_properties", texts["meta.properties"], text_reader(textfiles.read_properties)),
        Reader("topic_decoders", key_value_seeds(), run_topic_decoders),
    ]
    assert [r.name for r in readers] == READERS
    for r in readers:
        r.warm = True
    return {r.name: r for r in readers}


class LabelledReader(Reader):
    """A reader whose run and fix take the seed's label too (which class reads it)."""

    def input(self, i: int, seed: int) -> tuple[str, bytes]:
        rng = random.Random(f"{seed}:{self.name}:{i}")
        label, data = self.seeds[rng.randrange(len(self.seeds))]
        data = mutate(data, rng)
        if rng.random() < 0.6:
            return label, self.fix(data, label)
        return label, data

    def call(self, label: str, data: bytes) -> None:
        self.run(data, label)


def call(reader: Reader, label: str, data: bytes) -> None:
    if isinstance(reader, LabelledReader):
        reader.call(label.split("/")[0], data)
    else:
        reader.run(data)


# -- one reader's run, in its own process ---------------------------------------------------------
class Hang(BaseException):
    """Raised by the alarm inside an input that runs too long (a BaseException: no reader catches it)."""


def _alarm(signum, frame):
    raise Hang()


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used: what limits are measured in, so that a machine busy with other
    work does not turn slow inputs into hangs."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


class Waited:
    """Seconds spent waiting on the same thing, polled; a gap between polls counts one second at
    most, so that a pause of the whole machine (a suspended VM) is not taken for a process's."""

    def __init__(self):
        self.what, self.seconds, self.last = None, 0.0, time.monotonic()

    def on(self, what) -> float:
        now = time.monotonic()
        self.seconds = self.seconds + min(now - self.last, 1.0) if what == self.what else 0.0
        self.what, self.last = what, now
        return self.seconds


def work(reader_name: str, first: int, total: int, seed: int, timeout: float, shm, out: Path, report: Path):
    """Run inputs first..total-1 of one reader; stats go to the file `report` as JSON."""
    import faulthandler
    from kafkacodec.runtime.errors import KafkaCodecError
    stacks = open(report.with_suffix(".stacks"), "w")  # where the worker is, when the parent asks (SIGUSR1)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    reader = build_readers()[reader_name]
    for label, data in reader.seeds if reader.warm else ():  # real bytes, once, before the timing
        try:
            call(reader, label, data)
        except KafkaCodecError:
            pass
    signal.signal(signal.SIGPROF, _alarm)
    stats = {"inputs": 0, "typed": 0, "ok": 0, "failures": [], "kinds": {}, "slowest": [0.0, None],
             "stopped_at": first}
    seen = stats["kinds"]  # failures of each kind; the first few are kept with their inputs
    flushed = 0.0
    for i in range(first, total):
        label, data = reader.input(i, seed)
        shm[HEADER.size:HEADER.size + min(len(data), SHM_SIZE - HEADER.size)] = data[:SHM_SIZE - HEADER.size]
        started = time.process_time()
        HEADER.pack_into(shm, 0, i, len(data), time.time(), started, stats["ok"], stats["typed"],
                         stats["slowest"][0], stats["slowest"][1] or 0, label.encode()[:200])
        signal.setitimer(signal.ITIMER_PROF, timeout)  # CPU time of this process
        try:
            call(reader, label, data)
            stats["ok"] += 1
        except KafkaCodecError:
            stats["typed"] += 1
        except Hang:
            seen["hang"] = seen.get("hang", 0) + 1
            stats["failures"].append(save(out, reader_name, i, label, data, "hang", f"over {timeout} CPU seconds"))
            flushed = flush(report, stats, 0)
        except BaseException as e:  # noqa: BLE001 - what the run is looking for
            if isinstance(e, KeyboardInterrupt):
                raise
            frames = [(f.f_code.co_filename, n) for f, n in traceback.walk_tb(e.__traceback__)]  # no source read
            ours = [f for f in frames if str(ROOT) in f[0] and "/.venv/" not in f[0]] or frames
            kind = f"{type(e).__name__} at {Path(ours[-1][0]).name}:{ours[-1][1]}"
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] <= EXAMPLES:
                stats["failures"].append(save(out, reader_name, i, label, data, kind, traceback.format_exc()))
                flushed = 0
            flushed = flush(report, stats, flushed)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        spent = time.process_time() - started
        if spent > stats["slowest"][0]:
            stats["slowest"] = [spent, i]
        stats["inputs"] += 1
    stats["stopped_at"] = total
    report.write_text(json.dumps(stats))  # complete: the parent takes everything from here


def flush(report: Path, stats: dict, last: float) -> float:
    """Write the failures found so far (at most once a second), for the parent to count them should
    it have to kill the worker later."""
    now = time.monotonic()
    if now - last < 1.0:
        return last
    report.write_text(json.dumps(stats))
    return now


def save(out: Path, reader: str, i: int, label: str, data: bytes, kind: str, detail: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{reader}-{i}.bin"
    path.write_bytes(data)
    replay = f"python tests/support/fuzz_long.py --replay {path} --reader {reader}" + (
        f" --label {label}" if reader == "classes" else "")
    (out / f"{reader}-{i}.txt").write_text(f"{kind} on input {i} ({label})\n{replay}\n\n{detail}")
    print(f"FAILURE {reader} #{i} ({label}): {kind}; reproduce: {replay}", flush=True)
    return {"input": i, "label": label, "kind": kind, "file": str(path)}


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_reader(name: str, args) -> dict:
    """Fork a worker for the reader; restart it after an input that hangs or takes too much memory."""
    shm = mmap.mmap(-1, SHM_SIZE)
    totals = {"inputs": 0, "typed": 0, "ok": 0, "failures": [], "kinds": {}, "slowest": [0.0, None],
              "peak_rss_mib": 0.0}
    first, started = 0, time.time()
    watchdog = args.timeout + 10  # CPU seconds: the alarm missed it (a loop inside C code)
    blocked = max(600, 20 * args.timeout)  # wall seconds without using the CPU either: waiting on something
    report_file = Path(tempfile.gettempdir()) / f"fuzz-report-{os.getpid()}-{name}.json"
    while first < args.inputs:
        report_file.unlink(missing_ok=True)
        HEADER.pack_into(shm, 0, first, 0, time.time(), 0.0, 0, 0, 0.0, 0, b"(starting)")
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                work(name, first, args.inputs, args.seed, args.timeout, shm, Path(args.out), report_file)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 3
            os._exit(code)
        killed, waited = None, Waited()
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            i, length, since, cpu_since, *_ = HEADER.unpack_from(shm, 0)
            if cpu_since and cpu_seconds(pid) - cpu_since > watchdog:  # where the alarm cannot reach
                killed = ("hang", f"{watchdog:.0f} CPU seconds on one input")
            elif waited.on(i) > blocked:
                killed = ("hang", f"blocked for {blocked:.0f} s on one input")
            elif rss_kib(pid) > args.memory_limit * 1024:
                killed = ("memory", f"resident memory over {args.memory_limit} MiB")
            if killed:
                os.kill(pid, signal.SIGUSR1)  # its stacks, for the failure's report
                time.sleep(1)
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                stacks = report_file.with_suffix(".stacks")
                if stacks.exists() and stacks.stat().st_size:
                    killed = (killed[0], f"{killed[1]}\n\n{stacks.read_text()}")
                break
            time.sleep(0.2)
        temp_file_path(pid).unlink(missing_ok=True)
        totals["peak_rss_mib"] = max(totals["peak_rss_mib"], usage.ru_maxrss / 1024)
        i, length, since, cpu_since, ok, typed, slowest, slowest_i, label = HEADER.unpack_from(shm, 0)
        stats = json.loads(report_file.read_text()) if report_file.exists() else None
        report_file.unlink(missing_ok=True)
        if stats is not None:
            totals["failures"] += stats["failures"]
            for kind, n in stats["kinds"].items():
                totals["kinds"][kind] = totals["kinds"].get(kind, 0) + n
        if stats is not None and stats["stopped_at"] == args.inputs:  # it ran to the end
            for key in ("inputs", "typed", "ok"):
                totals[key] += stats[key]
            if stats["slowest"][0] > totals["slowest"][0]:
                totals["slowest"] = stats["slowest"]
            break
        # the worker died or was killed on input i: the counts before it are in the header
        totals["inputs"] += i - first + 1
        totals["ok"] += ok
        totals["typed"] += typed
        if slowest > totals["slowest"][0]:
            totals["slowest"] = [slowest, slowest_i]
        data = bytes(shm[HEADER.size:HEADER.size + min(length, SHM_SIZE - HEADER.size)])
        kind, detail = killed or ("crash", f"worker exited with status {status}")
        totals["failures"].append(save(Path(args.out), name, i, label.rstrip(b"\0").decode(), data, kind, detail))
        totals["kinds"][kind] = totals["kinds"].get(kind, 0) + 1
        if kind == "hang":
            totals["slowest"] = [max(watchdog, totals["slowest"][0]), i]
        first = i + 1  # a new worker goes on after it
    report_file.with_suffix(".stacks").unlink(missing_ok=True)
    totals["seconds"] = time.time() - started
    return totals


# -- the command on mutated log dirs --------------------------------------------------------------
def tree_digest(root: Path) -> dict:
    import hashlib
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def cli_commands(root: Path) -> list[tuple[list[str], bool]]:
    """(arguments, whether the command must leave the log dir as it was)."""
    files = lambda *suffixes: sorted(str(p) for p in root.rglob("*") if p.suffix in suffixes and p.is_file())  # noqa
    logs = files(".log")
    offsets = [str(p) for p in sorted((root / "__consumer_offsets-0").glob("*.log"))]
    txn_state = [str(p) for p in sorted((root / "__transaction_state-0").glob("*.log"))]
    out = [
        (["dump", "--print-data-log", *files(".log", ".index", ".timeindex", ".txnindex", ".snapshot")], True),
        (["dump", "--json", "--skip-corrupt", *logs], True),
        (["dump", "--index-sanity-check", *files(".index", ".timeindex")], True),
        (["dump", "--verify-index-only", *files(".index")], True),
        (["verify", str(root)], True),
        (["verify", "--skip-corrupt", str(root)], True),
        (["recover", "--dry-run", str(root)], True),
        (["clean", str(root), "--policy", "compact,delete", "--now", "1800000000000"], True),
        (["clean", str(root), "--policy", "compact", "--dry-run"], True),
    ]
    if offsets:
        out.append((["dump", "--offsets-decoder", *offsets], True))
    if txn_state:
        out.append((["dump", "--transaction-log-decoder", *txn_state], True))
    return [(args, keeps) for args, keeps in out if len(args) > 1 and not args[-1].startswith("--")]


def run_watched(args: list[str], timeout: float, memory_limit_mib: int, workdir: Path):
    """Run the command; (exit status or -signal, stderr text, peak RSS in MiB, problem or None, CPU
    seconds)."""
    err_path = workdir / "stderr.txt"
    with open(os.devnull, "wb") as devnull, open(err_path, "wb") as err:
        proc = subprocess.Popen([str(kafkacodec_command()), *args], stdout=devnull, stderr=err,
                                stdin=subprocess.DEVNULL)
        problem, waited = None, Waited()
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if cpu_seconds(proc.pid) > timeout:
                problem = f"timeout: over {timeout} CPU seconds"
            elif waited.on(None) > max(600, 10 * timeout):
                problem = f"timeout: blocked for {max(600, 10 * timeout)} s"
            elif rss_kib(proc.pid) > memory_limit_mib * 1024:
                problem = f"resident memory over {memory_limit_mib} MiB"
            if problem:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = 0  # reaped here: keep Popen from waiting again
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    cpu = usage.ru_utime + usage.ru_stime
    return code, err_path.read_text(errors="replace"), usage.ru_maxrss / 1024, problem, cpu


def mutate_log_dir(root: Path, rng: random.Random) -> list[str]:
    """Edit one to three files of the log dir (segments often with their CRCs recomputed)."""
    from tests.support import damage
    files = sorted(p for p in root.rglob("*") if p.is_file())
    logs = [p for p in files if p.suffix == ".log"]
    changed = []
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(logs) if rng.random() < 0.5 else rng.choice(files)
        data = path.read_bytes()
        if path.suffix == ".log" and data and rng.random() < 0.4:
            new = mutate_inside(data, rng)
        else:
            new = mutate(data, rng)
            if path.suffix == ".log" and rng.random() < 0.6:
                new = damage.with_valid_crcs(new)
            elif path.suffix == ".snapshot":
                new = damage.snapshot_with_valid_crc(new)
        path.write_bytes(new)
        changed.append(str(path.relative_to(root)))
    return changed


def run_cli(args) -> dict:
    sample = sample_dir()
    out = Path(args.out)
    stats = {"log_dirs": 0, "commands": 0, "exit_codes": {}, "failures": [], "kinds": {}, "slowest": [0.0, None],
             "peak_rss_mib": 0.0}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as tmp:
        work_dir = Path(tmp)
        for n in range(args.cli):
            rng = random.Random(f"{args.seed}:cli:{n}")
            root = work_dir / "logs"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(sample, root)
            changed = mutate_log_dir(root, rng)
            kept = work_dir / f"kept-{n}"
            shutil.copytree(root, kept)  # what the failure's reproducer starts from
            for cmd, keeps in cli_commands(root):
                before = tree_digest(root) if keeps else None
                code, stderr, rss, problem, took = run_watched(cmd, args.cli_timeout, args.memory_limit, work_dir)
                stats["commands"] += 1
                stats["exit_codes"][str(code)] = stats["exit_codes"].get(str(code), 0) + 1
                stats["peak_rss_mib"] = max(stats["peak_rss_mib"], rss)
                if took > stats["slowest"][0]:
                    stats["slowest"] = [took, f"log dir {n}: {cmd[0]}"]
                if problem is None and code not in (0, 1, 2):
                    problem = f"exit status {code}" + (" (a signal)" if code < 0 else "")
                if problem is None and "Traceback (most recent call last)" in stderr:
                    problem = "a traceback on stderr"
                if problem is None and keeps and tree_digest(root) != before:
                    problem = "the log dir changed"
                if problem:
                    kind = f"{cmd[0]}: {problem}" + (f" ({where_raised(stderr)})" if "traceback" in problem else "")
                    stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1
                    if stats["kinds"][kind] <= EXAMPLES:
                        stats["failures"].append(save_cli(out, n, kept, root, cmd, changed, kind, stderr))
                    shutil.rmtree(root)
                    shutil.copytree(kept, root)
            shutil.rmtree(kept)
            stats["log_dirs"] += 1
    stats["seconds"] = time.time() - started
    return stats


def where_raised(stderr: str) -> str:
    """The exception and the last line of the project's code in a traceback."""
    frames = [line.strip() for line in stderr.splitlines() if line.strip().startswith('File "')
              and str(ROOT) in line and "/.venv/" not in line]
    last = stderr.strip().splitlines()[-1].split(":")[0] if stderr.strip() else "?"
    where = frames[-1].split('"')[1].rsplit("/", 1)[-1] + ":" + frames[-1].split("line ")[1].split(",")[0] \
        if frames else "?"
    return f"{last} at {where}"


def save_cli(out: Path, n: int, kept: Path, root: Path, cmd: list[str], changed: list[str], problem: str,
             stderr: str) -> dict:
    target = out / f"cli-{n}"
    if not target.exists():
        shutil.copytree(kept, target)
    shown = [str(target / Path(a).relative_to(root)) if a.startswith(str(root)) else a for a in cmd]
    line = "kafkacodec " + " ".join(shown)
    with open(out / f"cli-{n}.txt", "a") as f:
        f.write(f"{problem}: {line}\nfiles edited: {', '.join(changed)}\n{stderr[-4000:]}\n\n")
    print(f"FAILURE cli log dir {n}: {problem}: {line}", flush=True)
    return {"log_dir": str(target), "command": line, "problem": problem}


# -- main -----------------------------------------------------------------------------------------
def summary(results: dict, cli: dict | None) -> int:
    failures = 0
    print()
    print(f"{'reader':<20}{'inputs':>11}{'typed errors':>14}{'decoded':>11}{'failures':>10}{'slowest CPU s':>15}"
          f"{'peak RSS MiB':>14}{'inputs/s':>10}")
    for name, r in results.items():
        failures += sum(r["kinds"].values())
        print(f"{name:<20}{r['inputs']:>11,}{r['typed']:>14,}{r['ok']:>11,}{sum(r['kinds'].values()):>10}"
              f"{r['slowest'][0]:>15.3f}{r['peak_rss_mib']:>14.1f}{r['inputs'] / max(r['seconds'], 1e-9):>10.0f}")
    if cli is not None:
        failures += sum(cli["kinds"].values())
        print(f"\ncommand: {cli['log_dirs']} mutated log dirs, {cli['commands']} runs in "
              f"{cli['seconds']:.0f} s, exit statuses {cli['exit_codes']}, {sum(cli['kinds'].values())} failures, "
              f"slowest {cli['slowest'][0]:.1f} CPU s ({cli['slowest'][1]}), peak RSS {cli['peak_rss_mib']:.1f} MiB")
    print(f"\n{failures} failures" + (":" if failures else " (no untyped exception, hang, crash or memory "
                                                             "overrun)"))
    for name, r in list(results.items()) + ([("command", cli)] if cli else []):
        counts = r.get("kinds") or {}
        examples: dict[str, list] = {}
        for f in r["failures"]:
            kind = f.get("kind") or f.get("problem")
            examples.setdefault(kind, []).append(f.get("file") or f.get("log_dir"))
            if "kinds" not in r:
                counts[kind] = counts.get(kind, 0) + 1
        for kind, n in counts.items():
            print(f"  {name}: {n} x {kind}; e.g. {', '.join(examples.get(kind, [])[:EXAMPLES])}")
    return 1 if failures else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=50_000, help="inputs per reader (0: no readers)")
    p.add_argument("--readers", default=",".join(READERS), help="comma-separated, of: " + ", ".join(READERS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=5.0, help="CPU seconds one input may take")
    p.add_argument("--memory-limit", type=int, default=1024, help="MiB of resident memory a process may use")
    p.add_argument("--cli", type=int, default=0, help="mutated log dirs to run the command on")
    p.add_argument("--cli-timeout", type=float, default=60.0, help="CPU seconds one command may take")
    p.add_argument("--out", default="fuzz-out", help="where failing inputs and their tracebacks go")
    p.add_argument("--replay", help="run one saved input and let any exception through")
    p.add_argument("--reader", help="with --replay")
    p.add_argument("--label", help="with --replay of a classes input: the class, as the .txt names it")
    p.add_argument("--jobs", type=int, default=1, help="processes running readers (and the command) at once")
    p.add_argument("--results", help=argparse.SUPPRESS)  # a job's results, as JSON, for the run that started it
    args = p.parse_args(argv)
    if args.replay:
        from kafkacodec.runtime.errors import KafkaCodecError
        reader = build_readers()[args.reader]
        started = time.process_time()
        try:
            call(reader, args.label or "", Path(args.replay).read_bytes())
            print("read without error", end="")
        except KafkaCodecError as err:
            print(f"a typed error: {type(err).__name__}: {err}", end="")
        print(f" in {time.process_time() - started:.3f} CPU seconds")  # anything else: its traceback
        return 0
    names = [n for n in args.readers.split(",") if n] if args.inputs else []
    unknown = set(names) - set(READERS)
    if unknown:
        p.error(f"unknown readers: {', '.join(sorted(unknown))}")
    if args.jobs > 1:
        results, cli = in_jobs(names, args)
        return summary(results, cli)
    results = {}
    sample_dir()  # before forking: one copy for every worker
    for name in names:
        print(f"{name}: {args.inputs:,} inputs...", flush=True)
        results[name] = run_reader(name, args)
    cli = run_cli(args) if args.cli else None
    shutil.rmtree(sample_dir().parent, ignore_errors=True)
    if args.results:  # a job of a run with --jobs: that run prints the summary
        Path(args.results).write_text(json.dumps({"readers": results, "cli": cli}))
        return 0
    return summary(results, cli)


def in_jobs(names: list[str], args):
    """Run the readers (and the command) in --jobs processes of this script; merge what they found."""
    groups = [g for g in (names[i::args.jobs] for i in range(args.jobs)) if g]
    if args.cli:
        groups.append([])  # the command: a job of its own
    jobs = []
    with tempfile.TemporaryDirectory(prefix="fuzz-jobs-") as tmp:
        for n, group in enumerate(groups):
            results = Path(tmp) / f"job-{n}.json"
            cmd = [sys.executable, __file__, "--inputs", str(args.inputs if group else 0), "--readers", ",".join(group),
                   "--cli", str(0 if group else args.cli), "--seed", str(args.seed), "--timeout", str(args.timeout),
                   "--memory-limit", str(args.memory_limit), "--cli-timeout", str(args.cli_timeout),
                   "--out", args.out, "--results", str(results)]
            jobs.append((subprocess.Popen(cmd), results))
        merged, cli = {}, None
        for proc, results in jobs:
            proc.wait()
            if not results.exists():
                raise SystemExit(f"a job ended without results (exit status {proc.returncode})")
            found = json.loads(results.read_text())
            merged.update(found["readers"])
            cli = found["cli"] or cli
    return {n: merged[n] for n in names if n in merged}, cli


if __name__ == "__main__":
    sys.exit(main())
