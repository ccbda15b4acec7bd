"""The Spark figures of bench/spark.py on a standalone cluster set up as the README's recipe sets
one up (docs/recipes/spark-cluster.sh): a master and two 1-core workers on 127.0.0.1 from the
installed pyspark, client mode, kafkacodec shipped to the executors by `kafkacodec pack-env`'s
archive and run by a Python outside the venv, filter pushdown on. The driver is a process of its
own started where the archive is, as spark-submit run there would be."""
from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.support.standalone import node_python, standalone  # noqa: E402


def table() -> list[dict] | None:
    """The figures, or None when this machine has no Python outside the venv for the executors."""
    python = node_python()
    if not Path(python).exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        submit = tmp / "submit"
        submit.mkdir()
        subprocess.run([sys.executable, "-m", "kafkacodec", "pack-env", "--force", "deps.tar.gz", "--python", python],
                       cwd=submit, check=True, stdout=subprocess.DEVNULL)
        with tarfile.open(submit / "deps.tar.gz") as archive:
            archive.extractall(submit / "deps", filter="data")
        with standalone(tmp / "cluster", memory="2g", quick_jit=False) as cluster:
            cluster.wait_for_workers()
            driver = subprocess.run([sys.executable, str(Path(__file__).resolve()), cluster.url, python,
                                     str(tmp / "data")], cwd=submit, check=True, stdout=subprocess.PIPE)
            return json.loads(driver.stdout.decode().strip().splitlines()[-1])


def _measure(url: str, python: str, data: Path) -> list[dict]:
    """The driver's part: a session on the cluster with the recipe's settings, the workloads."""
    from pyspark.sql import SparkSession

    import spark as spark_bench
    from kafkacodec.pipeline import register

    session = (SparkSession.builder.master(url).appName("kafkacodec bench (standalone)")
               .config("spark.archives", "deps.tar.gz#deps").config("spark.executorEnv.PYTHONPATH", "./deps")
               .config("spark.pyspark.python", python).config("spark.pyspark.driver.python", sys.executable)
               .config("spark.sql.python.filterPushdown.enabled", "true").config("spark.executor.memory", "1g")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        register(session)
        data.mkdir()
        return spark_bench.measure(session, data)
    finally:
        session.stop()


if __name__ == "__main__":
    if len(sys.argv) == 4:
        sys.path.insert(0, str(HERE))
        print(json.dumps(_measure(sys.argv[1], sys.argv[2], Path(sys.argv[3]))))
    else:
        for row in table() or []:
            print(row)
