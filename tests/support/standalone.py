"""A Spark standalone cluster on 127.0.0.1 from the installed pyspark (`spark-class` daemons on
free ports, in a directory of their own), for the cluster test and the cluster benchmark; and a
Python for its executors that is not the venv's, as a node has."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

VERSION = "%d.%d" % sys.version_info[:2]


class ClusterError(RuntimeError):
    """Something of the cluster did not come up in time; the message ends with its log."""


def node_python() -> str:
    """A Python of this minor version outside the venv, as a node has: the system's, else the
    one the venv was made from."""
    system = Path(f"/usr/bin/python{VERSION}")
    return str(system if system.exists() else Path(sys.base_prefix) / "bin" / f"python{VERSION}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, proc=None, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.3)
    tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
    exited = f" (exited {proc.returncode})" if proc is not None and proc.poll() is not None else ""
    raise ClusterError(f"{what}: not within {timeout:.0f} s{exited}\n{tail}")


def processes_under(directory: Path) -> list[int]:
    """The processes whose working directory lies under `directory`: what was started there
    (daemons, executors and their Python workers, a driver)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if cwd == directory or directory in cwd.parents:
                pids.append(int(entry.name))
    return pids


def signal_all(pids, sig) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def kill(pids) -> None:
    signal_all(pids, signal.SIGKILL)


@dataclass
class Daemon:
    proc: subprocess.Popen
    log: Path
    home: Path  # its working directory; a worker's executors run below it

    def logged(self, text: str) -> bool:
        return self.log.exists() and text in self.log.read_text(errors="replace")


@dataclass
class Cluster:
    url: str
    master: Daemon
    workers: list[Daemon] = field(default_factory=list)

    def wait_for_workers(self, timeout: float = 120) -> None:
        for i, w in enumerate(self.workers, 1):
            wait_for(f"worker {i}", lambda: w.logged("Successfully registered with master"), timeout, w.proc, w.log)


@contextmanager
def standalone(root: Path, workers: int = 2, cores: int = 1, memory: str = "1g", quick_jit: bool = True):
    """A master, ready, and `workers` workers starting, under `root`; everything run there is
    killed on leaving. `quick_jit` trades the daemons' peak speed for a quicker start."""
    import pyspark

    home = Path(pyspark.__file__).parent
    (root / "conf").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(SPARK_HOME=str(home), SPARK_CONF_DIR=str(root / "conf"), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=str(root / "logs"), SPARK_DAEMON_MEMORY="384m",
               SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
    if quick_jit:
        env["SPARK_DAEMON_JAVA_OPTS"] = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    started: list[Daemon] = []

    def start(name: str, *args: str) -> Daemon:
        where = root / name
        where.mkdir()
        log = where / "daemon.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(home / "bin" / "spark-class"), *args], cwd=where, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        started.append(Daemon(proc, log, where))
        return started[-1]

    try:
        master = start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                       "--port", str(free_port()), "--webui-port", str(free_port()))
        # its URL as it says it (Spark takes the next port when one is taken), once it is the leader
        wait_for("the master", lambda: master.logged("I have been elected leader"), 120, master.proc, master.log)
        url = re.search(r"Starting Spark master at (spark://\S+)", master.log.read_text())[1]
        nodes = [start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                       "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                       "--work-dir", str(root / f"worker{i}" / "work")) for i in range(1, workers + 1)]
        yield Cluster(url, master, nodes)
    finally:
        for _ in range(2):  # daemons first, then whatever is left under the directory (executors, Python workers)
            kill(d.proc.pid for d in started)
            kill(processes_under(root))
            time.sleep(0.5)
        for d in started:
            d.proc.wait(timeout=30)
