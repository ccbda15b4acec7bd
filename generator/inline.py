"""Inline a type's `_read` body into a parent's repeat loop, saving a call per element.

The body is the planner's own output: its assigned names get a unique suffix, `self` becomes
the loop's item, `_parent` the object being read and `cls` the child's class; `buf`, `pos` and
`end` are shared on purpose, since the child advances the parent's position.
"""
from __future__ import annotations

import ast
import re

SHARED = {"buf", "pos", "end"}


def assigned_names(lines: list[str]) -> set[str]:
    source = "def _body(cls, buf, pos, end, _parent):\n" + "\n".join("    " + line for line in lines)
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names - SHARED


def inline_read(lines: list[str], item: str, parent: str, cls: str, suffix: str) -> list[str]:
    """The body without its final `return self, pos`, renamed for its place in the loop."""
    if not lines or lines[-1] != "return self, pos" or any(line.strip().startswith("return") for line in lines[:-1]):
        raise ValueError("only straight-line read bodies can be inlined")
    body = lines[:-1]
    rename = {name: f"{name}{suffix}" for name in assigned_names(body) if name != "self"}
    rename.update({"self": item, "_parent": parent, "cls": cls})
    pattern = re.compile(r"(?<![\w.'\"])(" + "|".join(sorted(map(re.escape, rename), key=len, reverse=True)) + r")\b")
    return [pattern.sub(lambda m: rename[m.group(1)], line) for line in body]
