"""Runs of one command, each in a fresh process forked from a server that has imported what the
command imports: a kill-at-every-point test runs the same command hundreds of times, and Python's
start-up and imports were most of each run. What the command does to files is the same as in a
process of its own (the imports change no file; the fork starts with nothing else done), so the
Nth call of a system call is the same call in every run, as faults.py needs.

The server reads one request per line on its stdin (JSON: argv as given to Python, the working
directory, stdin, files for stdout and stderr, strace's arguments or none) and answers each with
the run's status, as subprocess gives it (-N for a signal). Each run's process stops itself after
the fork; strace attaches to it (`-p`), then it continues. The server ends when its stdin closes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# runs the argv of a Python command line (`-m module ...` or `-c code ...`) in this process
_RUN = r'''
import runpy, sys

def run(argv):
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        raise ValueError(f"not a Python command line: {argv}")
'''

# a first run in a process of its own that records which modules the command imports
_PROBE = _RUN + r'''
import atexit, json
listed = sys.argv[1]
atexit.register(lambda: open(listed, "w").write(json.dumps(sorted(m for m in sys.modules if "." not in m or m.startswith("kafkacodec")))))
run(sys.argv[2:])
'''

_SERVER = _RUN + r'''
import json, os, signal, subprocess, time, traceback

for name in json.loads(sys.argv[1]):
    try:
        __import__(name)
    except Exception:
        pass


def lines():
    pending = b""
    while True:
        chunk = os.read(0, 65536)  # never sys.stdin: its buffer would pass to the runs
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield json.loads(line)


def child(req):
    code = 1
    try:
        os.dup2(os.open(req["stdin"] or os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        os.chdir(req["cwd"])
        os.kill(os.getpid(), signal.SIGSTOP)  # until strace is attached
        run(req["argv"])
        code = 0
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else (0 if err.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def wait(pid, timeout):
    end = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.002)


for req in lines():
    pid = os.fork()
    if pid == 0:
        child(req)
    os.waitpid(pid, os.WUNTRACED)
    tracer = None
    if req["strace"]:
        tracer = subprocess.Popen([req["strace_path"], "-f", "-p", str(pid), *req["strace"]],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        tracer.stderr.readline()  # "Process N attached"
    os.kill(pid, signal.SIGCONT)
    status = wait(pid, req["timeout"])
    if tracer is not None:
        tracer.stderr.read()
        tracer.wait()
    answer = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    os.write(1, (json.dumps({"status": answer}) + "\n").encode())
'''


def probe(argv: list[str], listed: Path, cwd: Path, stdin: Path | None, env: dict) -> subprocess.CompletedProcess:
    """A run of `argv` ([python, -m|-c, ...]) in a process of its own, the modules it imported
    written to `listed`."""
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        return subprocess.run([argv[0], "-c", _PROBE, str(listed), *argv[1:]], stdin=f, capture_output=True,
                              cwd=cwd, env=env, timeout=600)


class ForkServer:
    def __init__(self, python: str, modules: list[str], env: dict):
        self.process = subprocess.Popen([python, "-c", _SERVER, json.dumps(modules)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env)

    def run(self, argv: list[str], cwd: Path, stdin: Path | None, out: Path, err: Path, strace_path: str | None,
            strace: list[str] | None, timeout: float = 60) -> int:
        request = {"argv": argv[1:], "cwd": str(cwd), "stdin": str(stdin) if stdin else None, "out": str(out),
                   "err": str(err), "strace": strace or [], "strace_path": strace_path, "timeout": timeout}
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the fork server ended")
        return json.loads(line)["status"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
