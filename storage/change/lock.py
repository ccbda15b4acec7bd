"""One command that changes a log dir at a time: an exclusive, non-blocking lock on a file in the
log dir (the directory holding the partition directories). The kernel releases it when its
holder dies, so a killed command never leaves the log dir locked; the file itself stays."""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kafkacodec.runtime.errors import KafkaCodecError

from ..layout.logdir import is_partition_dir
from ..diskio.safeio import os_problem

LOCK_NAME = ".kafkacodec.lock"


class LogDirBusy(KafkaCodecError):
    """Another command holds the log dir's lock."""

    def __init__(self, lock: Path, holder: str):
        super().__init__(f"{lock}: locked by another kafkacodec command ({holder}); "
                         "run again when it has finished")
        self.lock = lock


def log_root(path: Path) -> Path:
    """The log dir a path belongs to: itself for a log-dirs root, the parent of a partition
    directory, the parent of a segment file's directory. Operations on a partition rename it in
    this directory, so its lock and journal live here."""
    path = Path(os.path.realpath(path))  # through symbolic links: one lock per real log dir
    if not path.is_dir():  # a segment (or whatever stands where one is named)
        return path.parent.parent
    if is_partition_dir(path):
        return path.parent
    return path


@contextmanager
def holding(root: Path, command: str) -> Iterator[Path]:
    """`with holding(root, "clean"):` the lock of log dir `root`, or LogDirBusy naming the holder."""
    lock = Path(root) / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as err:
        raise os_problem(lock, err) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LogDirBusy(lock, _holder(fd)) from None
        try:  # who holds it, for the message another command prints (informative only)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {command}\n".encode(), 0)
        except OSError:
            pass
        yield lock
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
    except OSError:
        text = []
    if len(text) >= 2 and text[0].isdigit():
        return f"pid {text[0]}, {text[1]}"
    return "pid unknown"
