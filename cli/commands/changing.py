"""What every command that changes a log dir does around its work: take the log dir's lock,
finish or roll back what an interrupted command left (saying so), and turn the storage layer's
typed errors into `error: ...` and an exit status."""
from __future__ import annotations

import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

import click

from .terminal import say, shown


@contextmanager
def changing(roots: list[Path], command: str, read_only_ok: tuple[Path, ...] = (),
             on_resumed: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the lock of each log dir in `roots` and resume what their journals describe (each
    thing done to `on_resumed`, else to stderr). A log dir in `read_only_ok` (one only read,
    such as the source of `clean --out`) may be on a read-only file system: then nothing can
    change it and no lock is needed."""
    from kafkacodec.storage.change import unfinished
    from kafkacodec.storage.change.lock import holding
    from kafkacodec.storage.diskio.safeio import FileProblem

    with ExitStack() as stack:
        for root in dict.fromkeys(roots):
            try:
                stack.enter_context(holding(root, command))
            except FileProblem as err:
                if root in read_only_ok and _cannot_write(err):
                    continue
                raise
            for line in unfinished.resume(root):
                if on_resumed is not None:
                    on_resumed(line)
                else:
                    say(f"resumed: {line}", err=True)
        yield


def hold(roots: list[Path], command: str) -> None:
    """`changing` until the running command ends: for a command that changes files from here on.
    A busy log dir, or an interrupted operation that cannot be finished, ends it."""
    from kafkacodec.runtime.errors import KafkaCodecError

    try:
        click.get_current_context().with_resource(changing(roots, command))
    except KafkaCodecError as err:
        fail(err)


def _cannot_write(err) -> bool:
    return err.message in ("the file system is read-only", "permission denied")


def fail(err: Exception, hint: str = "") -> None:
    """Report a typed error and exit: 1 for damage and for what could not be finished, 2 for a
    busy log dir and for files the system will not let us use (no space, read-only, permissions)."""
    from kafkacodec.storage.change.lock import LogDirBusy
    from kafkacodec.storage.diskio.safeio import FileProblem

    click.echo(shown(f"error: {err}") + hint, err=True)  # the error may quote names read from files; the hint is ours
    sys.exit(2 if isinstance(err, (LogDirBusy, FileProblem)) else 1)
