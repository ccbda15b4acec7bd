"""Read-only memory maps of segment files that stay small in memory: as a scan moves on, the
pages behind it are handed back to the kernel (they stay in the page cache), so the resident
memory of a scan does not grow with the file."""
from __future__ import annotations

import mmap
from pathlib import Path

RELEASE_EVERY = 4 << 20


class Mapped:
    """`with Mapped(path) as m:` m.buf is the file's bytes (b"" for an empty file); call
    m.done_up_to(pos) as the scan passes `pos`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.buf = b""
        self._file = None
        self._released = 0

    def __enter__(self) -> "Mapped":
        self._file = open(self.path, "rb")
        if self._file.seek(0, 2):
            self.buf = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        return self

    def done_up_to(self, pos: int) -> None:
        if isinstance(self.buf, mmap.mmap) and pos - self._released >= RELEASE_EVERY:
            upto = pos - pos % mmap.PAGESIZE
            self.buf.madvise(mmap.MADV_DONTNEED, self._released, upto - self._released)
            self._released = upto

    def __exit__(self, *exc) -> None:
        if isinstance(self.buf, mmap.mmap):
            self.buf.close()
        self._file.close()
