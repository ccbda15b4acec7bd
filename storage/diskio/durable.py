"""File operations that survive a crash or a power loss in the order they were made: data
flushed before the rename that publishes it, directories flushed after the renames and unlinks
in them, and kept files created under names that never replace an existing file. Failures of
the operating system become FileProblems naming the file."""
from __future__ import annotations

import os
from pathlib import Path

from .files import fsync_directory, fsync_file as flush_file, remove_quietly, write_atomically, write_new_file
from .safeio import FileProblem, os_problem


def fsync_file(path: str | Path) -> None:
    try:
        flush_file(path)
    except OSError as err:
        raise os_problem(path, err) from None


def fsync_dir(path: str | Path) -> None:
    """Make the names in a directory (renames, creations, removals) durable."""
    try:
        fsync_directory(path)
    except OSError as err:
        raise os_problem(path, err) from None


def fsync_tree(root: Path) -> None:
    """Every file and directory below `root`, deepest first, then `root`."""
    for top, dirs, files in os.walk(root, topdown=False):
        for name in files:
            fsync_file(Path(top) / name)
        fsync_dir(top)


def write_durably(path: str | Path, data: bytes) -> None:
    """Replace `path` by `data` all at once, as storage.diskio.files.write_atomically does (a flushed
    `<path>.tmp` renamed over it, the directory flushed; a failure leaves the old file and no
    temporary one), its failures FileProblems naming the file."""
    try:
        write_atomically(path, data)
    except OSError as err:
        raise os_problem(path, err) from None


def create_kept(path: str | Path, data: bytes) -> Path:
    """Keep `data` in a new file named `path`, or `path`-2, -3... when that name is taken: an
    existing file is never replaced. Flushed, with its directory, before this returns."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.kafkacodec-tmp")  # linked to the first free name
    try:
        write_new_file(tmp, data, durable=True)
    except OSError as err:
        remove_quietly(tmp)
        raise os_problem(tmp, err) from None
    try:
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
    try:
        if os.path.lexists(dst):
            raise FileProblem(dst, f"exists; {src} was not moved there")
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
    import shutil

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
