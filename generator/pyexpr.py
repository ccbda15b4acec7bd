"""Translate Kaitai expressions to a target's source with static types, reporting unknown names.

The translator knows what each name means in the type where the expression stands: a field
(read into a local, or an attribute of `self`), a param, an instance, `_parent`, `_io`, `_`, `_index`,
or an enum member. Every subexpression is parenthesised, so precedence never changes meaning.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import expr as ex
from .model import Attr, EnumSpec, Instance, RefKind, TypeRef, TypeSpec
from .program import Program
from .source import Loc


@dataclass(frozen=True)
class T:
    kind: str  # int bool float str bytes user intrinsic array enum any
    spec: TypeSpec | None = None
    elem: "T | None" = None
    enum: EnumSpec | None = None


INT, BOOL, ANY = T("int"), T("bool"), T("any")
WRITER_FIELD_TYPES = {"number": INT, "list": T("array", elem=ANY), "object": ANY}  # a -record-writer's fields


def access(attr: Attr) -> str:
    """Attribute name to use outside the reader: lazy fields load through their property."""
    return attr.id if attr.lazy else attr.storage


@dataclass
class Scope:
    spec: TypeSpec
    obj: str = "self"
    locals: dict[str, str] = field(default_factory=dict)
    underscore: tuple[str, T] | None = None
    index: str | None = None
    io: tuple[str, str, str] | None = None  # names of (pos, start, end) while reading
    parent: str | None = None  # a local holding `obj`'s parent (while reading: the `_parent` argument)
    # what the code translated in this scope needs besides locals: OBJECT (attributes of `obj`,
    # or its parent through it), IO_START (the name of the read's start position); shared with
    # the scopes made inside it
    uses: set[str] = field(default_factory=set)
    # locals holding the enclosing objects, nearest first (`_parent`, `_parent._parent`...), and
    # how a backend reads a field of an object it knows (giving None for others: an attribute)
    ancestors: tuple[str, ...] = ()
    ancestor_field: Callable[[str, TypeSpec, Attr], str | None] | None = None
    # names the code has besides the type's own (a record view's params): name -> (code, type)
    names: dict[str, tuple[str, T]] = field(default_factory=dict)


OBJECT, IO_START = "object", "io start"
ENCLOSING = "enclosing"  # `_parent` or `_root`: the code needs the objects around its own


MAX_INLINE_DEPTH = 4


class PythonSyntax:
    """How a target language spells what the translator resolved: Python's (and Cython's, which
    reads Python expressions). A target with other spelling overrides these; the translator's
    name resolution and types stay one."""

    def literal(self, value) -> str:
        return repr(value)

    def member(self, obj: str, name: str) -> str:
        return f"{obj}.{name}"

    def group(self, text: str) -> str:
        return f"({text})"

    def index(self, base: str, idx: str) -> str:
        return f"{base}[{idx}]"

    def unary(self, op: str, inner: str) -> str:
        return f"(not {inner})" if op == "not" else f"({op}{inner})"

    def binary(self, op: str, left: str, right: str, floating: bool = False) -> str:
        """`op` as the schema writes it (and, or, comparisons, arithmetic, bit operators); `/`
        of integers divides rounding down, as Kaitai's does."""
        return f"({left} {'//' if op == '/' and not floating else op} {right})"

    def concat(self, left: str, right: str) -> str:
        return f"({left} + {right})"

    def ternary(self, cond: str, then: str, other: str) -> str:
        return f"({then} if {cond} else {other})"

    def not_any_of(self, value: str, options: list[str]) -> str:
        """Whether `value` equals none of `options` (`valid: any-of`)."""
        return f"{value} not in ({', '.join(options)},)"

    def length(self, base: str) -> str:
        return f"len({base})"

    def first(self, base: str) -> str:
        return f"{base}[0]"

    def last(self, base: str) -> str:
        return f"{base}[-1]"

    def extreme(self, name: str, base: str) -> str:
        """`min` or `max` of an array."""
        return f"{name}({base})"

    def to_int(self, base: str) -> str:
        return f"int({base})"


class Translator:
    """Instances used inside other expressions are inlined (they are pure), so comparisons with
    enum members compare plain integers instead of building enum objects at run time."""

    def __init__(self, program: Program, problems, syntax: PythonSyntax | None = None):
        self.program = program
        self.problems = problems
        self.syntax = syntax or PythonSyntax()
        self.depth = 0

    # -- types of model elements ----------------------------------------------------------
    def ref_type(self, ref: TypeRef) -> T:
        if ref.kind == RefKind.PRIM:
            return T("float") if ref.prim.startswith("f") else INT
        if ref.kind == RefKind.BYTES:
            return T("bytes")
        if ref.kind == RefKind.STR:
            return T("str")
        if ref.kind == RefKind.USER:
            spec = self.program.resolved.get(ref)
            if spec is None:
                return ANY
            return T("intrinsic", spec) if spec.intrinsic else T("user", spec)
        if ref.kind == RefKind.SWITCH:
            kinds = {self.ref_type(t) for _, t in ref.cases}
            return kinds.pop() if len(kinds) == 1 else ANY
        return ANY

    def attr_type(self, attr: Attr) -> T:
        base = self.ref_type(attr.type)
        if attr in self.program.enum_of:
            base = T("enum", enum=self.program.enum_of[attr])
        return T("array", elem=base) if attr.repeat else base

    def instance_type(self, inst: Instance, spec: TypeSpec) -> T:
        if inst in self.program.enum_of:
            return T("enum", enum=self.program.enum_of[inst])
        try:
            _, t = self._tr(inst.value, Scope(spec), None)
        except _Fail:
            return ANY
        return t

    # -- translation ---------------------------------------------------------------------
    def translate(self, e: ex.Expr, scope: Scope, loc: Loc) -> str:
        """Python source for `e`, or a placeholder after reporting a problem."""
        try:
            return self._tr(e, scope, loc)[0]
        except _Fail:
            return "None"

    def typed(self, e: ex.Expr, scope: Scope, loc: Loc) -> tuple[str, T]:
        try:
            return self._tr(e, scope, loc)
        except _Fail:
            return "None", ANY

    def _fail(self, loc: Loc | None, e: ex.Expr, message: str):
        if loc is not None:
            self.problems.add(loc, f"{message} (at character {e.pos + 1} of the expression)")
        raise _Fail()

    def _member(self, spec: TypeSpec, name: str, obj: str, scope: Scope | None, via: Scope | None = None):
        known = via or scope  # what the backend knows of the enclosing objects
        for param in spec.params:  # held in a local where the code has it as an argument
            if param.id == name:
                if scope is not None and name in scope.locals:
                    return scope.locals[name], INT
                if scope is not None:
                    scope.uses.add(OBJECT)
                return self.syntax.member(obj, name), INT
        for attr in spec.seq:
            if attr.id == name:
                if scope is not None and name in scope.locals:
                    return scope.locals[name], self.attr_type(attr)
                if known is not None and known.ancestor_field is not None:
                    read = known.ancestor_field(obj, spec, attr)  # None: not an object it knows
                    if read is not None:
                        return read, self.attr_type(attr)
                if scope is not None:
                    scope.uses.add(OBJECT)
                return self.syntax.member(obj, access(attr)), self.attr_type(attr)
        for inst in spec.instances:
            if inst.id == name:
                if self.depth >= MAX_INLINE_DEPTH:
                    if scope is not None:
                        scope.uses.add(OBJECT)
                    return self.syntax.member(obj, name), self.instance_type(inst, spec)
                self.depth += 1
                # the same object as the scope's: its fields may be in locals already
                same = scope is not None and obj == scope.obj
                inner = Scope(spec, obj=obj, locals=scope.locals if same else {}, parent=scope.parent if same else None,
                              uses=scope.uses if scope is not None else set())
                if known is not None:
                    inner.ancestor_field = known.ancestor_field
                    if same:
                        inner.ancestors = known.ancestors
                    elif obj in known.ancestors:  # an enclosing object's own parents are further up the chain
                        inner.ancestors = known.ancestors[known.ancestors.index(obj) + 1:]
                try:
                    text, t = self._tr(inst.value, inner, None)
                finally:
                    self.depth -= 1
                if inst in self.program.enum_of:
                    t = T("enum", enum=self.program.enum_of[inst])
                return self.syntax.group(text), t
        return None

    def _tr(self, e: ex.Expr, scope: Scope, loc: Loc | None) -> tuple[str, T]:
        syntax = self.syntax
        if isinstance(e, ex.Int):
            return syntax.literal(e.value), INT
        if isinstance(e, ex.Bool):
            return syntax.literal(e.value), BOOL
        if isinstance(e, ex.Str):
            return syntax.literal(e.value), T("str")
        if isinstance(e, ex.Name):
            return self._name(e, scope, loc)
        if isinstance(e, ex.EnumRef):
            enum = self.program.lookup_enum(e.enum, scope.spec)
            if enum is None:
                self._fail(loc, e, f"unknown enum {e.enum!r}")
            member = next((v for v in enum.values if v.id == e.value), None)
            if member is None:
                self._fail(loc, e, f"enum {e.enum!r} has no value {e.value!r}")
            return syntax.literal(member.value), T("enum", enum=enum)  # IntEnum members equal their values
        if isinstance(e, ex.Attribute):
            return self._attribute(e, scope, loc)
        if isinstance(e, ex.Index):
            base, bt = self._tr(e.obj, scope, loc)
            idx, _ = self._tr(e.index, scope, loc)
            if bt.kind == "array":
                return syntax.index(base, idx), bt.elem or ANY
            if bt.kind == "bytes":
                return syntax.index(base, idx), INT
            if bt.kind == "any":
                return syntax.index(base, idx), ANY
            self._fail(loc, e, "only arrays and byte strings can be indexed")
        if isinstance(e, ex.Unary):
            inner, it = self._tr(e.operand, scope, loc)
            if e.op == "not":
                return syntax.unary("not", inner), BOOL
            return syntax.unary(e.op, inner), it if it.kind in ("int", "float") else INT
        if isinstance(e, ex.Binary):
            left, lt = self._tr(e.left, scope, loc)
            right, rt = self._tr(e.right, scope, loc)
            if e.op in ("and", "or", "==", "!=", "<", "<=", ">", ">="):
                return syntax.binary(e.op, left, right), BOOL
            if e.op == "+" and lt.kind in ("str", "bytes"):
                return syntax.concat(left, right), lt
            floating = "float" in (lt.kind, rt.kind)
            return syntax.binary(e.op, left, right, floating), T("float") if floating else INT
        if isinstance(e, ex.Ternary):
            cond, _ = self._tr(e.cond, scope, loc)
            then, tt = self._tr(e.then, scope, loc)
            other, ot = self._tr(e.other, scope, loc)
            return syntax.ternary(cond, then, other), tt if tt == ot else (tt if ot.kind == "enum" else ot)
        if isinstance(e, ex.Call):
            self._fail(loc, e, "calls are allowed only in 'process'")
        self._fail(loc, e, "unsupported expression")

    def _name(self, e: ex.Name, scope: Scope, loc):
        n = e.name
        if n == "_parent":
            scope.uses.add(ENCLOSING)
            parent = self.program.parent_type(scope.spec)
            if scope.ancestors:
                return scope.ancestors[0], T("user", parent) if parent else ANY
            if scope.parent is None:
                scope.uses.add(OBJECT)
            return scope.parent or self.syntax.member(scope.obj, "_parent"), T("user", parent) if parent else ANY
        if n == "_root":
            scope.uses |= {OBJECT, ENCLOSING}
            return self.syntax.member(scope.obj, "_root"), ANY
        if n == "_":
            if scope.underscore is None:
                self._fail(loc, e, "'_' is only defined inside repeat-until")
            return scope.underscore
        if n == "_index":
            if scope.index is None:
                self._fail(loc, e, "'_index' is only defined inside a repeat")
            return scope.index, INT
        if n == "_io":
            self._fail(loc, e, "'_io' must be followed by .pos, .size or .eof")
        found = scope.names.get(n) or self._member(scope.spec, n, scope.obj, scope)
        if found is None:
            self._fail(loc, e, f"unknown name {n!r} in type {scope.spec.name!r}")
        return found

    def _attribute(self, e: ex.Attribute, scope: Scope, loc):
        if isinstance(e.obj, ex.Name) and e.obj.name == "_io":
            if scope.io is None:
                self._fail(loc, e, "'_io' is only available while reading")
            pos, start, end = scope.io
            if e.name == "pos":
                scope.uses.add(IO_START)
                return self.syntax.binary("-", pos, start), INT
            if e.name == "size":
                scope.uses.add(IO_START)
                return self.syntax.binary("-", end, start), INT
            if e.name == "eof":
                return self.syntax.binary(">=", pos, end), BOOL
            self._fail(loc, e, f"'_io.{e.name}' is not supported")
        base, bt = self._tr(e.obj, scope, loc)
        name = e.name
        if name == "_parent":
            scope.uses.add(ENCLOSING)
            parent = self.program.parent_type(bt.spec) if bt.kind == "user" else None
            up = scope.ancestors.index(base) + 1 if base in scope.ancestors else 0
            if 0 < up < len(scope.ancestors):
                return scope.ancestors[up], T("user", parent) if parent else ANY
            return self.syntax.member(base, "_parent"), T("user", parent) if parent else ANY
        if bt.kind == "intrinsic":
            if name == "value":
                return base, INT
            self._fail(loc, e, f"only '.value' of intrinsic type {bt.spec.name!r} is available")
        if bt.kind == "user":
            found = self._member(bt.spec, name, base, None, scope)
            if found is None:
                self._fail(loc, e, f"type {bt.spec.name!r} has no field or instance {name!r}")
            return found
        if bt.kind == "array":
            if name in ("size", "length"):
                return self.syntax.length(base), INT
            if name == "first":
                return self.syntax.first(base), bt.elem or ANY
            if name == "last":
                return self.syntax.last(base), bt.elem or ANY
            if name in ("min", "max"):
                return self.syntax.extreme(name, base), bt.elem or ANY
            self._fail(loc, e, f"arrays have no '.{name}'")
        if bt.kind in ("bytes", "str"):
            if name in ("length", "size"):
                return self.syntax.length(base), INT
            self._fail(loc, e, f"{bt.kind} values have no '.{name}'")
        if name == "to_i" and bt.kind in ("enum", "int", "bool", "any"):
            return self.syntax.to_int(base), INT
        if bt.kind == "any":
            return self.syntax.member(base, name), ANY
        self._fail(loc, e, f"{bt.kind} values have no '.{name}'")


class _Fail(Exception):
    pass

