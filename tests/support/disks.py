"""Real file-system faults for tests: a small tmpfs to fill up (ENOSPC), remounted read-only at
will (EROFS). Mounting needs root; the tests that use these skip cleanly without it."""
from __future__ import annotations

import errno
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

PAGE = 4096


@contextmanager
def tmpfs(path: Path, size: str):
    """A tmpfs of `size` (as mount takes it: 256k, 2m) mounted at `path` for the block's duration."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    run = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {run.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def remount(path: Path, mode: str) -> None:
    """`ro` or `rw`."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True, capture_output=True)


def fill(directory: Path) -> list[Path]:
    """A file taking every block left on the file system of `directory`; delete it to free them."""
    path = directory / "filler"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    chunk = bytes(64 * PAGE)
    try:
        while True:
            os.write(fd, chunk)
    except OSError as err:
        if err.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return [path]


def free(fillers: list[Path]) -> None:
    for path in fillers:
        path.unlink(missing_ok=True)
    fillers.clear()


def contents(directory: Path) -> dict[str, bytes]:
    """Every file of a directory by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
