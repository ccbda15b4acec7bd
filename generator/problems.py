"""Problems as values: collected across a whole run and printed as file:line:col: path: message."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    col: int
    path: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.path}: {self.severity}: {self.message}"


@dataclass
class Problems:
    items: list[Problem] = field(default_factory=list)

    def add(self, where, message: str) -> None:
        """Record a problem at `where`, anything with file, line, col and path attributes."""
        self.items.append(Problem(where.file, where.line, where.col, where.path, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def sorted(self) -> list[Problem]:
        return sorted(set(self.items))


class CompileFailed(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems
