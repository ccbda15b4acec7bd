"""Inline a type's `_read` or `_pack` body into a parent's repeat loop, saving a call per element.

The body is the planner's own output: its assigned names get a unique suffix, `self` becomes
the loop's item, `_parent` the object being read and `cls` the child's class; `buf`, `pos` and
`end` are shared on purpose, since the child advances the parent's position.
"""
from __future__ import annotations

import ast
import re

SHARED = {"buf", "pos", "end"}


def _tree(lines: list[str]) -> ast.AST:
    return ast.parse("def _body():\n" + "\n".join("    " + line for line in lines))


def rebinds(lines: list[str], name: str) -> bool:
    """Whether the body binds `name` to a new object (`x += ...` on a bytearray does not)."""
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
               for node in ast.walk(_tree(lines)))


def assigned_names(lines: list[str]) -> set[str]:
    names = set()
    for node in ast.walk(_tree(lines)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names - SHARED


def _renamed(lines: list[str], rename: dict[str, str]) -> list[str]:
    pattern = re.compile(r"(?<![\w.'\"])(" + "|".join(sorted(map(re.escape, rename), key=len, reverse=True)) + r")\b")
    return [pattern.sub(lambda m: rename[m.group(1)], line) for line in lines]


def inline_pack(lines: list[str], params: list[str], values: str, suffix: str) -> list[str] | None:
    """A `_pack` body to paste into a loop, its parameters unpacked from the tuple `values`;
    None when the body rebinds `out` (a varint length prefix) and must stay a call."""
    if rebinds(lines, "out"):
        return None
    names = assigned_names(lines) - {"out"}
    rename = {name: f"{name}{suffix}" for name in names | set(params)}
    head = f"{', '.join(rename[p] for p in params)}{',' if len(params) == 1 else ''} = {values}"
    return [head] + _renamed(lines, rename)


def inline_read(lines: list[str], item: str, parent: str, cls: str, suffix: str) -> list[str]:
    """The body without its final `return self, pos`, renamed for its place in the loop."""
    if not lines or lines[-1] != "return self, pos" or any(line.strip().startswith("return") for line in lines[:-1]):
        raise ValueError("only straight-line read bodies can be inlined")
    body = lines[:-1]
    rename = {name: f"{name}{suffix}" for name in assigned_names(body) if name != "self"}
    rename.update({"self": item, "_parent": parent, "cls": cls})
    lines = _renamed(body, rename)
    # inside the parent's own _read, the parent's parent is its `_parent` argument
    if parent == "self":
        lines = [re.sub(r"(?<![\w.])self\._parent\b", "_parent", line) for line in lines]
    return lines
