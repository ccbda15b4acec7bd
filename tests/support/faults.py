"""Fault injection for the commands that change files: a SIGKILL at the Nth call of a system call
(strace's syscall tampering), for every N the command reaches, then the command that resumes,
and a check of what is on disk. Also small tmpfs and read-only mounts, for ENOSPC and EROFS.

A first run under strace counts the calls of each system call that changes files (and the
openat calls that create one); then each point is run in a fresh copy of the files. Runs are
deterministic (no bytecode written, a fixed hash seed), so the Nth call is the same call in
every run of the same command on the same files. The counted and the killed runs are forked
from a server that has imported what the command imports (tests.support.forkserver): the
start-up is not paid at every point."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from . import forkserver
from .forkserver import ForkServer

STRACE = shutil.which("strace") or ("/usr/bin/strace" if os.path.exists("/usr/bin/strace") else None)
# the calls that change files, one name each as strace counts them
CHANGING = ("rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "write", "pwrite64", "writev",
            "sendfile", "copy_file_range", "ftruncate", "truncate", "fsync", "fdatasync", "mkdir", "mkdirat",
            "link", "linkat")
CREATING = "openat"  # only its calls with O_CREAT are points
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", COLUMNS="200")
KILLED = (-9, 128 + 9)
# make test kills at a sample of each command's points (KAFKACODEC_FAULT_POINTS=sample: each
# system call's first and last, and every tenth between); make test-cluster at every one
SAMPLED = os.environ.get("KAFKACODEC_FAULT_POINTS") == "sample"
_LINE = re.compile(r"^(?P<pid>\d+) +(?P<name>\w+)\((?P<args>.*)")


@dataclass(frozen=True)
class Point:
    syscall: str
    n: int  # the nth call of this system call by the command's process

    def __str__(self) -> str:
        return f"{self.syscall}#{self.n}"


@dataclass
class Case:
    """A command run in a work directory: `{work}` in its arguments is replaced by the directory.
    After the kill, `resume` (kafkacodec commands, run in this process) must each exit 0, then
    `check(work, stdout of the killed run)` says what is wrong, or None."""
    name: str
    argv: list[str]
    prepare: Callable[[Path], None]  # fills a new, empty work directory
    resume: list[list[str]]
    check: Callable[[Path, str], str | None] | None = None
    stdin: str | None = None  # a file in the work directory given as standard input
    status: int = 0  # the exit status of the command undisturbed (a refusal is killed anywhere too)


def kafkacodec(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafkacodec", *args]


def _argv(argv: list[str], work: Path) -> list[str]:
    return [a.replace("{work}", str(work)) for a in argv]


def run(argv: list[str], work: Path, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """The command in a subprocess of its own, untraced (traced runs are the fork server's): it may
    write bytecode, so the traced ones find it all."""
    with open(work / stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        return subprocess.run(_argv(argv, work), stdin=f, capture_output=True, cwd=work.parent,
                              env=dict(ENV, PYTHONDONTWRITEBYTECODE=""), timeout=timeout)


def run_here(args: list[str], work: Path, stdin: str | None = None) -> tuple[int, str]:
    """A kafkacodec command in this process (its exit status and output): resuming costs no start-up."""
    from click.testing import CliRunner

    from kafkacodec.cli import main

    data = (work / stdin).read_bytes() if stdin else None
    result = CliRunner().invoke(main, _argv(args, work), input=data)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback
        return 99, "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.output


def served(server: ForkServer, case: Case, work: Path, strace: list[str]) -> subprocess.CompletedProcess:
    """The command run by the fork server under strace, as `run` gives it."""
    out, err = work.parent / f"{work.name}.out", work.parent / f"{work.name}.err"
    try:
        status = server.run(_argv(case.argv, work), work.parent, work / case.stdin if case.stdin else None, out, err,
                            STRACE, strace)
        return subprocess.CompletedProcess(case.argv, status, out.read_bytes(), err.read_bytes())
    finally:
        out.unlink(missing_ok=True)
        err.unlink(missing_ok=True)


def injection_points(case: Case, work: Path, server: ForkServer) -> list[Point]:
    """Every point of the command on these files, from one traced run."""
    trace = work.parent / f"{work.name}.trace"
    done = served(server, case, work, ["-o", str(trace), "-e", f"trace={','.join(CHANGING + (CREATING,))}"])
    assert done.returncode == case.status, \
        f"{case.name}: the traced run exited {done.returncode}, not {case.status}: {done.stderr.decode()[-2000:]}"
    counts: dict[str, int] = {}
    points = []
    main = None
    for line in trace.read_text().splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        main = main or m["pid"]
        if m["pid"] != main:
            continue  # accounting is per process; the commands run in one
        name = m["name"]
        counts[name] = counts.get(name, 0) + 1
        if name != CREATING or "O_CREAT" in m["args"]:
            points.append(Point(name, counts[name]))
    trace.unlink()
    return points


def kill_at(case: Case, work: Path, point: Point) -> subprocess.CompletedProcess:
    global _SERVER
    if _SERVER is None:  # one per worker, ended as the worker ends
        from multiprocessing.util import Finalize

        _SERVER = ForkServer(case.argv[0], _ACTIVE[3], ENV)
        Finalize(_SERVER, _SERVER.close, exitpriority=10)
    return served(_SERVER, case, work, ["-o", os.devnull, "-e", f"trace={point.syscall}",
                                        "-e", f"inject={point.syscall}:signal=KILL:when={point.n}"])


_ACTIVE: tuple | None = None  # (case, template, scratch, modules to import) for the forked workers
_SERVER: ForkServer | None = None


def try_point(point: Point) -> str | None:
    """Kill the command at `point` in a fresh copy of the files, resume, check; what went wrong."""
    case, template, scratch, _ = _ACTIVE
    work = scratch / f"{case.name}-{point.syscall}-{point.n}"
    shutil.copytree(template, work, symlinks=True)
    try:
        killed = kill_at(case, work, point)
        if killed.returncode not in KILLED:
            return f"{point}: not killed (exit {killed.returncode}): {killed.stderr.decode()[-500:]}"
        for args in case.resume:
            status, output = run_here(args, work)
            if status != 0:
                return f"{point}: {' '.join(args)} exited {status}: {output[-1500:]}"
        problem = case.check(work, killed.stdout.decode()) if case.check else None
        return f"{point}: {problem}" if problem else None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scratch_dir(fallback: Path) -> Path:
    """Where the runs work: a tmpfs when there is one (flushes cost nothing there; a kill, unlike a
    power loss, leaves the kernel's view of the files as it was)."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else fallback
    return Path(tempfile.mkdtemp(prefix="kafkacodec-faults-", dir=base))


def sampled(points: list[Point]) -> list[Point]:
    """Each system call's first and last points, and every tenth between."""
    last = {p.syscall: p.n for p in points}
    return [p for p in points if p.n == 1 or p.n == last[p.syscall] or p.n % 10 == 0]


def every_point(case: Case, tmp: Path, workers: int = 2, only: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    """Run the case killed at each of its points (of the system calls in `only`, when given; a
    sample of them with SAMPLED); (how many points the command reaches, what went wrong at which)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _ACTIVE
    scratch = scratch_dir(tmp)
    try:
        template = scratch / f"{case.name}-template"
        template.mkdir()
        case.prepare(template)
        probe = scratch / f"{case.name}-probe"
        shutil.copytree(template, probe, symlinks=True)
        listed = scratch / "modules.json"  # and bytecode written for every module the runs import
        forkserver.probe(_argv(case.argv, probe), listed, probe.parent, probe / case.stdin if case.stdin else None,
                         dict(ENV, PYTHONDONTWRITEBYTECODE=""))
        modules = json.loads(listed.read_text())
        shutil.rmtree(probe)
        shutil.copytree(template, probe, symlinks=True)
        server = ForkServer(case.argv[0], modules, ENV)
        try:
            points = [p for p in injection_points(case, probe, server) if not only or p.syscall in only]
        finally:
            server.close()
        shutil.rmtree(probe)
        _ACTIVE = (case, template, scratch, modules)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            problems = [p for p in pool.map(try_point, sampled(points) if SAMPLED else points) if p]
        return len(points), problems
    finally:
        _ACTIVE = None
        shutil.rmtree(scratch, ignore_errors=True)


# -- mounts ------------------------------------------------------------------------------------
def can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    with tempfile.TemporaryDirectory() as d:
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", d], check=True)
        return ok


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def remount(path: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True)


def fill(path: Path, leave: int) -> None:
    """Fill the file system of `path` until `leave` bytes are free."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    if free > leave:
        with open(path / "filler", "wb") as f:
            f.write(b"\0" * (free - leave))
