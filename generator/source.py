"""Load .ksy YAML keeping line/column marks and YAML paths; duplicate keys are problems."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from .problems import Problems


@dataclass
class Loc:
    file: str
    line: int  # 1-based
    col: int  # 1-based
    path: str  # YAML path such as /types/record/seq/3/size

    def child(self, key, line: int | None = None, col: int | None = None) -> "Loc":
        return Loc(self.file, self.line if line is None else line,
                   self.col if col is None else col, f"{self.path.rstrip('/')}/{key}")


@dataclass
class Y:
    """A YAML node: `value` is a dict of str -> Y, a list of Y, or a scalar."""
    value: Any
    loc: Loc

    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def plain(self):
        """The node as plain Python data, marks dropped."""
        if self.is_map():
            return {k: v.plain() for k, v in self.value.items()}
        if self.is_list():
            return [v.plain() for v in self.value]
        return self.value


_constructor = SafeConstructor()


def _convert(node, loc: Loc, problems: Problems) -> Y:
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Y] = {}
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode.value)
            kloc = loc.child(key, knode.start_mark.line + 1, knode.start_mark.column + 1)
            if key in out:
                problems.add(kloc, f"duplicate key {key!r}")
                continue
            child = _convert(vnode, kloc, problems)
            child.loc = Loc(kloc.file, vnode.start_mark.line + 1, vnode.start_mark.column + 1, kloc.path)
            out[str(key)] = child
        return Y(out, loc)
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            iloc = loc.child(i, item.start_mark.line + 1, item.start_mark.column + 1)
            items.append(_convert(item, iloc, problems))
        return Y(items, loc)
    return Y(_constructor.construct_object(node), loc)


def load(text: str, file: str, problems: Problems) -> Y | None:
    """Parse YAML text into a marked tree, or add a problem and return None."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problems.add(Loc(file, line, col, "/"), f"invalid YAML: {e.problem or e}")
        return None
    if node is None:
        problems.add(Loc(file, 1, 1, "/"), "empty schema")
        return None
    root = Loc(file, node.start_mark.line + 1, node.start_mark.column + 1, "/")
    return _convert(node, root, problems)
