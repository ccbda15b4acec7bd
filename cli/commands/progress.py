"""The progress display of long commands: bytes done of bytes to read, on stderr."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def progress(total_bytes: int, what: str, beside_output: bool = False):
    """A byte-count progress bar on stderr; silent unless stderr is a terminal, and with
    `beside_output`, also while stdout is one (the lines printed show the progress there)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    quiet = not console.is_terminal or (beside_output and sys.stdout.isatty())
    with Progress(f"[bold]{what}", BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=console,
                  transient=True, disable=quiet) as bar:
        task = bar.add_task(what, total=total_bytes)
        yield lambda n: bar.advance(task, n)


def size_of(path: Path) -> int:
    """A regular file's size; 0 for anything else, which the step that reads it reports."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def partitions_size(partitions) -> int:
    return sum(size_of(s.log) for part in partitions for s in part.segments)


def advancing(partitions, advance):
    """The partitions, the progress advanced past each as the next is asked for."""
    for part in partitions:
        yield part
        advance(partitions_size([part]))
