"""The file-system calls a Python script makes, as strace sees them: which files it opened and
how, which it flushed to the disk, what it renamed. A script marks a point ("the append
returned") with `os.access("/mark-<name>", os.F_OK)`, which shows in the trace as ("mark", name)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CALLS = "openat,open,fsync,fdatasync,rename,renameat,renameat2,access,faccessat,faccessat2"
_OPEN = re.compile(r'^open(?:at)?\((?:[^,]*, )?"([^"]*)", ([A-Z_|]+)(?:, \d+)?\) = (\d+)')
_SYNC = re.compile(r'^f(?:data)?sync\(\d+<([^>]*)>\) = 0')
_RENAME = re.compile(r'^rename(?:at2?)?\((?:[^,]*, )?"([^"]*)", (?:[^,]*, )?"([^"]*)".*\) = 0')
_MARK = re.compile(r'^(?:f?access(?:at2?)?)\((?:[^,]*, )?"/mark-([^"]*)"')


def trace(script: str, *args: str, cwd: Path | None = None) -> list[tuple]:
    """Run `script` under strace; its calls in order: ("open", path, flags), ("sync", path),
    ("rename", src, dst), ("mark", name). Paths are absolute."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    out = Path(cwd or ".") / "strace.out"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{Path(__file__).parents[1]}")
    run = subprocess.run(["strace", "-y", "-o", str(out), "-e", f"trace={CALLS}", sys.executable, "-c", script, *args],
                         capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert run.returncode == 0, run.stderr
    events = []
    for line in out.read_text().splitlines():
        if m := _OPEN.match(line):
            events.append(("open", m[1], set(m[2].split("|"))))
        elif m := _SYNC.match(line):
            events.append(("sync", m[1]))
        elif m := _RENAME.match(line):
            events.append(("rename", m[1], m[2]))
        elif m := _MARK.match(line):
            events.append(("mark", m[1]))
    out.unlink()
    return events
