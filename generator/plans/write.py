"""Plan `_write(out)` and `size()` of a type.

Writers append to one bytearray and never need a pre-sized buffer. Derived fields are computed
unless pinned: a fixed-width length or checksum is written as a placeholder and patched once its
span is written; a varint length-from reserves two bytes and patches them last, moving its span
when the length needs another size; a length-of serialises its target before the prefix.
`-default` fills fields left as None.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from .lines import Code
from ..expr import Int, names_in
from ..model import PRIMITIVES, VARINT_TABLE_LIMIT, Attr, DeriveKind, RefKind, TypeRef, TypeSpec
from ..ir import FixedRun, ValueKind
from ..pyexpr import Scope, access


@dataclass(frozen=True)
class IntrinsicFns:
    """Runtime functions (as the generated module imports them) for one varint intrinsic."""
    write: str  # append to a bytearray, range-checked
    encode: str  # return the bytes
    size: str  # encoded length
    sign_bits: int | None  # the zigzag shift (31 or 63); None for unsigned


INTRINSICS = {
    "zigzag32": IntrinsicFns("_w_zz32", "_enc_zz32", "_zz32_size", 31),
    "zigzag64": IntrinsicFns("_w_zz64", "_enc_zz64", "_zz64_size", 63),
    "uvarint32": IntrinsicFns("_w_uv32", "_enc_uv32", "_uv32_size", None),
}


class WritePlanner:
    """With pack=True, plans the static `_pack(out, <fields>)`: values come from arguments,
    derived fields are always computed and nothing is stored back on an object."""

    def __init__(self, ctx, spec: TypeSpec, pack: bool = False, suffix: str = "", counter=None):
        self.ctx = ctx
        self.suffix = suffix  # of every local, when the body is spliced into a loop beside others
        self.counter = counter if counter is not None else itertools.count(1)  # shared by spliced bodies
        self.spec = spec
        self.pack = pack
        self.facts = ctx.ir[spec]
        self.ids = [a.id for a in spec.seq]
        self.length_of = {f.id: f.length_field for f in self.facts.fields if f.length_field is not None}
        self.encoded: dict[str, str] = {}  # length-of target -> local holding its bytes
        # whether nested objects keep what they computed: `keep` in _write, never in _pack or size()
        self.keep = "False" if pack else "keep"

    def new(self, prefix: str) -> str:
        return f"_{prefix}{next(self.counter)}"

    def v(self, name: str) -> str:
        return name + self.suffix

    def arg(self, attr: Attr) -> str:
        """The argument of `_pack` holding a field's value."""
        return self.v(f"a_{attr.id}")

    def path(self, attr: Attr) -> str:
        return self.ctx.field_path(self.spec, attr)

    def bit(self, attr: Attr) -> int:
        return self.facts.field(attr.id).pin_bit

    def w(self, attr: Attr) -> str:
        """The local holding the value written for `attr`; in _pack, plain fields use their argument."""
        if self.pack and not (attr.derive or attr.checksum):
            return self.arg(attr)
        return self.v(f"w_{attr.id}")

    def src(self, attr: Attr) -> str:
        """Where a field's value comes from: the object, or the argument of `_pack`."""
        return self.arg(attr) if self.pack else f"self.{access(attr)}"

    def derived(self, attr: Attr, computed: str) -> str:
        return computed if self.pack else f"self._{attr.id} if self._pins & {self.bit(attr)} else {computed}"

    def store(self, c: Code, attr: Attr, w: str) -> None:
        """Leave a computed value on the object, so a written object shows what was written."""
        if not self.pack:
            with c.block("if keep:"):
                c(f"self._{attr.id} = {w}")

    def raw(self, attr: Attr) -> str | None:
        """The span a lazy field was read from, whose bytes a re-encoding keeps while they still
        decode to the field's content."""
        return f"self._{attr.id}_raw" if attr.lazy and not self.pack else None

    def pack_params(self) -> list[str]:
        return [self.arg(a) for a in self.spec.seq if not (a.derive or a.checksum)]

    def is_varint(self, attr: Attr) -> bool:
        return self.facts.field(attr.id).value == ValueKind.VARINT

    def params(self, c: Code, scope: Scope, keep: bool) -> None:
        """The params: as the enclosing writer passes them, else as the object holds them (a
        writer that passes them leaves them on the object, as it does computed fields)."""
        for p in self.spec.params:  # never -hot: a call is cheap enough
            c(f"{p.id} = {self.ctx.rt('_param')}({p.id}, self, {p.id!r}, {'keep' if keep else 'False'}, "
              f"{self.path(p)!r})")
            scope.locals[p.id] = p.id

    def left_out_by_params(self, attr: Attr) -> bool:
        """A field whose presence the params decide (a field of some versions): writing it where
        they leave it out would drop its value."""
        params = {p.id for p in self.spec.params}
        return (not self.pack and bool(params) and not (attr.derive or attr.checksum or attr.lazy)
                and attr.default is None and any(n.name in params for n in names_in(attr.if_)))

    def params_text(self) -> str:
        return ", ".join(f"{p.id} {{{p.id}}}" for p in self.spec.params)

    def args(self, ref: TypeRef) -> str:
        """The params a field passes to its type (the same for every case of a switch, which the
        passes check), as the text after the other arguments of a call."""
        refs = [ref] + [t for _, t in ref.cases]
        args = next((r.args for r in refs if r.args), ())
        return "".join(f", {self.ctx.tr.translate(a, self.scope, ref.loc)}" for a in args)

    # -- _write ---------------------------------------------------------------------------
    def plan_write(self) -> list[str]:
        c = Code()
        scope = self.scope = Scope(self.spec, obj="self")
        self.params(c, scope, keep=True)
        if self.pack:  # every field is an argument; computed values replace them as they come
            scope.locals = {a.id: self.arg(a) for a in self.spec.seq if not (a.derive or a.checksum)}
        marks = self.facts.write_marks
        varint_spans: list[Attr] = []
        for op in self.facts.ops:
            for f in op.fields if isinstance(op, FixedRun) else (op.field,):
                self.value(c, f.attr, scope)
                if f.id not in self.length_of and not self.placeholder(f.attr):
                    scope.locals[f.id] = self.w(f.attr)
            if isinstance(op, FixedRun):
                self.fixed_run(c, op, marks)
                continue
            attr = op.field.attr
            if attr.derive is not None and attr.derive.kind == DeriveKind.LENGTH_FROM and self.is_varint(attr):
                # two bytes reserved (lengths up to 8191); the real encoding is spliced in later
                c(f"{self.v('_at_' + attr.id)} = len(out)")
                c('out += b"\\0\\0"')
                varint_spans.append(attr)
                continue
            if attr.id in marks:
                c(f"{self.v('_m_' + attr.id)} = len(out)")
            self.emit(c, attr, scope)
        self.patches(c, varint_spans)
        return c.lines or ["pass"]

    def fixed_run(self, c: Code, run: FixedRun, marks: frozenset[str]) -> None:
        """A run of fixed-width fields whose values are ready, as one struct (one byte: an append)."""
        for f, offset in zip(run.fields, run.offsets):
            at = "len(out)" + (f" + {offset}" if offset else "")
            if f.id in marks:
                c(f"{self.v('_m_' + f.id)} = {at}")
            if self.placeholder(f.attr):
                c(f"{self.v('_at_' + f.id)} = {at}")
        if run.width == 1:  # one byte: an append beats a struct call
            f = run.fields[0]
            w = self.w(f.attr)
            low, high = (-128, 127) if f.signed else (0, 255)
            with c.block(f"if not {low} <= {w} <= {high}:"):
                c(f"raise {self.ctx.rt('_EncodeError')}(f'{{{w}}} does not fit in {f.attr.type.prim}', {f.path!r})")
            c(f"out.append({w} & 0xFF)")
        else:
            c(f"out += {self.ctx.consts.struct(run.fmt)}.pack({', '.join(self.w(f.attr) for f in run.fields)})")

    def placeholder(self, attr: Attr) -> bool:
        d = attr.derive
        return attr.checksum is not None or (d is not None and d.kind == DeriveKind.LENGTH_FROM)

    def value(self, c: Code, attr: Attr, scope: Scope) -> None:
        """Put the value to write for `attr` in its local (placeholders for patched fields)."""
        w = self.w(attr)
        d = attr.derive
        tr = self.ctx.tr
        if self.placeholder(attr):
            if not self.is_varint(attr):  # a varint length-from is computed after its span
                c(f"{w} = 0")
            return
        if d is not None:
            plus = f" + {d.plus}" if d.plus else ""
            if d.kind == DeriveKind.COUNT_OF:
                items = tr.translate(d.target, scope, d.loc)
                computed = f"len({items}){plus}" if d.if_absent is None else \
                    f"(len({items}){plus} if {items} is not None else {d.if_absent!r})"
            else:
                target = self.spec.seq[self.ids.index(d.target)]
                b = self.serialise(c, target, scope)
                self.encoded[target.id] = b
                if d.if_absent is None:  # required: refuse None, then the length is plain
                    with c.block(f"if {b} is None:"):
                        c(f"raise {self.ctx.rt('_EncodeError')}('is not set', {self.path(target)!r})")
                    computed = f"len({b}){plus}"
                else:
                    computed = f"(len({b}){plus} if {b} is not None else {d.if_absent!r})"
            if attr.if_ is not None:  # absent (in this version, say): nothing to count
                computed = f"({computed} if {tr.translate(attr.if_, scope, attr.loc)} else None)"
            c(f"{w} = {self.derived(attr, computed)}")
            self.store(c, attr, w)
            return
        if attr.id in self.length_of:
            return  # written from the bytes serialised for its length prefix
        if w != self.src(attr):
            c(f"{w} = {self.src(attr)}")
        for value in ((repr(attr.contents),) if attr.contents is not None else ()) + (
                (tr.translate(attr.default, scope, attr.loc),) if attr.default is not None else ()):
            with c.block(f"if {w} is None:"):
                c(f"{w} = {value}")
                if not self.pack:  # left on the object only where written: a field that is absent stays None
                    present = "" if attr.if_ is None else f" and {tr.translate(attr.if_, scope, attr.loc)}"
                    with c.block(f"if keep{present}:"):
                        c(f"{self.src(attr)} = {w}")

    def serialise(self, c: Code, attr: Attr, scope: Scope) -> str:
        """Name of the bytes of a length-of target (None when the field is absent)."""
        src = self.src(attr)
        var = self.v(f"_b_{attr.id}")
        if attr.type.kind == RefKind.BYTES and attr.process is None:
            if self.pack:
                return src  # already a local (the argument): no copy
            c(f"{var} = {src}")
            return var
        if attr.type.kind == RefKind.STR and attr.process is None:
            c(f"{var} = None if {src} is None else {src}.encode({attr.type.encoding!r}, 'surrogateescape')")
            return var
        with c.block(f"if {src} is None:"):
            c(f"{var} = None")
        with c.block("else:"):
            tmp = self.new("t")
            c(f"{tmp} = bytearray()")
            self.payload(c, attr, src, tmp, scope, self.raw(attr))
            c(f"{var} = bytes({tmp})")
        return var

    def payload(self, c: Code, attr: Attr, value: str, out: str, scope: Scope, raw: str | None = None) -> None:
        """Append the encoded value of a (possibly processed) field to `out`; `raw`, the span the
        field was read from, for processed bytes to be kept rather than made anew."""
        if attr.process is None:
            self.typed(c, attr, attr.type, value, out)
            return
        p = attr.process
        args = ", ".join(self.ctx.tr.translate(a, scope, p.loc) for a in p.args)
        proc = self.new("p")
        scratch = self.new("r")
        c(f"{proc} = {self.ctx.rt('_processor')}({p.name!r}{', ' if args else ''}{args})")
        with c.block(f"if {proc}.identity:"):  # no transformation: no scratch copy either
            self.typed(c, attr, attr.type, value, out)
        with c.block("else:"):
            c(f"{scratch} = bytearray()")
            self.typed(c, attr, attr.type, value, scratch)
            c(f"{out} += {proc}.encode({scratch})" if raw is None else f"{out} += {self.ctx.rt('_reencoded')}({proc}, {scratch}, {raw})")

    def typed(self, c: Code, attr: Attr, ref: TypeRef, value: str, out: str) -> None:
        if ref.kind == RefKind.BYTES:
            c(f"{out} += {value}")
        elif ref.kind == RefKind.STR:
            c(f"{out} += {value}.encode({ref.encoding!r}, 'surrogateescape')")
        elif ref.kind == RefKind.PRIM:
            s = self.ctx.consts.struct((">" if ref.endian == "be" else "<") + PRIMITIVES[ref.prim][0])
            c(f"{out} += {s}.pack({value})")
        elif ref.kind == RefKind.SWITCH and self.spec.hot:  # inline, and its cases are not literals
            with c.block(f"if isinstance({value}, (bytes, bytearray, memoryview)):"):
                c(f"{out} += {value}")
            with c.block("else:"):
                c(f"{value}._write({out}, {self.keep}{self.args(ref)})")
        elif ref.kind == RefKind.SWITCH:
            c(f"{self.ctx.rt('_write_case')}({out}, {value}, {self.keep}, {self.case_classes(attr, ref)}, "
              f"{self.ctx.tr.translate(ref.switch_on, self.scope, ref.loc)}, {self.path(attr)!r}{self.args(ref)})")
        else:
            target = self.ctx.program.resolved[ref]
            if not target.intrinsic and not self.spec.hot and not self.ctx.packable(target):
                c(f"{self.ctx.rt('_write_value')}({out}, {value}, {self.keep}{self.args(ref)})")
                return
            if not target.intrinsic:
                # a nested value may be an object, a tuple of its fields, or bytes already encoded
                head = "if"
                if self.ctx.packable(target):
                    with c.block(f"if {value}.__class__ is tuple:"):
                        c(f"{self.ctx.class_ref(target)}._pack({out}, *{value})")
                    head = "elif"
                with c.block(f"{head} isinstance({value}, (bytes, bytearray, memoryview)):"):
                    c(f"{out} += {value}")
                with c.block("else:"):
                    c(f"{value}._write({out}, {self.keep}{self.args(ref)})")
                return
            if target.intrinsic:
                fns = INTRINSICS[target.intrinsic]
                fn, bits = self.ctx.rt(fns.write), fns.sign_bits
                if bits is None:
                    u = value
                    cond = f"0 <= {u} < {VARINT_TABLE_LIMIT:#x}"
                else:  # a zigzag value is never negative, so one bound suffices
                    u = self.new("u")
                    c(f"{u} = ({value} << 1) ^ ({value} >> {bits})")
                    cond = f"{u} < {VARINT_TABLE_LIMIT:#x}"
                with c.block(f"if {cond}:"):
                    c(f"{out} += {self.ctx.rt('_VT')}[{u}]")
                with c.block("else:"):  # longer values, with the range checks
                    c(f"{fn}({out}, {value})")
            else:
                c(f"{value}._write({out}, {self.keep})")

    def case_classes(self, attr: Attr, ref: TypeRef) -> str:
        """The switch's cases and their classes, as an expression (None where a case has no class:
        a primitive's, a varint's), which its value must be an object of: written as another
        type, it would encode what the reader then takes for the case's type."""
        if attr.id not in self.ctx.switch_cases(self.spec):
            return "None"
        return f"{self.ctx.class_ref(self.spec)}._switch_cases[{attr.id!r}]"

    def emit(self, c: Code, attr: Attr, scope: Scope) -> None:
        w = self.w(attr)
        path = self.path(attr)
        body = Code(c.level)
        if attr.id in self.length_of:
            body(f"out += {self.encoded[attr.id]}")
        elif attr.repeat:
            item = self.new("x")
            target = self.ctx.program.resolved.get(attr.type)
            if attr.process is None and target is not None and self.ctx.packable(target):
                # tuples are the fast path: the element's packer inlined, or hoisted out of the loop
                inlined = self.ctx.spliced_pack(target, item, self.new("k"), self.counter)
                if inlined is None:
                    packer = self.new("pk")
                    body(f"{packer} = {self.ctx.class_ref(target)}._pack")
                with body.block(f"for {item} in {w}:"):
                    with body.block(f"if {item}.__class__ is tuple:"):
                        if inlined is None:
                            body(f"{packer}(out, *{item})")
                        else:
                            body.lines += ["    " * body.level + line for line in inlined]
                    with body.block("else:"):
                        self.payload(body, attr, item, "out", scope)
            else:
                with body.block(f"for {item} in {w}:"):
                    self.fixed_length(body, attr, item, path)
                    self.payload(body, attr, item, "out", scope)
        else:
            self.fixed_length(body, attr, w, path)
            self.payload(body, attr, w, "out", scope, self.raw(attr))
        if attr.if_ is not None:
            cond = self.ctx.tr.translate(attr.if_, scope, attr.loc)
            with c.block(f"if {cond}:"):
                self.require(c, attr, w, path)
                c.lines += ["    " + line for line in body.lines]
            if self.left_out_by_params(attr):
                with c.block(f"elif self.{attr.storage} is not None:"):
                    c(f"raise {self.ctx.rt('_EncodeError')}(f'holds a value, but {self.params_text()} has no such "
                      f"field', {path!r})")
        else:
            self.require(c, attr, w, path)
            c.lines += body.lines

    def fixed_length(self, c: Code, attr: Attr, value: str, path: str) -> None:
        """Bytes of a fixed size (a UUID, say) must have that size: others would shift every field after."""
        if attr.derive is None and attr.type.kind == RefKind.BYTES and isinstance(attr.size, Int):
            with c.block(f"if len({value}) != {attr.size.value}:"):
                c(f"raise {self.ctx.rt('_EncodeError')}(f'must be {attr.size.value} bytes, not {{len({value})}}', "
                  f"{path!r})")

    def require(self, c: Code, attr: Attr, w: str, path: str) -> None:
        if attr.id in self.length_of or attr.derive or attr.default is not None or attr.contents is not None:
            return  # computed, defaulted or fixed: never None here
        if not self.spec.hot:  # a call: inline code pays only in the types written most
            c(f"{self.ctx.rt('_require')}({w}, {path!r})")
            return
        with c.block(f"if {w} is None:"):
            c(f"raise {self.ctx.rt('_EncodeError')}('is not set', {path!r})")

    def patches(self, c: Code, varint_spans: list[Attr]) -> None:
        v = self.v
        for attr in self.spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM and not self.is_varint(attr):
                s = self.ctx.consts.struct((">" if attr.type.endian == "be" else "<") + PRIMITIVES[attr.type.prim][0])
                w, mark = v(f"w_{attr.id}"), v(f"_m_{d.target}")
                c(f"{w} = {self.derived(attr, f'len(out) - {mark}')}")
                self.store(c, attr, w)
                c(f"{s}.pack_into(out, {v('_at_' + attr.id)}, {w})")
        for attr in self.spec.seq:
            if attr.checksum is None:
                continue
            fn = self.ctx.checksum_fn(attr.checksum.algorithm)
            s = self.ctx.consts.struct((">" if attr.type.endian == "be" else "<") + PRIMITIVES[attr.type.prim][0])
            w, mv, mark = v(f"w_{attr.id}"), v("_mv"), v(f"_m_{attr.checksum.from_field}")
            if self.pack:
                with c.block(f"with memoryview(out) as {mv}:"):
                    c(f"{w} = {fn}({mv}[{mark}:])")
            else:
                with c.block("if self._pins & %d:" % self.bit(attr)):
                    c(f"{w} = self._{attr.id}")
                with c.block("else:"):
                    with c.block(f"with memoryview(out) as {mv}:"):
                        c(f"{w} = {fn}({mv}[{mark}:])")
            self.store(c, attr, w)
            c(f"{s}.pack_into(out, {v('_at_' + attr.id)}, {w})")
        for attr in reversed(varint_spans):
            at, w = v(f"_at_{attr.id}"), v(f"w_{attr.id}")
            c(f"{w} = {self.derived(attr, f'len(out) - {at} - 2')}")
            self.store(c, attr, w)
            fns = INTRINSICS[self.ctx.program.resolved[attr.type].intrinsic]
            fn, bits = self.ctx.rt(fns.encode), fns.sign_bits
            if bits is None:
                u = w
                cond = f"0 <= {u} < {VARINT_TABLE_LIMIT:#x}"
            else:
                u = self.new("u")
                c(f"{u} = ({w} << 1) ^ ({w} >> {bits})")
                cond = f"{u} < {VARINT_TABLE_LIMIT:#x}"
            with c.block(f"if 0x80 <= {u} < {VARINT_TABLE_LIMIT:#x}:"):  # two bytes, as reserved
                c(f"out[{at}] = ({u} & 0x7F) | 0x80")
                c(f"out[{at} + 1] = {u} >> 7")
            with c.block("else:"):  # slice assignment moves the span to fit the encoding
                c(f"out[{at}:{at} + 2] = {self.ctx.rt('_VT')}[{u}] if {cond} else {fn}({w})")

    # -- size -----------------------------------------------------------------------------
    def plan_size(self) -> list[str]:
        """Encoded size without encoding (processed fields are encoded to learn their size), and
        without leaving anything on the objects."""
        self.keep = "False"
        c = Code()
        scope = self.scope = Scope(self.spec, obj="self")
        self.params(c, scope, keep=False)
        tr = self.ctx.tr
        # 1. values of length-of and count-of fields, where conditions or varint sizes need them
        in_conditions = {n.name for a in self.spec.seq if a.if_ is not None and a.id not in self.length_of
                         for n in names_in(a.if_)}  # a length-of target's presence is its value's
        in_conditions |= {n.name for a in self.spec.seq for r in [a.type, *(t for _, t in a.type.cases)]
                          for arg in r.args for n in names_in(arg)}  # and params passed on
        for attr in self.spec.seq:
            d = attr.derive
            if d is None or d.kind == DeriveKind.LENGTH_FROM:
                continue
            if not self.is_varint(attr) and attr.id not in in_conditions:
                if d.kind == DeriveKind.LENGTH_OF:  # its target's size is still needed below
                    target = self.spec.seq[self.ids.index(d.target)]
                    self.target_size(c, target, f"z_{target.id}", scope)
                continue
            plus = f" + {d.plus}" if d.plus else ""
            if d.kind == DeriveKind.COUNT_OF:
                items = tr.translate(d.target, scope, d.loc)
                computed = f"len({items}){plus}" if d.if_absent is None else \
                    f"(len({items}){plus} if {items} is not None else {d.if_absent!r})"
            else:
                target = self.spec.seq[self.ids.index(d.target)]
                self.target_size(c, target, f"z_{target.id}", scope)
                absent = "None" if d.if_absent is None else repr(d.if_absent)
                computed = f"(z_{target.id}{plus} if z_{target.id} is not None else {absent})"
            if attr.if_ is not None:
                computed = f"({computed} if {tr.translate(attr.if_, scope, attr.loc)} else None)"
            c(f"d_{attr.id} = self._{attr.id} if self._pins & {self.bit(attr)} else {computed}")
            scope.locals[attr.id] = f"d_{attr.id}"
        # 2. sizes of every field but varint length-from prefixes
        for attr in self.spec.seq:
            z = f"z_{attr.id}"
            if attr.derive is not None and attr.derive.kind == DeriveKind.LENGTH_FROM and self.is_varint(attr):
                continue
            if attr.id in self.length_of:
                c(f"{z} = {z} or 0")
                continue
            value = f"d_{attr.id}" if attr.id in scope.locals else f"self.{access(attr)}"
            expr = self.size_expr(c, attr, value, scope)
            if attr.if_ is not None:
                expr = f"({expr} if {tr.translate(attr.if_, scope, attr.loc)} else 0)"
            c(f"{z} = {expr}")
        # 3. varint length-from prefixes, innermost span first
        for attr in reversed(self.spec.seq):
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM and self.is_varint(attr):
                start = self.ids.index(d.target)
                span = " + ".join(f"z_{a.id}" for a in self.spec.seq[start:]
                                  if not (a.derive and a.derive.kind == DeriveKind.LENGTH_FROM and self.is_varint(a)))
                c(f"d_{attr.id} = self._{attr.id} if self._pins & {self.bit(attr)} else ({span})")
                c(f"z_{attr.id} = {self.ctx.rt(INTRINSICS[self.ctx.program.resolved[attr.type].intrinsic].size)}(d_{attr.id})")
        total = " + ".join(f"z_{a.id}" for a in self.spec.seq) or "0"
        c(f"return {total}")
        return c.lines

    def target_size(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        src = f"self.{access(attr)}"
        if attr.type.kind == RefKind.BYTES and attr.process is None:
            c(f"{var} = None if {src} is None else len({src})")
        elif attr.type.kind == RefKind.STR and attr.process is None:
            c(f"{var} = None if {src} is None else len({src}.encode({attr.type.encoding!r}, 'surrogateescape'))")
        else:
            with c.block(f"if {src} is None:"):
                c(f"{var} = None")
            with c.block("else:"):
                c(f"{var} = {self.size_expr(c, attr, src, scope)}")

    def size_expr(self, c: Code, attr: Attr, value: str, scope: Scope) -> str:
        if attr.process is not None:
            tmp = self.new("t")
            with c.block(f"if {value} is None:"):
                c(f"{tmp} = 0")
            with c.block("else:"):
                c(f"{tmp} = bytearray()")
                self.payload(c, attr, value, tmp, scope, self.raw(attr) if value == self.src(attr) else None)
                c(f"{tmp} = len({tmp})")
            return tmp
        if attr.repeat:
            item = "_x"
            return f"sum({self.one_size(attr.type, item)} for {item} in {value})"
        return self.one_size(attr.type, value)

    def one_size(self, ref: TypeRef, value: str) -> str:
        if ref.kind == RefKind.PRIM:
            return str(PRIMITIVES[ref.prim][1])
        if ref.kind == RefKind.BYTES:
            return f"len({value})"
        if ref.kind == RefKind.STR:
            return f"len({value}.encode({ref.encoding!r}, 'surrogateescape'))"
        if ref.kind == RefKind.SWITCH:
            return (f"(len({value}) if isinstance({value}, (bytes, bytearray, memoryview)) "
                    f"else {value}.size({self.args(ref)[2:]}))")
        target = self.ctx.program.resolved[ref]
        if target.intrinsic:
            return f"{self.ctx.rt(INTRINSICS[target.intrinsic].size)}({value})"
        return f"{value}.size({self.args(ref)[2:]})"
