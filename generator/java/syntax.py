"""Java's spelling of the expressions the translator resolves: every number a long, so that
arithmetic keeps the 64 bits the other targets keep; integer division and remainder rounding
down, as Kaitai's do."""
from __future__ import annotations

import json

from ..pyexpr import PythonSyntax

OPERATORS = {"and": "&&", "or": "||"}


class JavaSyntax(PythonSyntax):
    def literal(self, value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return f"{value}L"
        return json.dumps(value)  # a string: JSON's escapes are Java's for what schemas hold

    def unary(self, op: str, inner: str) -> str:
        return f"(!{inner})" if op == "not" else f"({op}{inner})"

    def binary(self, op: str, left: str, right: str, floating: bool = False) -> str:
        if op == "/" and not floating:
            return f"Math.floorDiv({left}, {right})"
        if op == "%" and not floating:
            return f"Math.floorMod({left}, {right})"
        return f"({left} {OPERATORS.get(op, op)} {right})"

    def ternary(self, cond: str, then: str, other: str) -> str:
        return f"({cond} ? {then} : {other})"

    def not_any_of(self, value: str, options: list[str]) -> str:
        return "!(" + " || ".join(f"{value} == {o}" for o in options) + ")"

    def index(self, base: str, idx: str) -> str:
        return f"{base}[(int) {idx}]"

    def length(self, base: str) -> str:
        return f"((long) {base}.length)"

    def last(self, base: str) -> str:
        return f"{base}[{base}.length - 1]"

    def to_int(self, base: str) -> str:
        return f"((long) {base})"
