"""Write outputs only where they changed, delete stale ones, or check freshness with a diff."""
from __future__ import annotations

import difflib
from pathlib import Path

MANAGED_SUFFIXES = (".py",)


def stale(out_dir: Path, outputs: dict[str, str]) -> list[str]:
    """Unified diffs between what is on disk and what would be written."""
    diffs = []
    existing = {p.name for p in out_dir.glob("*") if p.is_file() and p.suffix in MANAGED_SUFFIXES}
    for name in sorted(set(outputs) | existing):
        old = (out_dir / name).read_text() if name in existing else ""
        new = outputs.get(name, "")
        if old != new:
            diffs.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                f"a/{out_dir.name}/{name}", f"b/{out_dir.name}/{name}")))
    return diffs


def write(out_dir: Path, outputs: dict[str, str]) -> list[str]:
    """Write changed files and remove files no schema produces; returns what changed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in sorted(outputs.items()):
        path = out_dir / name
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(text)
            tmp.replace(path)
            changed.append(name)
    for path in sorted(out_dir.glob("*")):
        if path.is_file() and path.suffix in MANAGED_SUFFIXES and path.name not in outputs:
            path.unlink()
            changed.append(f"{path.name} (deleted)")
    return changed
