"""Plan the vectorised readers of a `-columnar` type: `_columns` reads the same field of N instances
with one runtime call per field (numpy arrays of positions in, arrays of values out), `_skip` and
`_skip1` find where instances end, vectorised and one at a time. Which types qualify is
generator/shapes.py's to say.
"""
from __future__ import annotations

from .lines import Code
from ..model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, RefKind, TypeSpec
from ..shapes import field_ref

class ColumnPlanner:
    def __init__(self, ctx, spec: TypeSpec):
        self.ctx = ctx
        self.spec = spec

    def path(self, attr: Attr) -> str:
        return self.ctx.field_path(self.spec, attr)

    def ref(self, expr, earlier: dict) -> str | None:
        return field_ref(self.ctx.program, expr, earlier)

    def size_field(self, attr: Attr, earlier: dict) -> str | None:
        return self.ref(attr.size, earlier) if attr.size is not None else None

    # -- _columns -----------------------------------------------------------------------------
    def plan(self) -> list[str]:
        c = Code()
        c("_v = _vectors()")
        c("cols = {}")
        marks = self.ctx.ir[self.spec].read_marks  # a bad count is reported at the count field
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
                  f"cols[{count!r}], {max(1, self.ctx.ir[self.spec].field(attr.id).min_item_size)}, {path!r}, _m_{count})")
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
        least = max(1, self.ctx.ir.min_type_size(self.spec))
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
            c(f"raise {self.ctx.rt('_bad_size')}(pos, end, n, {path!r})")
        c("return pos + n")
        return c.lines
