"""The Kaitai expression subset: tokenizer and precedence-climbing parser to an AST.

Supported: integer, string and boolean literals; names; `_parent`, `_root`, `_io`, `_`, `_index`;
attribute access; indexing; calls (only where a processor is named); unary - ~ not; binary
* / % + - << >> & ^ | and comparisons; `and`, `or`; the ternary `a ? b : c`; enum references
`enum::value`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class ExprSyntaxError(Exception):
    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.column = column


@dataclass(frozen=True, eq=False)
class Expr:
    pos: int  # character offset inside the expression text


@dataclass(frozen=True, eq=False)
class Int(Expr):
    value: int


@dataclass(frozen=True, eq=False)
class Str(Expr):
    value: str


@dataclass(frozen=True, eq=False)
class Bool(Expr):
    value: bool


@dataclass(frozen=True, eq=False)
class Name(Expr):
    name: str


@dataclass(frozen=True, eq=False)
class EnumRef(Expr):
    enum: str  # may contain "::" for a type-qualified enum
    value: str


@dataclass(frozen=True, eq=False)
class Attribute(Expr):
    obj: Expr
    name: str


@dataclass(frozen=True, eq=False)
class Index(Expr):
    obj: Expr
    index: Expr


@dataclass(frozen=True, eq=False)
class Call(Expr):
    func: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Unary(Expr):
    op: str
    operand: Expr


@dataclass(frozen=True, eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>0x[0-9a-fA-F_]+|0b[01_]+|0o[0-7_]+|[0-9][0-9_]*)
  | (?P<str>"(?:[^"\\]|\\.)*"|'[^']*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>::|<<|>>|<=|>=|==|!=|[-+*/%&|^~<>?:()\[\].,])
""", re.VERBOSE)

# Binary operators by binding power; comparisons bind looser than bit operators, as in Kaitai.
_BINARY = {
    "or": 1, "and": 2,
    "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
    "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


def tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ExprSyntaxError(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup
        if kind != "ws":
            tokens.append((kind, m.group(), pos))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self):
        return self.tokens[self.i]

    def take(self):
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str):
        kind, text, pos = self.take()
        if text != value or kind not in ("op", "name"):
            raise ExprSyntaxError(f"expected {value!r}, found {text or 'end of expression'!r}", pos)

    def parse(self) -> Expr:
        e = self.ternary()
        kind, text, pos = self.peek()
        if kind != "end":
            raise ExprSyntaxError(f"unexpected {text!r}", pos)
        return e

    def ternary(self) -> Expr:
        cond = self.binary(1)
        kind, text, pos = self.peek()
        if text == "?" and kind == "op":
            self.take()
            then = self.ternary()
            self.expect(":")
            other = self.ternary()
            return Ternary(pos, cond, then, other)
        return cond

    def binary(self, min_power: int) -> Expr:
        left = self.unary()
        while True:
            kind, text, pos = self.peek()
            power = _BINARY.get(text) if kind in ("op", "name") else None
            if power is None or power < min_power:
                return left
            self.take()
            right = self.binary(power + 1)
            left = Binary(pos, text, left, right)

    def unary(self) -> Expr:
        kind, text, pos = self.peek()
        if kind == "name" and text == "not":
            self.take()
            return Unary(pos, "not", self.binary(3))
        if kind == "op" and text in ("-", "~", "+"):
            self.take()
            operand = self.unary()
            return operand if text == "+" else Unary(pos, text, operand)
        return self.postfix(self.atom())

    def atom(self) -> Expr:
        kind, text, pos = self.take()
        if kind == "num":
            return Int(pos, int(text.replace("_", ""), 0))
        if kind == "str":
            body = text[1:-1]
            if text[0] == '"':
                body = body.encode("utf-8").decode("unicode_escape")
            return Str(pos, body)
        if kind == "name":
            if text in ("true", "false"):
                return Bool(pos, text == "true")
            parts = [text]
            while self.peek()[1] == "::":
                self.take()
                k2, t2, p2 = self.take()
                if k2 != "name":
                    raise ExprSyntaxError("expected a name after '::'", p2)
                parts.append(t2)
            if len(parts) > 1:
                return EnumRef(pos, "::".join(parts[:-1]), parts[-1])
            return Name(pos, text)
        if text == "(":
            e = self.ternary()
            self.expect(")")
            return e
        raise ExprSyntaxError(f"unexpected {text or 'end of expression'!r}", pos)

    def postfix(self, e: Expr) -> Expr:
        while True:
            kind, text, pos = self.peek()
            if kind != "op":
                return e
            if text == ".":
                self.take()
                k2, name, p2 = self.take()
                if k2 != "name":
                    raise ExprSyntaxError("expected a name after '.'", p2)
                e = Attribute(pos, e, name)
            elif text == "[":
                self.take()
                idx = self.ternary()
                self.expect("]")
                e = Index(pos, e, idx)
            elif text == "(":
                self.take()
                args = []
                if self.peek()[1] != ")":
                    args.append(self.ternary())
                    while self.peek()[1] == ",":
                        self.take()
                        args.append(self.ternary())
                self.expect(")")
                e = Call(pos, e, tuple(args))
            else:
                return e


def names_in(e: Expr):
    """Every Name node of an expression."""
    if isinstance(e, Name):
        yield e
    for value in vars(e).values():
        if isinstance(value, Expr):
            yield from names_in(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Expr):
                    yield from names_in(item)


def parse(text) -> Expr:
    """Parse an expression; YAML scalars that are ints or bools are accepted as literals."""
    if isinstance(text, bool):
        return Bool(0, text)
    if isinstance(text, int):
        return Int(0, text)
    return _Parser(str(text)).parse()


def same_expr(a: Expr, b: Expr) -> bool:
    """Whether two expressions are the same tree (wherever they were written)."""
    if type(a) is not type(b):
        return False
    for name, x in vars(a).items():
        y = getattr(b, name)
        if name == "pos":
            continue
        if isinstance(x, Expr):
            if not same_expr(x, y):
                return False
        elif isinstance(x, tuple):
            if len(x) != len(y) or not all(same_expr(p, q) if isinstance(p, Expr) else p == q for p, q in zip(x, y)):
                return False
        elif x != y:
            return False
    return True
