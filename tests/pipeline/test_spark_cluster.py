"""The README's "Spark on a cluster" recipe on a real standalone cluster: a master and two 1-core
workers on 127.0.0.1, started from the installed pyspark; the recipe's script
(docs/recipes/spark-cluster.sh) run against it as written, with one worker killed mid-job.

The executors run a Python without kafkacodec (the system's), so every row proves the archive
that `kafkacodec pack-env` made; the results are checked against the library, record by record."""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from tests.support.standalone import VERSION, Daemon, kill, node_python, processes_under, signal_all, standalone, wait_for

from tests.support import ROOT

pytestmark = pytest.mark.spark

SCRIPT = ROOT / "docs" / "recipes" / "spark-cluster.sh"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def cluster(tmp_path):
    """A standalone master, ready, and two workers of 1 core and 1 GiB starting, on 127.0.0.1, from
    the installed pyspark, on free ports, in a temporary directory; everything it ran there (and
    the driver the test starts beside it) is killed at the end."""
    try:
        with standalone(tmp_path / "cluster") as started:
            yield started
    finally:
        kill(processes_under(tmp_path))


def write_log_dir(root: Path) -> None:
    """The sample log dir, and four partitions of 8,000 records in segments of 64 KiB in every
    codec, so that the read has about forty tasks to share and lose."""
    import random

    from kafkacodec.storage.samples.broker import write_sample
    from kafkacodec.storage.change.writer import PartitionWriter

    write_sample(root)
    rng = random.Random(11)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
    for p in range(4):
        with PartitionWriter(root / f"bulk-{p}", segment_bytes=64 << 10) as w:
            for b in range(80):
                records = [{"key": None if i % 17 == 0 else b"key-%d" % rng.randrange(500),
                            "value": None if i % 29 == 0 else b" ".join(rng.choices(words, k=rng.randrange(5, 60))),
                            "timestamp": 1_700_000_000_000 + 1000 * b + i,
                            "headers": [("n", b"%d" % i)] if i % 3 == 0 else []} for i in range(100)]
                w.append(records, compression=("none", "gzip", "snappy", "lz4", "zstd")[b % 5])


def digest(rows) -> str:
    h = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r[0]):
        h.update(repr(row).encode())
    return h.hexdigest()


def expected(logdir: Path):
    """Per (topic, partition): record count and digest of (offset, key, value, timestamp, headers);
    per (topic, partition, segment base offset): record count; all from the library's reader."""
    from kafkacodec.storage.layout.logdir import open_log_dir
    from kafkacodec.storage.segments.reader import partition_batches

    records, segments = {}, {}
    for part in open_log_dir(logdir).partitions:
        rows = []
        for seg in part.segments:
            segments[(part.topic, part.partition, seg.base_offset)] = 0
        for seg, batch in partition_batches(part):
            for r in batch:
                segments[(part.topic, part.partition, seg.base_offset)] += 1
                if not batch.is_legacy and batch.entry.is_control:
                    continue  # kafka-log gives no transaction markers unless includeControlRecords
                headers = None if batch.is_legacy or not r.headers else [(h.key, bytes(h.value)) for h in r.headers]
                rows.append((r.offset, r.key, r.value, None if r.timestamp == -1 else r.timestamp, headers))
        records[(part.topic, part.partition)] = (len(rows), digest(rows))
    return records, segments


def written(out: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(out / "records")
    millis = table.column("timestamp").cast(pa.timestamp("ms")).cast(pa.int64()).to_pylist()
    by_partition: dict = {}
    for row, ts in zip(table.select(["topic", "partition", "offset", "key", "value", "headers"]).to_pylist(), millis):
        headers = None if row["headers"] is None else [(h["key"], h["value"]) for h in row["headers"]]
        by_partition.setdefault((row["topic"], row["partition"]), []).append(
            (row["offset"], row["key"], row["value"], ts, headers))
    records = {k: (len(rows), digest(rows)) for k, rows in by_partition.items()}
    segs = pq.read_table(out / "segments").to_pylist()
    return records, segs


def running_read_task(worker: Daemon) -> bool:
    """Whether the worker's executor has a task of the read in hand: started and not finished, by
    its log, which says a task finished before telling the driver. TID 0 is register's check."""
    started, finished = set(), set()
    for log in (worker.home / "work").glob("app-*/*/stderr"):
        text = log.read_text(errors="replace")
        started |= set(re.findall(r"Running task \S+ in stage \S+ \(TID (\d+)\)", text))
        finished |= set(re.findall(r"Finished task \S+ in stage \S+ \(TID (\d+)\)", text))
    return any(tid != "0" for tid in started - finished)


def kill_mid_task(worker: Daemon) -> bool:
    """Freeze the worker and all it runs; if its executor is then in the middle of a read task (a
    task the driver will have to run again), kill them all, else let them go on."""
    frozen = [worker.proc.pid] + processes_under(worker.home)
    signal_all(frozen, signal.SIGSTOP)
    if running_read_task(worker):
        signal_all(frozen + processes_under(worker.home), signal.SIGKILL)
        return True
    signal_all(frozen, signal.SIGCONT)
    return False


def test_the_recipe_runs_on_a_standalone_cluster_and_survives_a_lost_worker(cluster, tmp_path):
    began = time.monotonic()
    logdir, out, submit = tmp_path / "logs", tmp_path / "out", tmp_path / "submit"
    write_log_dir(logdir)
    submit.mkdir()
    python = node_python()
    if not Path(python).exists():
        pytest.skip(f"no Python {VERSION} outside the venv on this machine to run the executors with")
    if subprocess.run([python, "-c", "import kafkacodec"], capture_output=True, cwd=submit).returncode == 0:
        pytest.skip(f"{python} imports kafkacodec without the archive: it would prove nothing")

    # the recipe's environment: the venv activated (nothing else of this process's Spark settings)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}", VIRTUAL_ENV=str(VENV_BIN.parent),
               SPARK_LOCAL_IP="127.0.0.1", PY=python)
    quick = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    options = ["--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
               "--conf", f"spark.driver.extraJavaOptions={quick}", "--conf", f"spark.executor.extraJavaOptions={quick}"]
    log = submit / "recipe.log"
    with open(log, "wb") as sink:  # the recipe packs first, while the workers start
        recipe = subprocess.Popen(["bash", str(SCRIPT), cluster.url, str(logdir), str(out), *options], cwd=submit,
                                  env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        cluster.wait_for_workers()
        # a node dies mid-job: worker 1 and everything it runs, in the middle of a task of the read
        victim = cluster.workers[0]
        wait_for("worker 1's executor in the middle of a read task",
                 lambda: running_read_task(victim) and kill_mid_task(victim), 300, recipe, log)
        recipe.wait(timeout=300)
    finally:
        if recipe.poll() is None:
            kill(processes_under(submit))
            recipe.wait(timeout=30)
    text = log.read_text(errors="replace")
    assert recipe.returncode == 0, text[-5000:]
    assert re.search(r"Lost executor \d+", text), text[-3000:]
    lost = (re.search(r"task (\d+)\.0 in stage (\S+) \(TID \d+\) failed because while it was being computed, "
                      r"its executor exited", text)
            or re.search(r"Lost task (\d+)\.0 in stage (\S+) .*ExecutorLostFailure", text))
    assert lost, text[-3000:]
    assert f"Finished task {lost[1]}.1 in stage {lost[2]} " in text  # the lost task, run again on the other worker
    assert "checked: " in text and f"(Python {VERSION}." in text  # pack-env tried the archive with the nodes' Python
    assert f"records read by the {'jvm' if shutil.which('javac') else 'python'} reader" in text

    # exactly the library's records and segments, the lost worker's tasks done again elsewhere
    want_records, want_segments = expected(logdir)
    got_records, got_segments = written(out)
    assert got_records == want_records
    assert {(s["topic"], s["partition"], s["baseOffset"]): s["records"] for s in got_segments} == want_segments
    assert all(s["firstError"] is None and s["invalidBytes"] == 0 and s["indexProblems"] is None
               for s in got_segments), [s for s in got_segments if s["firstError"] or s["indexProblems"]]
    assert len(want_segments) >= 40

    # the archive: small, no pyspark, py4j or pandas; the compiled modules when the venv has them
    archive = submit / "deps.tar.gz"
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        info = json.load(tar.extractfile("kafkacodec-env.json"))
    tops = {n.split("/", 1)[0] for n in names}
    assert not {"pyspark", "py4j", "pandas"} & tops, sorted(tops)
    assert {"kafkacodec", "pyarrow", "numpy", "crc32c", "lz4", "zstandard", "cramjam"} <= tops
    assert info["python"] == VERSION and "pyspark" not in info["distributions"]
    if os.environ.get("KAFKACODEC_EXPECT_COMPILED") == "1":
        assert any(re.fullmatch(r"kafkacodec/runtime/_kernels\..*\.so", n) for n in names)
        assert any(re.fullmatch(r"kafkacodec/generated/_c_record_batch\..*\.so", n) for n in names)
    assert archive.stat().st_size < 150 << 20
    assert not any(n.endswith((".pyc", ".pyx")) for n in names)
    print(f"recipe on the cluster: {time.monotonic() - began:.0f} s, archive {archive.stat().st_size >> 20} MiB")


def test_the_readme_gives_the_scripts_commands():
    """The README's commands are the script's, word for word (the master and the job aside)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\nOn a cluster the executors need kafkacodec.*?```sh\n(.*?)```", readme, re.S)[1]
    script = SCRIPT.read_text()
    assert "docs/recipes/spark-cluster.sh" in readme
    commands = [re.sub(r"\s+#.*", "", line).rstrip(" \\").strip() for line in block.splitlines()]
    commands = [c for c in commands if c and not c.startswith(("#", ". ", "PY=")) and "--master" not in c
                and not c.endswith("job.py")]
    assert len(commands) >= 4
    for command in commands:
        assert command in script, command


def test_a_worker_that_does_not_start_is_reported_by_the_line_that_says_why():
    from kafkacodec.pipeline.registration import _cause

    err = RuntimeError("An error occurred while calling o52.collectAndServe.\n: org.apache.spark.SparkException: "
                       "Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times, most recent failure: "
                       "Lost task 0.3 in stage 0.0 (TID 3) (127.0.0.1 executor 1): java.io.IOException: Cannot run "
                       'program "./environment/bin/python": error=2, No such file or directory\n\tat java.base/...')
    assert _cause(err) == 'Cannot run program "./environment/bin/python": error=2, No such file or directory'
    err = RuntimeError("...: org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
                       "pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in "
                       "worker has different version: 3.12 than that in driver: 3.11, PySpark cannot run with "
                       "different minor versions.")
    assert _cause(err).startswith("[PYTHON_VERSION_MISMATCH] Python in worker has different version: 3.12")
    assert _cause(RuntimeError("something else\nand more")) == "something else"
