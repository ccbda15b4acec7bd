"""Whole-file writes that a reader never sees half done, and that survive a loss of power once
they return: the data is flushed to the disk before the rename that publishes it, and the
directory after it (a rename lives in the directory, not in the file)."""
from __future__ import annotations

import errno
import os
from pathlib import Path


def tmp_path_of(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def fsync_directory(directory: str | Path) -> None:
    """Make the names created, renamed or removed in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno != errno.EINVAL:  # a file system that cannot sync directories has nothing to sync
            raise
    finally:
        os.close(fd)


def fsync_file(path: str | Path) -> None:
    """Flush a file's data to the disk."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_fully(fd: int, data: bytes | memoryview) -> None:
    """os.write until everything is written (a write may take only part of the bytes)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new_file(tmp: Path, data: bytes, durable: bool) -> None:
    """Create or truncate `tmp` and write `data` to it, flushed to the disk when `durable`."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        write_fully(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def remove_quietly(path: Path) -> None:
    """Remove a temporary name whatever becomes of it: already gone, renamed into place, or never
    written, the failure being reported is the one that matters."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def write_atomically(path: str | Path, data: bytes | str, *, durable: bool = True) -> None:
    """Write `<path>.tmp`, then rename it over `path` (a rename within a directory is atomic). On
    any failure the `.tmp` is removed and the OSError raised; `path` is then as it was. Without
    `durable` nothing is flushed to the disk: for scratch output only."""
    write_files_atomically({Path(path): data}, durable=durable)


def write_files_atomically(files: dict[Path, bytes | str], *, durable: bool = True) -> None:
    """Several files, each as `write_atomically` writes it, all written before any is renamed into
    place: a failure while writing (a full disk) leaves every target as it was and no `.tmp`."""
    tmps = {Path(path): tmp_path_of(Path(path)) for path in files}
    try:
        for path, data in files.items():
            write_new_file(tmps[Path(path)], _as_bytes(data), durable)
        for path, tmp in tmps.items():
            os.replace(tmp, path)
        if durable:
            for directory in {path.parent for path in tmps}:
                fsync_directory(directory)
    except BaseException:
        for tmp in tmps.values():
            remove_quietly(tmp)
        raise
