"""Plan the vectorised readers of a `-columnar` type: `_columns` reads the same field of N instances
with one runtime call per field (numpy arrays of positions in, arrays of values out), `_skip` and
`_skip1` find where instances end, vectorised and one at a time.

A type is columnar when every field is a fixed-width integer, a varint intrinsic, bytes or a string
sized by an earlier field (optionally `if: that >= 0`), or a counted repeat of a columnar type that
does not repeat itself; `-derive: length-from` spans are checked. Anything else is a problem at the
`-columnar` key, so a schema never silently loses its fast path.
"""
from __future__ import annotations

from .lines import Code
from ..expr import Attribute, Binary, Int, Name
from ..model import PRIMITIVES, Attr, DeriveKind, RefKind, TypeSpec
from .read import VARINT_MAX

_INTEGER_CODES = set("BHIQbhiq")


class ColumnPlanner:
    def __init__(self, ctx, spec: TypeSpec):
        self.ctx = ctx
        self.spec = spec

    def path(self, attr: Attr) -> str:
        return self.ctx.field_path(self.spec, attr)

    # -- eligibility ------------------------------------------------------------------------
    def problems(self, nested: bool = False) -> list[tuple[object, str]]:
        out = []
        earlier: dict[str, Attr] = {}
        for attr in self.spec.seq:
            why = self.why_not(attr, earlier, nested)
            if why:
                out.append((attr.loc, f"type {self.spec.name!r} is -columnar, but field {attr.id!r} {why}"))
            earlier[attr.id] = attr
        return out

    def why_not(self, attr: Attr, earlier: dict, nested: bool) -> str | None:
        if attr.process or attr.lazy or attr.contents is not None or attr.checksum or attr.valid:
            return "has process, -lazy, contents, -checksum or valid"
        if attr.derive is not None and attr.derive.kind == DeriveKind.LENGTH_FROM and attr.derive.target in earlier:
            return "is a length of earlier fields"
        kind = attr.type.kind
        if kind == RefKind.PRIM:
            if PRIMITIVES[attr.type.prim][0] not in _INTEGER_CODES:
                return "is not an integer"
            return None if not (attr.repeat or attr.if_ is not None or attr.size is not None) else \
                "is a repeated, conditional or sized number"
        if kind in (RefKind.BYTES, RefKind.STR):
            if self.size_field(attr, earlier) is None:
                return "is not sized by an earlier integer field"
            if attr.if_ is not None and not self.present_if_not_negative(attr, earlier):
                return "has an `if` other than `<its size> >= 0`"
            return None
        if kind != RefKind.USER:
            return "is a switch"
        target = self.ctx.program.resolved[attr.type]
        if target.intrinsic:
            return None if not (attr.repeat or attr.if_ is not None) else "is a repeated or conditional varint"
        if attr.repeat != "expr" or attr.if_ is not None or attr.size is not None:
            return "is a user type that is not a plain counted repeat"
        if nested:
            return "repeats inside a repeated type"
        if self.ref(attr.repeat_expr, earlier) is None:
            return "is counted by something other than an earlier integer field"
        inner = ColumnPlanner(self.ctx, target).problems(nested=True)
        return f"repeats a type that cannot be read by columns ({inner[0][1]})" if inner else None

    def ref(self, expr, earlier: dict) -> str | None:
        """The earlier integer field an expression names (`n`, or `n.value` of a varint), or None."""
        if isinstance(expr, Name) and expr.name in earlier and earlier[expr.name].type.kind == RefKind.PRIM:
            return expr.name
        if (isinstance(expr, Attribute) and expr.name == "value" and isinstance(expr.obj, Name)
                and expr.obj.name in earlier and earlier[expr.obj.name].type.kind == RefKind.USER):
            target = self.ctx.program.resolved[earlier[expr.obj.name].type]
            return expr.obj.name if target.intrinsic else None
        return None

    def size_field(self, attr: Attr, earlier: dict) -> str | None:
        return self.ref(attr.size, earlier) if attr.size is not None else None

    def present_if_not_negative(self, attr: Attr, earlier: dict) -> bool:
        e = attr.if_
        return (isinstance(e, Binary) and e.op == ">=" and isinstance(e.right, Int) and e.right.value == 0
                and self.ref(e.left, earlier) == self.size_field(attr, earlier))

    # -- _columns -----------------------------------------------------------------------------
    def plan(self) -> list[str]:
        c = Code()
        c("_v = _vectors()")
        c("cols = {}")
        marks = {a.derive.target for a in self.spec.seq if a.derive and a.derive.kind == DeriveKind.LENGTH_FROM}
        marks |= {self.ref(a.repeat_expr, {x.id: x for x in self.spec.seq}) for a in self.spec.seq
                  if a.repeat == "expr"}  # a bad count is reported at the count field
        earlier: dict[str, Attr] = {}
        for attr in self.spec.seq:
            if attr.id in marks:
                c(f"_m_{attr.id} = pos")
            self.field(c, attr, earlier)
            earlier[attr.id] = attr
        for attr in self.spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                c(f"_v.check_span(_m_{d.target}, pos, cols[{attr.id!r}], {self.path(attr)!r})")
        c("return cols, pos")
        return c.lines

    def field(self, c: Code, attr: Attr, earlier: dict) -> None:
        name, path = attr.id, self.path(attr)
        kind = attr.type.kind
        if kind == RefKind.PRIM:
            _, width, signed = PRIMITIVES[attr.type.prim]
            little = (attr.type.endian or self.spec.endian) == "le"
            c(f"cols[{name!r}], pos = _v.fixed(u8, pos, end, {width}, {signed}, {little}, {path!r})")
        elif kind in (RefKind.BYTES, RefKind.STR):
            size = self.size_field(attr, earlier)
            c(f"cols[{name!r}] = pos")
            c(f"cols[{name + '.size'!r}], pos = _v.slices(pos, cols[{size!r}], end, {attr.if_ is not None}, "
              f"{path!r})")
        else:
            target = self.ctx.program.resolved[attr.type]
            if target.intrinsic:
                zigzag = target.intrinsic.startswith("zigzag")
                c(f"cols[{name!r}], pos = _v.varints(u8, pos, end, {VARINT_MAX[target.intrinsic]}, {zigzag}, "
                  f"{path!r})")
            else:
                count = self.ref(attr.repeat_expr, earlier)
                c(f"_items, cols[{name!r}], pos = _v.repeat({self.ctx.class_ref(target)}._columns, u8, pos, end, "
                  f"cols[{count!r}], {max(1, self.ctx.min_size(attr))}, {path!r}, _m_{count})")
                with c.block("for _k, _col in _items.items():"):
                    c(f"cols[{name + '.'!r} + _k] = _col")

    # -- _skip and _skip1 --------------------------------------------------------------------
    def length_prefix(self) -> Attr | None:
        """The first field, when it is a varint giving the length of everything after it."""
        seq = self.spec.seq
        if len(seq) < 2 or seq[0].type.kind != RefKind.USER:
            return None
        first, d = seq[0], seq[0].derive
        if d is None or d.kind != DeriveKind.LENGTH_FROM or d.target != seq[1].id or d.plus:
            return None
        return first if self.ctx.program.resolved[first.type].intrinsic else None

    def plan_skip(self) -> list[str]:
        c = Code()
        first = self.length_prefix()
        if first is None:
            c("return cls._columns(u8, pos, end)[1]")
            return c.lines
        target = self.ctx.program.resolved[first.type]
        c(f"return _vectors().skip_prefixed(u8, pos, end, {VARINT_MAX[target.intrinsic]}, "
          f"{target.intrinsic.startswith('zigzag')}, {self.path(first)!r})")
        return c.lines

    def plan_starts(self) -> list[str]:
        first = self.length_prefix()
        prefix = "None"
        if first is not None:
            kind = self.ctx.program.resolved[first.type].intrinsic
            prefix = f"({VARINT_MAX[kind]}, {kind.startswith('zigzag')})"
        path = "/".join(self.ctx.field_path(self.spec, self.spec.seq[0]).split("/")[:-1])
        c = Code()
        least = max(1, sum(self.ctx.min_size(a) for a in self.spec.seq if a.if_ is None and not a.repeat))
        c(f"return _vectors().packed(u8, buf, starts, ends, counts, cls._skip, cls._skip1, {prefix}, {least}, "
          f"{path!r})")
        return c.lines

    def plan_skip1(self, reader) -> list[str]:
        c = Code()
        first = self.length_prefix()
        if first is None:
            c("return cls._read(buf, pos, end)[1]")
            return c.lines
        target = self.ctx.program.resolved[first.type]
        path = self.path(first)
        reader.varint(c, target.intrinsic, "n", "buf", "pos", "end", path)
        with c.block("if not 0 <= n <= end - pos:"):
            c(f"raise _bad_size(pos, end, n, {path!r})")
        c("return pos + n")
        return c.lines
