"""A segment file read through a window of a few MiB with pread, instead of a memory map: a file
truncated underneath the reader (a follower's truncation, `recover`) shows up as a short read,
and so as a TruncatedError at that byte, never as SIGBUS. Resident memory is about one window or
the largest batch read whole, whichever is more; nothing larger than what the file holds is ever
allocated, whatever a size field claims."""
from __future__ import annotations

import os
from pathlib import Path

from .safeio import open_regular, read_at

WINDOW_BYTES = 4 << 20  # large enough that a read costs little per batch, small enough to stay in cache


class WindowedFile:
    """`with WindowedFile(path) as f:` f.load(position) reads a window; f.size is the file's size
    when opened, lowered when a read finds the file shorter. Regular files only (safeio)."""

    def __init__(self, path: str | Path, window: int | None = None):
        self.path = path
        self.window = window or WINDOW_BYTES
        self.size = 0
        self._file = None

    def __enter__(self) -> "WindowedFile":
        self._file = open_regular(self.path)
        self.size = os.fstat(self._file.fileno()).st_size
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def load(self, position: int, need: int = 0) -> bytes:
        """The file's bytes from `position`: a window, or `need` bytes when that is more, fewer
        only at the end of the file."""
        return self.read(position, max(self.window, need))

    def read(self, position: int, n: int) -> bytes:
        """Up to `n` bytes at `position`, never past the end of the file. A short read means the
        file shrank since it was opened: the size follows, so that readers stop there."""
        want = min(n, self.size - position)
        if want <= 0:
            return b""
        data = read_at(self._file, position, want, self.path)
        if len(data) < want:
            self.size = position + len(data)
        return data
