"""An indenting line buffer for method bodies, and module-level constants shared across classes."""
from __future__ import annotations

from contextlib import contextmanager


class Code:
    def __init__(self, indent: int = 0):
        self.lines: list[str] = []
        self.level = indent

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.level + line)

    @contextmanager
    def block(self, header: str, end: str | None = None):
        """Lines indented under `header`; `end` closes the block (a brace) where the language
        has one."""
        self(header)
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1
            if end is not None:
                self(end)


class Constants:
    """Module-level constants, named in order of first use so output is deterministic."""

    def __init__(self):
        self.structs: dict[str, str] = {}
        self.tables: dict[str, str] = {}

    def struct(self, fmt: str) -> str:
        if fmt not in self.structs:
            self.structs[fmt] = f"_S{len(self.structs)}"
        return self.structs[fmt]

    def table(self, text: str) -> str:
        if text not in self.tables:
            self.tables[text] = f"_T{len(self.tables)}"
        return self.tables[text]
