"""The one durable-file API: file operations that survive a crash or a power loss in the order
they were made. Data is flushed to the disk before the rename that publishes it, and a directory
after the names created, renamed or removed in it (a name lives in its directory, not in its
file); a whole-file write is never seen half done; a kept file never replaces an existing one.

Errors: every function raises a FileProblem naming the file (or directory) at fault for a
failure of the operating system, never an OSError. A whole-file write that fails leaves its
target as it was and no temporary file.

Temporary names, which `recover` removes when a kill leaves them (storage.change.replace):
`<name>.tmp` (tmp_path_of) for whole-file writes, and `.<name>.<pid>.kafkacodec-tmp`
(TMP_SUFFIX) for kept files."""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from .safeio import FileProblem, os_problem

TMP_SUFFIX = ".kafkacodec-tmp"  # create_kept's temporaries, never the only copy of data
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def tmp_path_of(path: Path) -> Path:
    """Where write_atomically writes `path` before renaming it into place."""
    return path.with_name(path.name + ".tmp")


def fsync_file(path: str | Path) -> None:
    """Flush a file's data to the disk."""
    try:
        fd = os.open(path, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as err:
        raise os_problem(path, err) from None


def fsync_dir(path: str | Path) -> None:
    """Make the names created, renamed or removed in a directory durable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
        try:
            os.fsync(fd)
        except OSError as err:
            if err.errno != errno.EINVAL:  # a file system that cannot sync directories has nothing to sync
                raise
        finally:
            os.close(fd)
    except OSError as err:
        raise os_problem(path, err) from None


def fsync_tree(root: Path) -> None:
    """Every file and directory below `root`, deepest first, then `root`; a directory that cannot
    be listed is a failure, not a part passed over."""
    def unlisted(err: OSError):
        raise os_problem(err.filename or root, err) from None

    for top, dirs, files in os.walk(root, topdown=False, onerror=unlisted):
        for name in files:
            fsync_file(Path(top) / name)
        fsync_dir(top)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]  # a write may take only part of the bytes


def write_fully(fd: int, data: bytes | memoryview, path: str | Path) -> None:
    """Every byte of `data` written to `fd`, the file `path` is open on (named by a failure)."""
    try:
        _write_all(fd, data)
    except OSError as err:
        raise os_problem(path, err) from None


def write_new_file(tmp: Path, data: bytes, durable: bool, *, target: Path | None = None) -> None:
    """Create or truncate `tmp` and write `data` to it, flushed to the disk when `durable`. A
    failure names `target`, the file `tmp` is written for (else `tmp`); removing `tmp` is then
    the caller's part."""
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC, 0o644)
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as err:
        raise os_problem(target if target is not None else tmp, err) from None


def remove_quietly(path: Path) -> None:
    """Remove a temporary name whatever becomes of it (already gone, renamed into place, never
    written): the failure being reported is the one that matters. Never raises."""
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomically(path: str | Path, data: bytes | str, *, durable: bool = True) -> None:
    """Write `<path>.tmp`, then rename it over `path` (a rename within a directory is atomic), then
    flush the directory. On any failure the `.tmp` is removed and `path` is as it was. Without
    `durable` nothing is flushed to the disk: for scratch output only."""
    write_files_atomically({Path(path): data}, durable=durable)


def write_files_atomically(files: dict[Path, bytes | str], *, durable: bool = True) -> None:
    """Several files, each as write_atomically writes it, all written before any is renamed into
    place (in the order given): a failure while writing (a full disk) leaves every target as it
    was and no `.tmp`."""
    tmps = {Path(path): tmp_path_of(Path(path)) for path in files}
    try:
        for path, data in files.items():
            content = data.encode("utf-8") if isinstance(data, str) else data
            write_new_file(tmps[Path(path)], content, durable, target=Path(path))
        for path, tmp in tmps.items():
            try:
                os.replace(tmp, path)
            except OSError as err:
                raise os_problem(path, err) from None
        if durable:
            for directory in {path.parent for path in tmps}:
                fsync_dir(directory)
    except BaseException:
        for tmp in tmps.values():
            remove_quietly(tmp)
        raise


def create_kept(path: str | Path, data: bytes) -> Path:
    """Keep `data` in a new file named `path`, or `path`-2, -3... when that name is taken: an
    existing file is never replaced. Flushed, with its directory, before this returns."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")  # linked to the first free name
    try:
        write_new_file(tmp, data, durable=True, target=path)
        for n in range(1, 1_000_000):
            target = path if n == 1 else path.with_name(f"{path.name}-{n}")
            try:
                os.link(tmp, target)  # fails when the name exists, where a rename would replace it
            except FileExistsError:
                continue
            break
        else:
            raise FileProblem(path, "no free name for a kept file")
    except OSError as err:
        raise os_problem(path, err) from None
    finally:
        remove_quietly(tmp)
    fsync_dir(path.parent)
    return target


def rename_durably(src: Path, dst: Path) -> None:
    """Rename, refusing to replace anything at `dst`, then flush both directories."""
    if os.path.lexists(dst):
        raise FileProblem(dst, f"exists; {src} was not moved there")
    try:
        os.rename(src, dst)
    except OSError as err:
        raise os_problem(src, err) from None
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)


def truncate_durably(path: Path, size: int) -> None:
    try:
        os.truncate(path, size)
    except OSError as err:
        raise os_problem(path, err) from None
    fsync_file(path)


def unlink_durably(path: Path) -> None:
    """Remove one name (a file, or a symbolic link itself) and flush its directory; a name already
    gone is done."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as err:
        raise os_problem(path, err) from None
    fsync_dir(path.parent)


def remove_tree(path: Path) -> None:
    """Remove a directory tree (each name gone is final: resuming removes the rest). A symbolic
    link is removed itself, never what it points to."""
    if os.path.islink(path):
        unlink_durably(path)
        return

    def failed(function, name, exc_info):
        err = exc_info[1]
        if isinstance(err, FileNotFoundError):
            return
        raise os_problem(name, err) if isinstance(err, OSError) else err

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=failed)
        fsync_dir(path.parent)
