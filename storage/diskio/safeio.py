"""Opening the files of a log dir as a careful reader must: regular files only (a FIFO would
block in open(), a device never ends), every failure of the operating system turned into one
typed error that names the file, and sizes checked before anything is read into memory."""
from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import BinaryIO

from kafkacodec.runtime.errors import KafkaCodecError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class FileProblem(KafkaCodecError):
    """A file that cannot be used as it is: not a regular file, unreadable, unwritable, too large
    for what it claims to be, or a failure of the operating system while using it."""

    def __init__(self, path: str | Path, message: str, position: int | None = None):
        where = f"{path}: byte {position}" if position is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.file, self.message, self.position = str(path), message, position


def os_problem(path: str | Path, err: OSError) -> FileProblem:
    """An OSError as a FileProblem, worded for an operator (no errno numbers, no tracebacks)."""
    reason = {errno.ENOSPC: "no space left on the device", errno.EROFS: "the file system is read-only",
              errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
              errno.ENOENT: "no such file or directory", errno.EDQUOT: "disk quota exceeded",
              errno.EISDIR: "is a directory", errno.ENOTDIR: "a part of the path is not a directory",
              errno.EIO: "input/output error"}.get(err.errno, err.strerror or str(err))
    return FileProblem(path, reason)


def copy_file(src: Path, dst: Path) -> None:
    """shutil.copy2, its failure a FileProblem naming the file at fault: the copy when the
    writing fails (a full or read-only disk), the source when the reading does."""
    try:
        shutil.copy2(src, dst)
    except OSError as err:
        writing = err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)
        raise os_problem(dst if writing else (err.filename or src), err) from None


def kind_of(mode: int) -> str | None:
    """What a file of this mode is when it is not a regular file, else None."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file" if not stat.S_ISREG(mode)
                else None)


def open_regular(path: str | Path) -> BinaryIO:
    """The file opened for reading, refused with a FileProblem unless it is a regular file. Opened
    without blocking, so a FIFO is refused instead of waiting for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise os_problem(path, err) from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise FileProblem(path, f"is {kind}, not a regular file" if kind != "not a regular file" else kind)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: str | Path) -> int:
    """The size of a regular file (symbolic links followed), or a FileProblem."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise os_problem(path, err) from None
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise FileProblem(path, f"is {kind}, not a regular file" if kind != "not a regular file" else kind)
    return st.st_size


def read_at(f: BinaryIO, position: int, size: int, path: str | Path) -> bytes:
    """Up to `size` bytes at `position` (fewer only at the end of the file, as when it was
    truncated underneath us); errors of the operating system become FileProblems. One pread
    returns at most about 2 GiB on Linux, and a segment may be larger: reads are repeated."""
    try:
        data = os.pread(f.fileno(), size, position)
        if len(data) == size or not data:
            return data
        parts = [data]
        while size > (got := sum(map(len, parts))):
            more = os.pread(f.fileno(), size - got, position + got)
            if not more:
                break
            parts.append(more)
        return b"".join(parts)
    except OSError as err:
        raise os_problem(path, err) from None


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """A whole small file (an index, a snapshot, a checkpoint), refused when larger than `limit`
    bytes: what the file can hold is known before it is read."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise FileProblem(path, f"{what} of {size:,} bytes is larger than the {limit:,} bytes it can hold here")
        data = read_at(f, 0, size, path)
    return data


def read_whole(path: str | Path) -> bytes:
    """A whole regular file, as many bytes as it holds when opened (a device or a FIFO, which
    never end, is refused before anything is read)."""
    with open_regular(path) as f:
        return read_at(f, 0, os.fstat(f.fileno()).st_size, path)
