"""Plan the `_read` classmethod of a type: straight-line code over (buf, pos, end).

Runs of fixed-width fields become one precompiled struct unpack; varints are inlined with a
one-byte fast path; every length is checked against the bytes left before it is used.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from .lines import Code
from ..expr import Binary, Int, same_expr
from ..model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, RefKind, TypeRef, TypeSpec
from ..ir import FixedRun
from ..pyexpr import ENCLOSING, IO_START, Scope


@dataclass(frozen=True)
class Frame:
    """Where a read body stands: in its type's own `_read` (the defaults), or spliced into the
    loop of an enclosing type's reader, saving a call per element. A spliced body reads into
    `obj`, is of class `cls`, names its locals with `suffix`, and knows the enclosing objects
    as locals of the reader it stands in (`chain`, nearest first); `buf`, `pos` and `end` are
    shared, since the element advances its parent's position."""
    obj: str = "self"
    cls: str = "cls"
    suffix: str = ""
    chain: tuple[str, ...] = ("_parent",)

    @property
    def spliced(self) -> bool:
        return self.obj != "self"


class ReadPlanner:
    def __init__(self, ctx, spec: TypeSpec, frame: Frame = Frame(), counter=None):
        self.ctx = ctx  # the ModulePlanner: program, translator, constants, naming
        self.spec = spec
        self.f = frame
        self.counter = counter if counter is not None else itertools.count(1)  # shared by spliced bodies

    def new(self, prefix: str) -> str:
        return f"_{prefix}{next(self.counter)}"

    def v(self, name: str) -> str:
        """A local of this body, named apart from those of the bodies spliced beside it."""
        return name + self.f.suffix

    def path(self, attr: Attr) -> str:
        return self.ctx.field_path(self.spec, attr)

    def scope(self) -> Scope:
        f = self.f
        return Scope(self.spec, obj=f.obj, parent=f.chain[0], io=("pos", self.v("_start"), "end"),
                     ancestors=f.chain if f.spliced else ())

    # -- the method ----------------------------------------------------------------------
    def plan(self) -> list[str]:
        """The body: a whole `_read`, or the lines spliced in a loop (without its return)."""
        c = Code()
        spec, obj = self.spec, self.f.obj
        scope = self.scope()
        facts = self.ctx.ir[spec]
        marks = facts.read_marks
        c(f"{obj} = _new({self.f.cls})")
        parent = self.f.chain[0]
        c(f"{obj}._parent_ref = " + (f"{self.ctx.rt('_ref')}({parent})" if self.f.spliced else
                                     f"None if {parent} is None else {self.ctx.rt('_ref')}({parent})"))
        start_at = len(c.lines)
        if spec.params:  # given by the type that reads this one (or to from_bytes), and kept
            assert not self.f.spliced, "types with params are never spliced (the hot pass refuses them)"
            missing = " or ".join(f"{p.id} is None" for p in spec.params)
            with c.block(f"if {missing}:"):
                c(f"raise {self.ctx.rt('_needs_params')}({'.'.join(self.ctx.program.class_path(spec))!r}, "
                  f"{tuple(p.id for p in spec.params)!r})")
            for p in spec.params:
                c(f"{obj}.{p.id} = {p.id}")
                scope.locals[p.id] = p.id
        if facts.needs_pos:
            c(f"{obj}._pos = pos")
        if facts.pinned:
            c(f"{obj}._pins = 0")
        for op in facts.ops:
            if isinstance(op, FixedRun):
                self.run(c, op, scope, marks)
                group = op.fields
            else:
                if op.field.id in marks:
                    c(f"{self.v('_m_' + op.field.id)} = pos")
                self.field(c, op.field.attr, scope)
                group = (op.field,)
            for f in group:
                scope.locals[f.id] = self.v(f"f_{f.id}")
        for attr in spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                scope.uses.add(IO_START)
                mark, value = self.v(f"_m_{d.target}"), self.v(f"f_{attr.id}")
                with c.block(f"if pos - {mark} != {value}:"):
                    c(f"raise {self.ctx.rt('_invalid')}({self.v('_start')}, {self.path(attr)!r}, f\"says {{{value}}} "
                      f"bytes follow from {d.target!r}, but {{pos - {mark}}} were read\")")
            if attr.checksum is not None:  # the span: computed when first asked for
                c(f"{obj}._{attr.id}_computed = (buf, {self.v('_m_' + attr.checksum.from_field)}, pos)")
        for inst in spec.instances:
            if inst.eager:  # computed once, from the fields just read
                own = dataclasses.replace(scope, uses=set())
                value = self.ctx.tr.translate(inst.value, own, inst.loc)
                scope.uses |= own.uses
                enum = self.ctx.program.enum_of.get(inst)
                if enum is not None:
                    value = f"{self.ctx.rt('_enum_value')}({self.ctx.program.enum_py_name(enum)}, {value})"
                if ENCLOSING in own.uses:
                    # read on its own, without the objects it refers to: no value
                    with c.block("try:"):
                        c(f"{obj}.{inst.id} = {value}")
                    with c.block("except AttributeError:"):
                        c(f"{obj}.{inst.id} = None")
                else:
                    c(f"{obj}.{inst.id} = {value}")
        if not self.f.spliced:
            c("return self, pos")
        if IO_START in scope.uses:  # only where _io or an error needs it
            c.lines.insert(start_at, f"{self.v('_start')} = pos")
        return c.lines

    def run(self, c: Code, run: FixedRun, scope: Scope, marks: frozenset[str]) -> None:
        group, offsets, width = [f.attr for f in run.fields], run.offsets, run.width
        s = self.ctx.consts.struct(run.fmt)
        table = self.ctx.consts.table(
            "(" + "".join(f"({o}, {f.width}, {f.path!r}), " for o, f in zip(offsets, run.fields)) + ")")
        c("if pos >= end:" if width == 1 else f"if end - pos < {width}:")
        c(f"    raise {self.ctx.rt('_truncated')}(pos, end, {table})")
        for o, attr in zip(offsets, group):
            if attr.id in marks:
                c(f"{self.v('_m_' + attr.id)} = pos + {o}" if o else f"{self.v('_m_' + attr.id)} = pos")
        names = ", ".join(self.v(f"f_{a.id}") for a in group)
        if width == 1:  # one byte: indexing beats a struct call
            c(f"{names} = buf[pos]")
            if run.fields[0].signed:
                with c.block(f"if {names} > 127:"):
                    c(f"{names} -= 256")
        else:
            c(f"{names}{',' if len(group) == 1 else ''} = {s}.unpack_from(buf, pos)")
        c(f"pos += {width}")
        for o, attr in zip(offsets, group):
            var = self.v(f"f_{attr.id}")
            self.valid(c, attr, var, f"pos - {width - o}", scope)
            self.enum(c, attr, var)
            c(f"{self.f.obj}.{attr.storage} = {var}")

    # -- one field ------------------------------------------------------------------------
    def field(self, c: Code, attr: Attr, scope: Scope) -> None:
        var, obj = self.v(f"f_{attr.id}"), self.f.obj
        if attr.lazy:  # keep where the bytes are; decode on first access
            lazy = Code(c.level + (1 if attr.if_ is not None else 0))
            self.sized_bounds(lazy, attr, scope, "buf", "pos", "end")
            lazy(f"{obj}._{attr.id}_raw = (buf, pos, {self.v('_e')})")
            lazy(f"{var} = {self.ctx.rt('_LAZY')}")
            lazy(f"pos = {self.v('_e')}")
            if attr.if_ is not None:
                c(f"if {self.ctx.tr.translate(attr.if_, scope, attr.loc)}:")
                c.lines += lazy.lines
                with c.block("else:"):
                    c(f"{var} = None")
            else:
                c.lines += lazy.lines
            c(f"{obj}._{attr.id} = {var}")
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
        c(f"{obj}.{attr.storage} = {var}")

    def enum(self, c: Code, attr: Attr, var: str) -> None:
        """Fields with `enum:` hold the enum member (or the plain number when it is unnamed)."""
        enum = self.ctx.program.enum_of.get(attr)
        if enum is not None:
            c(f"{var} = {self.ctx.rt('_enum_value')}({self.ctx.program.enum_py_name(enum)}, {var})")

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
            source = self.ctx.ir[self.spec].field(attr.id).count_source
            at = "pos" if source is None else self.v(f"_m_{source}")  # a bad count is the count field's fault
            with c.block(f"if {count} < 0:"):
                c(f"raise {self.ctx.rt('_invalid')}({at}, {path!r}, f\"negative count {{{count}}}\")")
            least = max(1, self.ctx.ir[self.spec].field(attr.id).min_item_size)
            room = f"(end - pos) // {least}" if least > 1 else "end - pos"
            with c.block(f"if {count} > {room} or {count} > {self.ctx.rt('_LIMITS')}.max_items:"):
                c(f"raise {self.ctx.rt('_too_many')}({at}, {path!r}, {count}, end - pos)")
            if self.whole_run(attr):  # fixed-width numbers, room checked above: one unpack
                code, width, _ = PRIMITIVES[attr.type.prim]
                order = ">" if attr.type.endian == "be" else "<"
                c(f"{var} = list({self.ctx.rt('_unpack_from')}(f'{order}{{{count}}}{code}', buf, pos))")
                c(f"pos += {count} * {width}")
                c.level -= 1
                return
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
            spliced = None
            if target is not None and attr.size is None and not attr.size_eos and not attr.process:
                frame = Frame(item, self.ctx.class_ref(target), self.new("r"), (self.f.obj,) + self.f.chain)
                spliced = self.ctx.spliced_read(target, frame, self.counter)
            if spliced is not None:
                c.lines += ["    " * c.level + line for line in spliced]
            else:
                self.single(c, attr, item, scope)
            c(f"{append}({item})")
            if attr.repeat == "until":
                elem = self.ctx.tr.attr_type(attr).elem
                inner = dataclasses.replace(scope, locals=dict(scope.locals), underscore=(item, elem), index=index)
                cond = self.ctx.tr.translate(attr.repeat_until, inner, attr.loc)
                with c.block(f"if {cond}:"):
                    c("break")
                c(f"{index} += 1")
        if attr.repeat == "expr":
            c.level -= 1

    @staticmethod
    def whole_run(attr: Attr) -> bool:
        """A counted repeat of a fixed-width number, whose items need no check or enum each."""
        return (attr.repeat == "expr" and attr.type.kind == RefKind.PRIM and attr.valid is None
                and attr.enum is None and attr.process is None and attr.size is None and not attr.size_eos)

    def single(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        """Read one element at `pos`, advancing it."""
        if (attr.size is not None and attr.type.kind in (RefKind.BYTES, RefKind.STR) and attr.process is None
                and attr.contents is None):
            size = self.ctx.tr.translate(attr.size, scope, attr.loc)
            if size not in scope.locals.values():  # a local this reader bound holds it already
                c(f"{self.v('_n')} = {size}")
                size = self.v("_n")
            # a field read only `if: n >= 0` needs no lower bound on its size n
            e = attr.if_
            guarded = (isinstance(e, Binary) and e.op == ">=" and isinstance(e.right, Int) and e.right.value == 0
                       and same_expr(e.left, attr.size))
            bound = f"{size} > end - pos" if guarded else f"not 0 <= {size} <= end - pos"
            with c.block(f"if {bound}:"):
                c(f"raise {self.ctx.rt('_bad_size')}(pos, end, {size}, {self.path(attr)!r})")
            piece = f"buf[pos:pos + {size}]"
            if attr.type.kind == RefKind.STR:  # str(), not .decode(): a memoryview has no decode
                piece = f"str({piece}, {attr.type.encoding!r}, 'surrogateescape')"
            c(f"{var} = {piece}")
            c(f"pos += {size}")
            return
        if attr.size is not None or attr.size_eos:
            self.sized_bounds(c, attr, scope, "buf", "pos", "end")
            self.region(c, attr, var, scope, "buf", "pos", self.v("_e"))
            c(f"pos = {self.v('_e')}")
            return
        self.unsized(c, attr.type, var, "buf", "pos", "end", self.path(attr), scope)

    def sized_bounds(self, c: Code, attr: Attr, scope: Scope, buf: str, pos: str, end: str) -> None:
        path, n, e = self.path(attr), self.v("_n"), self.v("_e")
        if attr.size_eos:
            c(f"{e} = {end}")
            return
        c(f"{n} = {self.ctx.tr.translate(attr.size, scope, attr.loc)}")
        with c.block(f"if {n} < 0:"):
            c(f"raise {self.ctx.rt('_invalid')}({pos}, {path!r}, f\"negative size {{{n}}}\")")
        with c.block(f"if {n} > {end} - {pos}:"):
            c(f"raise {self.ctx.rt('_short')}({pos}, {end}, {n}, {path!r})")
        c(f"{e} = {pos} + {n}")

    def region(self, c: Code, attr: Attr, var: str, scope: Scope, buf: str, start: str, end: str) -> None:
        """Decode the bytes [start, end) of `buf` as the field's type, through its processor."""
        path = self.path(attr)
        p = attr.process
        if p is None:
            self.typed_region(c, attr, attr.type, var, scope, buf, start, end)
            return
        args = ", ".join(self.ctx.tr.translate(a, scope, p.loc) for a in p.args)
        proc = self.new("p")
        with c.block("try:"):  # arguments it refuses (an unknown codec) are the field's error
            c(f"{proc} = {self.ctx.rt('_processor')}({p.name!r}{', ' if args else ''}{args})")
        with c.block(f"except {self.ctx.rt('_DecodeError')} as {self.v('_err')}:"):
            c(f"raise {self.ctx.rt('_in_processed')}({self.v('_err')}, {start}, {path!r}, {p.name!r})")
        with c.block(f"if {proc}.identity:"):
            self.typed_region(c, attr, attr.type, var, scope, buf, start, end)
        with c.block("else:"):
            data = self.new("d")
            with c.block("try:"):
                c(f"{data} = {proc}.decode({buf}[{start}:{end}])")
                self.typed_region(c, attr, attr.type, var, scope, data, "0", f"len({data})")
            with c.block(f"except {self.ctx.rt('_DecodeError')} as {self.v('_err')}:"):
                c(f"raise {self.ctx.rt('_in_processed')}({self.v('_err')}, {start}, {path!r}, {p.name!r})")

    def typed_region(self, c: Code, attr: Attr, ref: TypeRef, var: str, scope: Scope,
                     buf: str, start: str, end: str) -> None:
        path = self.path(attr)
        if ref.kind == RefKind.BYTES:
            c(f"{var} = {buf}[{start}:{end}]")
            if attr.contents is not None:
                with c.block(f"if {var} != {attr.contents!r}:"):
                    c(f"raise {self.ctx.rt('_invalid')}({start}, {path!r}, f\"expected {attr.contents!r}, found {{{var}!r}}\")")
        elif ref.kind == RefKind.STR:
            c(f"{var} = str({buf}[{start}:{end}], {ref.encoding!r}, 'surrogateescape')")
        elif ref.kind == RefKind.SWITCH:
            # no case: the bytes themselves, as Kaitai reads a sized switch it cannot match
            self.switch(c, ref, scope, lambda case: self.typed_region(c, attr, case, var, scope, buf, start, end),
                        lambda: c(f"{var} = {buf}[{start}:{end}]"))
        else:
            q = self.new("q")
            c(f"{q} = {start}")
            self.unsized(c, ref, var, buf, q, end, path, scope)
            if attr.require_eos:
                with c.block(f"if {q} != {end}:"):
                    c(f"raise {self.ctx.rt('_invalid')}({q}, {path!r}, f\"{{{end} - {q}}} bytes left unread at the end of the field\")")

    def unsized(self, c: Code, ref: TypeRef, var: str, buf: str, pos: str, end: str, path: str,
                scope: Scope | None = None) -> None:
        scope = scope or Scope(self.spec, obj=self.f.obj)
        if ref.kind == RefKind.PRIM:
            code, width, _ = PRIMITIVES[ref.prim]
            if code == "B":
                with c.block(f"if {pos} >= {end}:"):
                    c(f"raise {self.ctx.rt('_short')}({pos}, {end}, 1, {path!r})")
                c(f"{var} = {buf}[{pos}]")
            else:
                s = self.ctx.consts.struct((">" if ref.endian == "be" else "<") + code)
                with c.block(f"if {end} - {pos} < {width}:"):
                    c(f"raise {self.ctx.rt('_short')}({pos}, {end}, {width}, {path!r})")
                c(f"{var}, = {s}.unpack_from({buf}, {pos})")
            c(f"{pos} += {width}")
            return
        if ref.kind == RefKind.USER:
            target = self.ctx.program.resolved[ref]
            if target.intrinsic:
                self.varint(c, target.intrinsic, var, buf, pos, end, path)
            else:
                args = "".join(f", {self.ctx.tr.translate(a, scope, ref.loc)}" for a in ref.args)
                c(f"{var}, {pos} = {self.ctx.class_ref(target)}._read({buf}, {pos}, {end}, {self.f.obj}{args})")
            return
        if ref.kind == RefKind.SWITCH:
            self.switch(c, ref, scope, lambda case: self.unsized(c, case, var, buf, pos, end, path, scope),
                        lambda: c(f"{var} = None"))
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
        if not self.spec.hot:  # a call (which checks the bounds): inlining pays only in the types read most
            c(f"{var}, {pos} = {self.ctx.rt('_read_uvarint')}({buf}, {pos}, {end}, {VARINT_MAX[kind]}, {path!r})")
            if zigzag:
                c(f"{var} = ({var} >> 1) ^ -({var} & 1)")
            return
        with c.block(f"if {pos} >= {end}:"):
            c(f"raise {self.ctx.rt('_short')}({pos}, {end}, 1, {path!r})")
        c(f"{var} = {buf}[{pos}]")
        # one- and two-byte varints (lengths and deltas up to 8191) inline, zigzag by table
        with c.block(f"if {var} < 0x80:"):
            if zigzag:
                c(f"{var} = {self.ctx.rt('_ZZ')}[{var}]")
            c(f"{pos} += 1")
        b1 = self.v("_b1")
        with c.block(f"elif {pos} + 1 < {end} and ({b1} := {buf}[{pos} + 1]) < 0x80:"):
            u = f"({var} & 0x7F) | ({b1} << 7)"
            c(f"{var} = {self.ctx.rt('_ZZ')}[{u}]" if zigzag else f"{var} = {u}")
            c(f"{pos} += 2")
        with c.block("else:"):
            c(f"{var}, {pos} = {self.ctx.rt('_read_uvarint')}({buf}, {pos}, {end}, {VARINT_MAX[kind]}, {path!r})")
            if zigzag:
                c(f"{var} = ({var} >> 1) ^ -({var} & 1)")

    def valid(self, c: Code, attr: Attr, var: str, pos: str, scope: Scope) -> None:
        if attr.valid is None:
            return
        path = self.path(attr)
        for cond, says in valid_checks(self.ctx.tr, attr.valid, var, scope):
            with c.block(f"if {cond}:"):
                c(f"raise {self.ctx.rt('_invalid')}({pos}, {path!r}, f\"value {{{var}}} {says}\")")


def valid_checks(tr, v, var: str, scope: Scope) -> list[tuple[str, str]]:
    """The conditions under which `var` fails `valid:`, in the translator's spelling, each with
    what the value must be (a Python f-string fragment), for every backend."""
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
        options = [tr.translate(e, scope, v.loc) for e in v.any_of]
        checks.append((tr.syntax.not_any_of(var, options), f"must be one of ({', '.join(options)})"))
    return checks

