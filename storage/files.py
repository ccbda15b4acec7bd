"""Whole-file writes that a reader never sees half done."""
from __future__ import annotations

from pathlib import Path


def write_atomically(path: str | Path, data: bytes | str) -> None:
    """Write `<path>.tmp`, then rename it over `path` (a rename within a directory is atomic)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    tmp.replace(path)
