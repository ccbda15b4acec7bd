"""Write outputs only where they changed, delete stale ones, or check freshness with a diff."""
from __future__ import annotations

import difflib
from pathlib import Path

CODE_SUFFIXES = (".py", ".pyx", ".java")
DOC_SUFFIXES = (".md", ".svg")


def _managed(out_dir: Path, suffixes: tuple[str, ...]) -> set[str]:
    """Files under out_dir (subfolders too) that a run owns, as relative POSIX paths."""
    if not out_dir.is_dir():
        return set()
    return {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*")
            if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts}


def stale(out_dir: Path, outputs: dict[str, str], suffixes: tuple[str, ...] = CODE_SUFFIXES) -> list[str]:
    """Unified diffs between what is on disk and what would be written."""
    diffs = []
    existing = _managed(out_dir, suffixes)
    for name in sorted(set(outputs) | existing):
        old = (out_dir / name).read_text() if name in existing else ""
        new = outputs.get(name, "")
        if old != new:
            diffs.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                f"a/{out_dir.name}/{name}", f"b/{out_dir.name}/{name}")))
    return diffs


def write(out_dir: Path, outputs: dict[str, str], suffixes: tuple[str, ...] = CODE_SUFFIXES) -> list[str]:
    """Write changed files and remove files no schema produces; returns what changed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in sorted(outputs.items()):
        path = out_dir / name
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(text)
            tmp.replace(path)
            changed.append(name)
    for name in sorted(_managed(out_dir, suffixes) - set(outputs)):
        (out_dir / name).unlink()
        changed.append(f"{name} (deleted)")
    return changed
