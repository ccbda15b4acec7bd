"""Plan the `_read` classmethod of a type: straight-line code over (buf, pos, end).

Runs of fixed-width fields become one precompiled struct unpack; varints are inlined with a
one-byte fast path; every length is checked against the bytes left before it is used.
"""
from __future__ import annotations

from kafkacodec.runtime.varint import MAX_VARINT_BYTES, MAX_VARLONG_BYTES

from .lines import Code
from ..expr import Attribute, Name
from ..model import PRIMITIVES, Attr, DeriveKind, RefKind, TypeRef, TypeSpec
from ..pyexpr import IO_START, Scope, storage

VARINT_MAX = {"zigzag32": MAX_VARINT_BYTES, "zigzag64": MAX_VARLONG_BYTES, "uvarint32": MAX_VARINT_BYTES}


def is_simple_prim(attr: Attr) -> bool:
    return (attr.type.kind == RefKind.PRIM and not attr.repeat and attr.if_ is None and attr.process is None
            and attr.size is None and not attr.size_eos)


def runs(seq) -> list[list[Attr]]:
    """Group consecutive fixed-width fields of one endianness; other fields stand alone."""
    groups: list[list[Attr]] = []
    for attr in seq:
        if (is_simple_prim(attr) and groups and is_simple_prim(groups[-1][-1])
                and groups[-1][-1].type.endian == attr.type.endian):
            groups[-1].append(attr)
        else:
            groups.append([attr])
    return groups


class ReadPlanner:
    def __init__(self, ctx, spec: TypeSpec):
        self.ctx = ctx  # the ModulePlanner: program, translator, constants, naming
        self.spec = spec
        self.tmp = 0

    def new(self, prefix: str) -> str:
        self.tmp += 1
        return f"_{prefix}{self.tmp}"

    def path(self, attr: Attr) -> str:
        return self.ctx.field_path(self.spec, attr)

    def marks(self) -> set[str]:
        """Fields whose start position later code needs (checksum and length-from spans, and the
        counts of repeats, where a bad count is reported)."""
        out = set()
        for a in self.spec.seq:
            if a.checksum:
                out.add(a.checksum.from_field)
            if a.derive and a.derive.kind == DeriveKind.LENGTH_FROM:
                out.add(a.derive.target)
            if (source := self.count_field(a)) is not None:
                out.add(source)
        return out

    def count_field(self, attr: Attr) -> str | None:
        """The sibling field a repeat takes its count from, if its count is just that field."""
        e = attr.repeat_expr
        if attr.repeat == "expr" and isinstance(e, Name) and e.name in {a.id for a in self.spec.seq}:
            return e.name
        if attr.repeat == "expr" and isinstance(e, Attribute) and e.name == "value" and isinstance(e.obj, Name) \
                and e.obj.name in {a.id for a in self.spec.seq}:
            return e.obj.name  # an intrinsic varint's value
        return None

    # -- the method ----------------------------------------------------------------------
    def plan(self) -> list[str]:
        c = Code()
        spec = self.spec
        scope = Scope(spec, obj="self", parent="_parent", io=("pos", "_start", "end"))
        marks = self.marks()
        c("self = _new(cls)")
        c("self._parent_ref = None if _parent is None else _ref(_parent)")
        start_at = len(c.lines)
        if self.ctx.needs_pos(spec):
            c("self._pos = pos")
        if self.ctx.has_pins(spec):
            c("self._pins = 0")
        for group in runs(spec.seq):
            if is_simple_prim(group[0]):
                self.run(c, group, scope, marks)
            else:
                attr = group[0]
                if attr.id in marks:
                    c(f"_m_{attr.id} = pos")
                self.field(c, attr, scope)
            for attr in group:
                scope.locals[attr.id] = f"f_{attr.id}"
        for attr in spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                scope.uses.add(IO_START)
                with c.block(f"if pos - _m_{d.target} != f_{attr.id}:"):
                    c(f"raise _invalid(_start, {self.path(attr)!r}, f\"says {{f_{attr.id}}} bytes follow "
                      f"from {d.target!r}, but {{pos - _m_{d.target}}} were read\")")
            if attr.checksum is not None:  # the span: computed when first asked for
                c(f"self._{attr.id}_computed = (buf, _m_{attr.checksum.from_field}, pos)")
        for inst in spec.instances:
            if inst.eager:  # computed once, from the fields just read
                value = self.ctx.tr.translate(inst.value, scope, inst.loc)
                enum = self.ctx.program.enum_of.get(inst)
                if enum is not None:
                    value = f"_enum_value({self.ctx.program.enum_py_name(enum)}, {value})"
                if "_parent" in value or "_root" in value:
                    # read on its own, without the parents it refers to: no value
                    with c.block("try:"):
                        c(f"self.{inst.id} = {value}")
                    with c.block("except AttributeError:"):
                        c(f"self.{inst.id} = None")
                else:
                    c(f"self.{inst.id} = {value}")
        c("return self, pos")
        if IO_START in scope.uses:  # only where _io or an error needs it
            c.lines.insert(start_at, "_start = pos")
        return c.lines

    def run(self, c: Code, group: list[Attr], scope: Scope, marks: set[str]) -> None:
        fmt = ">" if group[0].type.endian == "be" else "<"
        offsets, width = [], 0
        for attr in group:
            offsets.append(width)
            width += PRIMITIVES[attr.type.prim][1]
        fmt += "".join(PRIMITIVES[a.type.prim][0] for a in group)
        s = self.ctx.consts.struct(fmt)
        table = self.ctx.consts.table(
            "(" + "".join(f"({o}, {PRIMITIVES[a.type.prim][1]}, {self.path(a)!r}), "
                          for o, a in zip(offsets, group)) + ")")
        c("if pos >= end:" if width == 1 else f"if end - pos < {width}:")
        c(f"    raise _truncated(pos, end, {table})")
        for o, attr in zip(offsets, group):
            if attr.id in marks:
                c(f"_m_{attr.id} = pos + {o}" if o else f"_m_{attr.id} = pos")
        names = ", ".join(f"f_{a.id}" for a in group)
        if width == 1:  # one byte: indexing beats a struct call
            c(f"{names} = buf[pos]")
            if PRIMITIVES[group[0].type.prim][2]:
                with c.block(f"if {names} > 127:"):
                    c(f"{names} -= 256")
        else:
            c(f"{names}{',' if len(group) == 1 else ''} = {s}.unpack_from(buf, pos)")
        c(f"pos += {width}")
        for o, attr in zip(offsets, group):
            self.valid(c, attr, f"f_{attr.id}", f"pos - {width - o}", scope)
            self.enum(c, attr, f"f_{attr.id}")
            c(f"self.{storage(attr)} = f_{attr.id}")

    # -- one field ------------------------------------------------------------------------
    def field(self, c: Code, attr: Attr, scope: Scope) -> None:
        var = f"f_{attr.id}"
        if attr.lazy:  # keep where the bytes are; decode on first access
            lazy = Code(c.level + (1 if attr.if_ is not None else 0))
            self.sized_bounds(lazy, attr, scope, "buf", "pos", "end")
            lazy(f"self._{attr.id}_raw = (buf, pos, _e)")
            lazy(f"{var} = _LAZY")
            lazy("pos = _e")
            if attr.if_ is not None:
                c(f"if {self.ctx.tr.translate(attr.if_, scope, attr.loc)}:")
                c.lines += lazy.lines
                with c.block("else:"):
                    c(f"{var} = None")
            else:
                c.lines += lazy.lines
            c(f"self._{attr.id} = {var}")
            return
        if attr.if_ is not None:
            cond = self.ctx.tr.translate(attr.if_, scope, attr.loc)
            with c.block(f"if {cond}:"):
                self.repeated(c, attr, var, scope)
            with c.block("else:"):
                c(f"{var} = None")
        else:
            self.repeated(c, attr, var, scope)
        if not attr.repeat:
            self.enum(c, attr, var)
        c(f"self.{storage(attr)} = {var}")

    def enum(self, c: Code, attr: Attr, var: str) -> None:
        """Fields with `enum:` hold the enum member (or the plain number when it is unnamed)."""
        enum = self.ctx.program.enum_of.get(attr)
        if enum is not None:
            c(f"{var} = _enum_value({self.ctx.program.enum_py_name(enum)}, {var})")

    def repeated(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        path = self.path(attr)
        if not attr.repeat:
            self.single(c, attr, var, scope)
            self.valid(c, attr, var, "pos", scope)
            return
        item = self.new("v")
        append = self.new("ap")
        c(f"{var} = []")
        if attr.repeat == "expr":
            count = self.new("c")
            c(f"{count} = {self.ctx.tr.translate(attr.repeat_expr, scope, attr.loc)}")
            # an empty repeat (the common case for headers) costs one comparison
            c.lines.append("    " * c.level + f"if {count}:")
            c.level += 1
            source = self.count_field(attr)
            at = "pos" if source is None else f"_m_{source}"  # a bad count is the count field's fault
            with c.block(f"if {count} < 0:"):
                c(f"raise _invalid({at}, {path!r}, f\"negative count {{{count}}}\")")
            least = max(1, self.ctx.min_size(attr))
            room = f"(end - pos) // {least}" if least > 1 else "end - pos"
            with c.block(f"if {count} > {room} or {count} > _LIMITS.max_items:"):
                c(f"raise _too_many({at}, {path!r}, {count}, end - pos)")
            loop = f"for _ in range({count}):"
        elif attr.repeat == "eos":
            loop = "while pos < end:"
        else:
            loop = "while True:"
        index = self.new("i")
        if attr.repeat == "until":
            c(f"{index} = 0")
        c(f"{append} = {var}.append")
        with c.block(loop):
            target = self.ctx.program.resolved.get(attr.type) if attr.type.kind == RefKind.USER else None
            inlined = None
            if target is not None and attr.size is None and not attr.size_eos and not attr.process:
                inlined = self.ctx.inlined_read(target, item, "self", self.new("_r"))
            if inlined is not None:
                c.lines += ["    " * c.level + line for line in inlined]
            else:
                self.single(c, attr, item, scope)
            c(f"{append}({item})")
            if attr.repeat == "until":
                elem = self.ctx.tr.attr_type(attr).elem
                inner = Scope(scope.spec, scope.obj, dict(scope.locals), (item, elem), index, scope.io, scope.parent,
                              scope.uses)
                cond = self.ctx.tr.translate(attr.repeat_until, inner, attr.loc)
                with c.block(f"if {cond}:"):
                    c("break")
                c(f"{index} += 1")
        if attr.repeat == "expr":
            c.level -= 1

    def single(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        """Read one element at `pos`, advancing it."""
        if (attr.size is not None and attr.type.kind in (RefKind.BYTES, RefKind.STR) and attr.process is None
                and attr.contents is None):
            size = self.ctx.tr.translate(attr.size, scope, attr.loc)
            if not size.isidentifier():
                c(f"_n = {size}")
                size = "_n"
            # a field read only `if: n >= 0` needs no lower bound on its size n
            guarded = attr.if_ is not None and self.ctx.tr.translate(attr.if_, scope, attr.loc) == f"({size} >= 0)"
            bound = f"{size} > end - pos" if guarded else f"not 0 <= {size} <= end - pos"
            with c.block(f"if {bound}:"):
                c(f"raise _bad_size(pos, end, {size}, {self.path(attr)!r})")
            piece = f"buf[pos:pos + {size}]"
            if attr.type.kind == RefKind.STR:  # str(), not .decode(): a memoryview has no decode
                piece = f"str({piece}, {attr.type.encoding!r}, 'surrogateescape')"
            c(f"{var} = {piece}")
            c(f"pos += {size}")
            return
        if attr.size is not None or attr.size_eos:
            self.sized_bounds(c, attr, scope, "buf", "pos", "end")
            self.region(c, attr, var, scope, "buf", "pos", "_e")
            c("pos = _e")
            return
        self.unsized(c, attr.type, var, "buf", "pos", "end", self.path(attr))

    def sized_bounds(self, c: Code, attr: Attr, scope: Scope, buf: str, pos: str, end: str) -> None:
        path = self.path(attr)
        if attr.size_eos:
            c(f"_e = {end}")
            return
        c(f"_n = {self.ctx.tr.translate(attr.size, scope, attr.loc)}")
        with c.block("if _n < 0:"):
            c(f"raise _invalid({pos}, {path!r}, f\"negative size {{_n}}\")")
        with c.block(f"if _n > {end} - {pos}:"):
            c(f"raise _short({pos}, {end}, _n, {path!r})")
        c(f"_e = {pos} + _n")

    def region(self, c: Code, attr: Attr, var: str, scope: Scope, buf: str, start: str, end: str) -> None:
        """Decode the bytes [start, end) of `buf` as the field's type, through its processor."""
        path = self.path(attr)
        p = attr.process
        if p is None:
            self.typed_region(c, attr, attr.type, var, scope, buf, start, end)
            return
        args = ", ".join(self.ctx.tr.translate(a, scope, p.loc) for a in p.args)
        proc = self.new("p")
        c(f"{proc} = _processor({p.name!r}{', ' if args else ''}{args})")
        with c.block(f"if {proc}.identity:"):
            self.typed_region(c, attr, attr.type, var, scope, buf, start, end)
        with c.block("else:"):
            data = self.new("d")
            with c.block("try:"):
                c(f"{data} = {proc}.decode({buf}[{start}:{end}])")
                self.typed_region(c, attr, attr.type, var, scope, data, "0", f"len({data})")
            with c.block("except _DecodeError as _err:"):
                c(f"raise _in_processed(_err, {start}, {path!r}, {p.name!r})")

    def typed_region(self, c: Code, attr: Attr, ref: TypeRef, var: str, scope: Scope,
                     buf: str, start: str, end: str) -> None:
        path = self.path(attr)
        if ref.kind == RefKind.BYTES:
            c(f"{var} = {buf}[{start}:{end}]")
            if attr.contents is not None:
                with c.block(f"if {var} != {attr.contents!r}:"):
                    c(f"raise _invalid({start}, {path!r}, f\"expected {attr.contents!r}, found {{{var}!r}}\")")
        elif ref.kind == RefKind.STR:
            c(f"{var} = str({buf}[{start}:{end}], {ref.encoding!r}, 'surrogateescape')")
        elif ref.kind == RefKind.SWITCH:
            # no case: the bytes themselves, as Kaitai reads a sized switch it cannot match
            self.switch(c, ref, scope, lambda case: self.typed_region(c, attr, case, var, scope, buf, start, end),
                        lambda: c(f"{var} = {buf}[{start}:{end}]"))
        else:
            q = self.new("q")
            c(f"{q} = {start}")
            self.unsized(c, ref, var, buf, q, end, path)
            if attr.require_eos:
                with c.block(f"if {q} != {end}:"):
                    c(f"raise _invalid({q}, {path!r}, f\"{{{end} - {q}}} bytes left unread at the end of the field\")")

    def unsized(self, c: Code, ref: TypeRef, var: str, buf: str, pos: str, end: str, path: str) -> None:
        if ref.kind == RefKind.PRIM:
            code, width, _ = PRIMITIVES[ref.prim]
            if code == "B":
                with c.block(f"if {pos} >= {end}:"):
                    c(f"raise _short({pos}, {end}, 1, {path!r})")
                c(f"{var} = {buf}[{pos}]")
            else:
                s = self.ctx.consts.struct((">" if ref.endian == "be" else "<") + code)
                with c.block(f"if {end} - {pos} < {width}:"):
                    c(f"raise _short({pos}, {end}, {width}, {path!r})")
                c(f"{var}, = {s}.unpack_from({buf}, {pos})")
            c(f"{pos} += {width}")
            return
        if ref.kind == RefKind.USER:
            target = self.ctx.program.resolved[ref]
            if target.intrinsic:
                self.varint(c, target.intrinsic, var, buf, pos, end, path)
            else:
                c(f"{var}, {pos} = {self.ctx.class_ref(target)}._read({buf}, {pos}, {end}, self)")
            return
        if ref.kind == RefKind.SWITCH:
            self.switch(c, ref, Scope(self.spec, obj="self"),
                        lambda case: self.unsized(c, case, var, buf, pos, end, path), lambda: c(f"{var} = None"))
            return
        raise AssertionError(f"unsized {ref.kind.value}")  # passes reject bytes/str without size

    def switch(self, c: Code, ref: TypeRef, scope: Scope, read_case, no_case) -> None:
        """An if/elif chain over the cases; the default case, or `no_case`, when none matches."""
        on = self.new("on")
        c(f"{on} = {self.ctx.tr.translate(ref.switch_on, scope, ref.loc)}")
        default = next((case for key, case in ref.cases if key is None), None)
        keyed = [(key, case) for key, case in ref.cases if key is not None]
        for i, (key, case) in enumerate(keyed):
            with c.block(f"{'if' if i == 0 else 'elif'} {on} == {self.ctx.tr.translate(key, scope, ref.loc)}:"):
                read_case(case)
        with c.block("else:" if keyed else "if True:"):
            if default is not None:
                read_case(default)
            else:
                no_case()

    def varint(self, c: Code, kind: str, var: str, buf: str, pos: str, end: str, path: str) -> None:
        zigzag = kind.startswith("zigzag")
        with c.block(f"if {pos} >= {end}:"):
            c(f"raise _short({pos}, {end}, 1, {path!r})")
        c(f"{var} = {buf}[{pos}]")
        # one- and two-byte varints (lengths and deltas up to 8191) inline, zigzag by table
        with c.block(f"if {var} < 0x80:"):
            if zigzag:
                c(f"{var} = _ZZ[{var}]")
            c(f"{pos} += 1")
        with c.block(f"elif {pos} + 1 < {end} and (_b1 := {buf}[{pos} + 1]) < 0x80:"):
            u = f"({var} & 0x7F) | (_b1 << 7)"
            c(f"{var} = _ZZ[{u}]" if zigzag else f"{var} = {u}")
            c(f"{pos} += 2")
        with c.block("else:"):
            c(f"{var}, {pos} = _read_uvarint({buf}, {pos}, {end}, {VARINT_MAX[kind]}, {path!r})")
            if zigzag:
                c(f"{var} = ({var} >> 1) ^ -({var} & 1)")

    def valid(self, c: Code, attr: Attr, var: str, pos: str, scope: Scope) -> None:
        if attr.valid is None:
            return
        path = self.path(attr)
        for cond, says in valid_checks(self.ctx.tr, attr.valid, var, scope):
            with c.block(f"if {cond}:"):
                c(f"raise _invalid({pos}, {path!r}, f\"value {{{var}}} {says}\")")


def valid_checks(tr, v, var: str, scope: Scope) -> list[tuple[str, str]]:
    """The conditions under which `var` fails `valid:`, each with what the value must be (an
    f-string fragment), for every backend."""
    checks = []
    if v.eq is not None:
        want = tr.translate(v.eq, scope, v.loc)
        checks.append((f"{var} != {want}", f"must be {{{want}}}"))
    if v.min is not None:
        low = tr.translate(v.min, scope, v.loc)
        checks.append((f"{var} < {low}", f"must be at least {{{low}}}"))
    if v.max is not None:
        high = tr.translate(v.max, scope, v.loc)
        checks.append((f"{var} > {high}", f"must be at most {{{high}}}"))
    if v.any_of:
        options = ", ".join(tr.translate(e, scope, v.loc) for e in v.any_of)
        checks.append((f"{var} not in ({options},)", f"must be one of ({options})"))
    return checks
