"""The typed IR: every type's facts computed once, after the passes, and its fields as ops.

Emitters (the Python module, the compiled readers, the columnar readers, and the docs) read a
type's facts here instead of re-deriving them from the model: what a field is (a fixed-width
number, a varint, bytes, text, a struct, a switch), where its value sits in a fixed prefix,
which start positions later code needs (the marks), which fields are pinned, how deep reading
reaches into enclosing objects, the least bytes an element takes. The op list is the order a
reader walks: runs of fixed-width numbers as one op, every other field alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .expr import Attribute, Expr, Name
from .model import PRIMITIVES, Attr, DeriveKind, EnumSpec, Instance, RefKind, TypeSpec
from .program import Program


class TypeKind(Enum):
    STRUCT = "struct"  # a class of its own
    INTRINSIC = "intrinsic"  # a varint the runtime reads; no class


class ValueKind(Enum):
    """What one element of a field holds."""
    INT = "int"  # fixed-width integer
    FLOAT = "float"
    VARINT = "varint"  # an intrinsic type
    BYTES = "bytes"
    STR = "str"
    STRUCT = "struct"
    SWITCH = "switch"


class SpanKind(Enum):
    CHECKSUM = "checksum"
    LENGTH = "length"  # a -derive: length-from


@dataclass(frozen=True, eq=False)
class FieldIR:
    attr: Attr
    path: str  # schema path of the field, e.g. "record_batch/records_count", named in errors
    value: ValueKind
    width: int | None = None  # bytes of a fixed-width number
    signed: bool = False
    endian: str | None = None
    code: str | None = None  # struct format code of a fixed-width number
    intrinsic: str | None = None  # the varint kind of a VARINT
    target: TypeSpec | None = None  # the type of a STRUCT
    enum: EnumSpec | None = None
    pin_bit: int | None = None  # derived and checksum fields: their bit in `_pins`
    count_source: str | None = None  # a counted repeat whose count is a sibling field: that field
    min_item_size: int = 0  # a lower bound on one element's encoded size
    length_field: Attr | None = None  # the sibling a `-derive: length-of` computes from this field

    @property
    def id(self) -> str:
        return self.attr.id

    @property
    def fixed(self) -> bool:
        """A number always present once at a fixed width: one of a fixed run."""
        a = self.attr
        return (a.type.kind == RefKind.PRIM and not a.repeat and a.if_ is None and a.process is None
                and a.size is None and not a.size_eos)


@dataclass(frozen=True, eq=False)
class FixedRun:
    """Consecutive fixed-width numbers of one byte order, read and written as one struct."""
    fields: tuple[FieldIR, ...]
    endian: str
    offsets: tuple[int, ...]  # of each field from the run's start
    width: int

    @property
    def fmt(self) -> str:
        return (">" if self.endian == "be" else "<") + "".join(f.code for f in self.fields)


@dataclass(frozen=True, eq=False)
class Single:
    field: FieldIR


Op = FixedRun | Single


@dataclass(frozen=True, eq=False)
class Span:
    """A range of bytes a field is computed from: from `start` to the end of what was read or
    written so far when `field` is checked or patched."""
    kind: SpanKind
    field: FieldIR
    start: str
    varint_prefix: bool  # a length-from stored as a varint, reserved and patched last on write


@dataclass(frozen=True, eq=False)
class TypeIR:
    spec: TypeSpec
    kind: TypeKind
    fields: tuple[FieldIR, ...]
    ops: tuple[Op, ...]
    spans: tuple[Span, ...]
    pinned: tuple[FieldIR, ...]
    eager: tuple[Instance, ...]
    layout: tuple[tuple[str, int, int], ...]  # (field, offset, width) of the fixed prefix
    needs_pos: bool  # the read's start is kept (checksums and lazy fields report it)
    parent_depth: int  # enclosing objects whose fields reading this type takes
    children: tuple[TypeSpec, ...]  # struct types of its fields and switch cases, in order
    has_checksums: bool  # it or a child read eagerly holds a checksum

    def field(self, name: str) -> FieldIR:
        return next(f for f in self.fields if f.id == name)

    @property
    def count_sources(self) -> frozenset[str]:
        return frozenset(f.count_source for f in self.fields if f.count_source is not None)

    @property
    def span_starts(self) -> frozenset[str]:
        return frozenset(s.start for s in self.spans)

    @property
    def read_marks(self) -> frozenset[str]:
        """Fields whose start a reader keeps: span starts, and count fields (a bad count is
        reported at the field that holds it)."""
        return self.span_starts | self.count_sources

    @property
    def slots(self) -> tuple[str, ...]:
        """The attributes an instance holds besides its parent, in the order every backend lays
        them out: the params, the read's start, the pins, eager instances, then each field's
        value (behind a property when derived, a checksum or lazy), the bytes of a lazy field and
        the checksum computed from the bytes read."""
        slots = [p.id for p in self.spec.params]
        slots += ["_pos"] if self.needs_pos else []
        slots += ["_pins"] if self.pinned else []
        slots += [i.id for i in self.eager]
        for f in self.fields:
            slots.append(f.attr.storage)
            slots += [f"_{f.id}_raw"] if f.attr.lazy else []
            slots += [f"_{f.id}_computed"] if f.attr.checksum else []
        return tuple(slots)

    @property
    def write_marks(self) -> frozenset[str]:
        """Fields whose start a writer keeps: span starts but those of varint prefixes, whose
        span is measured from the reserved bytes."""
        return frozenset(s.start for s in self.spans if not s.varint_prefix)


class IR:
    """Every type of a checked program, its IR made on first use and kept."""

    def __init__(self, program: Program):
        self.program = program
        self._types: dict[TypeSpec, TypeIR] = {}
        self._depths: dict[TypeSpec, int] = {}

    def __getitem__(self, spec: TypeSpec) -> TypeIR:
        found = self._types.get(spec)
        if found is None:
            found = self._types[spec] = self._build(spec)
        return found

    def hot_depth(self, spec: TypeSpec, seen: frozenset = frozenset()) -> int:
        """How many enclosing objects a compiled reader of `spec` is handed: at least its parent
        (for `_parent`), and as many as its fields, eager instances and hot children refer to."""
        facts = self[spec]
        depth = max([1, facts.parent_depth] + [parent_chain(i.value) for i in facts.eager])
        for child in facts.children:
            if child.hot and child not in seen:
                depth = max(depth, self.hot_depth(child, seen | {spec}) - 1)
        return depth

    def hot_ancestors(self, spec: TypeSpec) -> list[TypeSpec | None]:
        """The types of those enclosing objects, nearest first (None where not one type)."""
        chain, node = [], spec
        for _ in range(self.hot_depth(spec)):
            node = self.program.parent_type(node) if node is not None else None
            chain.append(node)
        return chain

    def field_path(self, spec: TypeSpec, attr: Attr) -> str:
        names = []
        node: TypeSpec | None = spec
        while node is not None:
            names.append(node.name)
            node = self.program.lexical_parent.get(node)
        return "/".join(reversed(names)) + "/" + attr.id

    def min_size(self, attr: Attr) -> int:
        """A lower bound on one element's encoded size, to reject absurd counts early."""
        return self._ref_min(attr.type, frozenset())

    def _ref_min(self, ref, seen: frozenset) -> int:
        if ref.kind == RefKind.PRIM:
            return PRIMITIVES[ref.prim][1]
        if ref.kind != RefKind.USER:
            return 0
        spec = self.program.resolved[ref]
        if spec.intrinsic:
            return 1
        if spec in seen:
            return 0
        return sum(self._ref_min(a.type, seen | {spec}) for a in spec.seq
                   if a.if_ is None and not a.repeat and a.size is None and not a.size_eos)

    def min_type_size(self, spec: TypeSpec) -> int:
        """A lower bound on an instance's size: its fields always present once."""
        return sum(f.min_item_size for f in self[spec].fields if f.attr.if_ is None and not f.attr.repeat)

    # -- building -------------------------------------------------------------------------
    def _build(self, spec: TypeSpec) -> TypeIR:
        if spec.intrinsic:
            return TypeIR(spec, TypeKind.INTRINSIC, (), (), (), (), (), (), False, 0, (), False)
        pinned_attrs = [a for a in spec.seq if a.derive or a.checksum]
        ids = {a.id for a in spec.seq}
        fields = tuple(self._field(spec, a, ids, pinned_attrs) for a in spec.seq)
        ops = _ops(fields)
        by_id = {f.id: f for f in fields}
        spans = []
        for f in fields:
            a = f.attr
            if a.checksum is not None:
                spans.append(Span(SpanKind.CHECKSUM, f, a.checksum.from_field, False))
            if a.derive is not None and a.derive.kind == DeriveKind.LENGTH_FROM:
                spans.append(Span(SpanKind.LENGTH, f, a.derive.target, f.value == ValueKind.VARINT))
        layout = []
        for op in ops:
            if not isinstance(op, FixedRun):
                break
            base = layout[-1][1] + layout[-1][2] if layout else 0
            layout += [(f.id, base + o, f.width) for f, o in zip(op.fields, op.offsets)]
        children = tuple(t for a in spec.seq for t in self._refs(a) if not t.intrinsic)
        return TypeIR(spec, TypeKind.STRUCT, fields, ops, tuple(spans),
                      tuple(by_id[a.id] for a in pinned_attrs), tuple(i for i in spec.instances if i.eager),
                      tuple(layout), any(a.checksum or a.lazy for a in spec.seq), self.parent_depth(spec),
                      children, self._has_checksums(spec, set()))

    def _refs(self, attr: Attr) -> list[TypeSpec]:
        found = (self.program.resolved.get(r) for r in [attr.type] + [t for _, t in attr.type.cases])
        return [t for t in found if t is not None]

    def _field(self, spec: TypeSpec, attr: Attr, ids: set[str], pinned: list[Attr]) -> FieldIR:
        ref = attr.type
        common = dict(attr=attr, path=self.field_path(spec, attr),
                      enum=self.program.enum_of.get(attr),
                      pin_bit=(1 << pinned.index(attr)) if attr in pinned else None,
                      count_source=_count_source(attr, ids), min_item_size=self.min_size(attr),
                      length_field=next((a for a in spec.seq if a.derive is not None
                                         and a.derive.kind == DeriveKind.LENGTH_OF and a.derive.target == attr.id),
                                        None))
        if ref.kind == RefKind.PRIM:
            code, width, signed = PRIMITIVES[ref.prim]
            kind = ValueKind.FLOAT if ref.prim.startswith("f") else ValueKind.INT
            return FieldIR(value=kind, width=width, signed=signed, endian=ref.endian, code=code, **common)
        if ref.kind == RefKind.USER:
            target = self.program.resolved[ref]
            if target.intrinsic:
                return FieldIR(value=ValueKind.VARINT, intrinsic=target.intrinsic, target=target, **common)
            return FieldIR(value=ValueKind.STRUCT, target=target, **common)
        kind = {RefKind.BYTES: ValueKind.BYTES, RefKind.STR: ValueKind.STR, RefKind.SWITCH: ValueKind.SWITCH}
        return FieldIR(value=kind[ref.kind], **common)

    def parent_depth(self, spec: TypeSpec, seen: set | None = None) -> int:
        """How many levels of enclosing objects reading `spec` takes fields of (`_parent`, and
        `_parent._parent` from the types it reads), for standalone reads to refuse with a message."""
        top = seen is None
        if top and spec in self._depths:
            return self._depths[spec]
        seen = set() if seen is None else seen
        if spec in seen:
            return 0
        seen.add(spec)
        depth = 0
        for a in spec.seq:
            exprs = [a.size, a.if_, a.repeat_expr, a.repeat_until, a.type.switch_on]
            if a.valid is not None:
                exprs += [a.valid.eq, a.valid.min, a.valid.max, *a.valid.any_of]
            if a.process is not None:
                exprs += list(a.process.args)
            depth = max([depth] + [parent_chain(e) for e in exprs if e is not None])
        for child in (t for a in spec.seq for t in self._refs(a) if not t.intrinsic):
            depth = max(depth, self.parent_depth(child, seen) - 1)
        if top:
            self._depths[spec] = depth
        return depth

    def _has_checksums(self, spec: TypeSpec, seen: set) -> bool:
        if spec in seen:
            return False
        seen.add(spec)
        if any(a.checksum for a in spec.seq):
            return True
        return any(self._has_checksums(t, seen) for a in spec.seq if not a.lazy
                   for t in self._refs(a) if not t.intrinsic)


def _ops(fields: tuple[FieldIR, ...]) -> tuple[Op, ...]:
    """Consecutive fixed-width fields of one byte order as runs; every other field alone."""
    groups: list[list[FieldIR]] = []
    for f in fields:
        if f.fixed and groups and groups[-1][-1].fixed and groups[-1][-1].endian == f.endian:
            groups[-1].append(f)
        else:
            groups.append([f])
    ops: list[Op] = []
    for group in groups:
        if not group[0].fixed:
            ops.append(Single(group[0]))
            continue
        offsets, width = [], 0
        for f in group:
            offsets.append(width)
            width += f.width
        ops.append(FixedRun(tuple(group), group[0].endian, tuple(offsets), width))
    return tuple(ops)


def _count_source(attr: Attr, ids: set[str]) -> str | None:
    """The sibling field a repeat takes its count from, if its count is just that field (or an
    intrinsic varint's value)."""
    e = attr.repeat_expr
    if attr.repeat != "expr":
        return None
    if isinstance(e, Name) and e.name in ids:
        return e.name
    if isinstance(e, Attribute) and e.name == "value" and isinstance(e.obj, Name) and e.obj.name in ids:
        return e.obj.name
    return None


def parent_chain(e: Expr) -> int:
    """The longest chain `_parent._parent...` in an expression."""
    best = 0

    def chain(node) -> int:
        if isinstance(node, Name):
            return 1 if node.name == "_parent" else 0
        if isinstance(node, Attribute) and node.name == "_parent":
            inner = chain(node.obj)
            return inner + 1 if inner else 0
        if isinstance(node, Attribute):
            return chain(node.obj)
        return 0

    stack = [e]
    while stack:
        node = stack.pop()
        best = max(best, chain(node))
        for value in vars(node).values():
            if isinstance(value, Expr):
                stack.append(value)
            elif isinstance(value, tuple):
                stack += [v for v in value if isinstance(v, Expr)]
    return best
