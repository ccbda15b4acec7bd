"""The flat reader of a -hot schema's root: its fields, and those of the structs it holds, read
into slots without making an object, for code that makes objects of its own (the facade's
records of plain legacy messages). One walk, two dialects: Cython (`fl_<Type>(b, pos, end, f)`
into an int64 array: the position after the instance, or -1) and Python (`_flat(buf, pos,
end)`: (the position after it, the slots as a tuple), or None), each wherever the reader would
raise (cut short, a value `valid:` refuses, a size out of bounds, a struct that does not fill
its size where it must). A number is one slot; a byte field or a processed
value its position and `<name>.size` (-1 where absent); a conditional number `<name>.present`
too; a checksum also `<name>.from` and `<name>.end`, the bytes it covers (checking it is the
caller's: it may not want to). A nested struct's fields are named `<struct>.<field>`. The
compiled module's `FLAT` maps each type it reads to (its capsule, named by the signature; slot
by name); the Python class has `FLAT_SLOTS`.

Types with repeats, params or fields read through their parent are not read flat, nor (in
Python) those with varints.
"""
from __future__ import annotations

from .ir import FixedRun, ValueKind
from .model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, TypeSpec
from .plans.lines import Code
from .plans.read import valid_checks
from .pyexpr import ENCLOSING, OBJECT, Scope

C_SIGNED = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}
SIGNATURE = "Py_ssize_t (const uint8_t*, Py_ssize_t, Py_ssize_t, int64_t*) noexcept nogil"


class FlatEmitter:
    def __init__(self, program, ir, tr, schema, python: bool = False, struct=None):
        self.program = program
        self.ir = ir
        self.tr = tr
        self.schema = schema
        self.python = python
        self.struct = struct  # Python: the module constant of a struct format
        self.fail = "return None" if python else "return -1"

    def flat(self, spec: TypeSpec, seen: frozenset = frozenset()) -> bool:
        """Whether every field reads into slots: numbers, spans, structs that do too."""
        if spec in seen or spec.params or spec.intrinsic or self.program.schema_of[spec] is not self.schema:
            return False
        return all(self.flat_field(spec, attr, seen) for attr in spec.seq)

    def flat_field(self, spec: TypeSpec, attr: Attr, seen: frozenset) -> bool:
        f = self.ir[spec].field(attr.id)
        if attr.repeat or attr.contents is not None or attr.size_eos:
            return False
        if f.value == ValueKind.STRUCT and not attr.lazy and attr.process is None:
            return attr.if_ is None and self.flat(f.target, seen | {spec})
        if f.value == ValueKind.INT:
            return f.width < 8 or f.signed  # (u8 leaves int64)
        if f.value == ValueKind.VARINT:
            return not self.python  # (the Python dialect reads no varints yet)
        return attr.size is not None  # bytes, text, a processed value: a span

    def function(self, spec: TypeSpec) -> list[str] | None:
        """The flat reader, or None where a field's expressions need the objects around it."""
        self.slots: list[str] = []
        self.locals: dict[str, str] = {}
        self.refused = False
        body = Code(0 if self.python else 1)
        body("p, e = pos, end" if self.python else "cdef Py_ssize_t p = pos, e = end")
        self.fields(body, spec, "")
        body(f"return p, ({''.join(f'{self.at(k)}, ' for k in range(len(self.slots)))})" if self.python
             else "return p")
        if self.refused:
            return None
        if self.python:  # the body of _flat
            return body.lines
        name = self.program.py_name(spec)
        head = ["", "", f"cdef Py_ssize_t fl_{name}(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, int64_t* f) "
                        "noexcept nogil:",
                f'    """{spec.name} at pos read into f (slots: FLAT["{name}"]); the position after it, or -1."""']
        decls = [f"    cdef {ctype} {var}" for var, ctype in self.locals.items()]
        return head + decls + body.lines

    def at(self, k: int) -> str:
        """Where slot k is kept while reading: the array's item in C, a local in Python (the slots
        are one tuple at the end)."""
        return f"s{k}" if self.python else f"f[{k}]"

    def slot(self, name: str) -> int:
        self.slots.append(name)
        return len(self.slots) - 1

    def local(self, var: str, ctype: str) -> str:
        self.locals.setdefault(var, ctype)
        return var

    def expr(self, e, scope: Scope, loc) -> str:
        code = self.tr.translate(e, scope, loc)
        if scope.uses & {OBJECT, ENCLOSING}:
            self.refused = True
        return code

    def fields(self, c: Code, spec: TypeSpec, prefix: str) -> None:
        """Read the fields of one `spec` at p, bounded by e."""
        key = prefix.replace(".", "_")
        scope = Scope(spec, obj="self", locals={})
        marks = {a.derive.target for a in spec.seq if a.derive is not None and a.derive.kind == DeriveKind.LENGTH_FROM}
        sums = [a for a in spec.seq if a.checksum is not None]
        froms = {a.checksum.from_field: a for a in sums}
        for op in self.ir[spec].ops:
            if self.python and isinstance(op, FixedRun) and len(op.fields) > 1:  # one unpack for the run
                with c.block(f"if e - p < {op.width}:"):
                    c(self.fail)
                names = [self.local(f"v_{key}{f.id}", "int64_t") for f in op.fields]
                c(f"{', '.join(names)} = {self.struct(op.fmt)}.unpack_from(buf, p)")
                for f, at, var in zip(op.fields, op.offsets, names):
                    scope.locals[f.id] = var
                    self.marks(c, f.attr, key, prefix, marks, froms, f"p + {at}")
                    self.valid(c, f.attr, var, scope)
                    c(f"{self.at(self.slot(prefix + f.id))} = {var}")
                c(f"p += {op.width}")
                continue
            for f in (op.fields if isinstance(op, FixedRun) else (op.field,)):
                self.marks(c, f.attr, key, prefix, marks, froms, "p")
                self.one(c, spec, f.attr, key, prefix, scope)
        for attr in spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                with c.block(f"if p - m_{key}{d.target} != v_{key}{attr.id}:"):
                    c(self.fail)
        for attr in sums:
            c(f"{self.at(self.slot(prefix + attr.id + '.end'))} = p")

    def marks(self, c: Code, attr: Attr, key: str, prefix: str, marks: set, froms: dict, at: str) -> None:
        """Where a field starts, for a length of the rest or a checksum that counts from it."""
        if attr.id in marks:
            c(f"{self.local(f'm_{key}{attr.id}', 'Py_ssize_t')} = {at}")
        if attr.id in froms:
            c(f"{self.at(self.slot(prefix + froms[attr.id].id + '.from'))} = {at}")

    def one(self, c: Code, spec: TypeSpec, attr: Attr, key: str, prefix: str, scope: Scope) -> None:
        """One field, on its condition."""
        var = self.local(f"v_{key}{attr.id}", "int64_t")
        scope.locals[attr.id] = var
        if attr.if_ is None:
            self.field(c, spec, attr, prefix, var, scope)
            return
        present = self.slot(prefix + attr.id + ".present")
        with c.block(f"if {self.expr(attr.if_, scope, attr.loc)}:"):
            c(f"{self.at(present)} = 1")
            self.field(c, spec, attr, prefix, var, scope)
        with c.block("else:"):  # its slots as an absent value's: no bytes, size -1
            c(f"{self.at(present)} = 0")
            c(f"{var} = 0")
            for k in range(present + 1, len(self.slots)):
                c(f"{self.at(k)} = {-1 if self.slots[k].endswith('.size') else 0}")

    def field(self, c: Code, spec: TypeSpec, attr: Attr, prefix: str, var: str, scope: Scope) -> None:
        f = self.ir[spec].field(attr.id)
        if f.value == ValueKind.INT:
            _, width, signed = PRIMITIVES[attr.type.prim]
            with c.block(f"if e - p < {width}:"):
                c(self.fail)
            if self.python:
                c(f"{var}, = {self.struct(('<' if f.endian == 'le' else '>') + f.code)}.unpack_from(buf, p)")
            else:
                load = f"{'le' if f.endian == 'le' else 'be'}(b + p, {width})"
                c(f"{var} = <{C_SIGNED[width]}>{load}" if signed else f"{var} = <int64_t>{load}")
            c(f"p += {width}")
        elif f.value == ValueKind.VARINT:
            kind = f.intrinsic
            if kind.startswith("zigzag"):
                c(f"p = zigzag(b, p, e, {VARINT_MAX[kind]}, &{var})")
            else:
                u = self.local("u", "uint64_t")
                c(f"p = uvarint(b, p, e, {VARINT_MAX[kind]}, &{u})")
                c(f"{var} = <int64_t>{u}")
            with c.block("if p < 0:"):
                c(self.fail)
        else:
            self.span(c, spec, attr, prefix, var, scope)
            return
        self.valid(c, attr, var, scope)
        c(f"{self.at(self.slot(prefix + attr.id))} = {var}")

    def valid(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        if attr.valid is None:
            return
        fails = [cond for cond, _ in valid_checks(self.tr, attr.valid, var, scope)]
        if scope.uses & {OBJECT, ENCLOSING}:
            self.refused = True
        with c.block(f"if {' or '.join(fails)}:"):
            c(self.fail)

    def span(self, c: Code, spec: TypeSpec, attr: Attr, prefix: str, var: str, scope: Scope) -> None:
        """Bytes, a processed value, or a struct: sized by an expression (a struct maybe not)."""
        f = self.ir[spec].field(attr.id)
        inner = f.value == ValueKind.STRUCT and not attr.lazy and attr.process is None
        if attr.size is None:  # an unsized struct: read where it lies
            self.fields(c, f.target, prefix + attr.id + ".")
            return
        c(f"{var} = {self.expr(attr.size, scope, attr.loc)}")
        with c.block(f"if {var} < 0 or {var} > e - p:"):
            c(self.fail)
        if not inner:
            c(f"{self.at(self.slot(prefix + attr.id))} = p")
            c(f"{self.at(self.slot(prefix + attr.id + '.size'))} = {var}")
            c(f"p += {var}")
            return
        outer = self.local(f"e_{prefix.replace('.', '_')}{attr.id}", "Py_ssize_t")
        c(f"{outer}, e = e, p + {var}")
        self.fields(c, f.target, prefix + attr.id + ".")
        if attr.require_eos:
            with c.block("if p != e:"):
                c(self.fail)
        c(f"p, e = e, {outer}")
