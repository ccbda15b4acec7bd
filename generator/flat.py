"""The flat reader of a -hot schema's root: its fields, and those of the structs it holds, read
into slots without making an object, for code that makes objects of its own (the record view,
generator/record_view.py; the columnar reader's batch headers). One walk, two dialects: Cython (`fl_<Type>(b, pos, end, f)`
into an int64 array: the position after the instance, or -1) and Python (`_flat(buf, pos,
end)`: (the position after it, the slots as a tuple), or None), each wherever the reader would
raise (cut short, a value `valid:` refuses, a size out of bounds, a struct that does not fill
its size where it must). A number is one slot; a byte field or a processed
value its position and `<name>.size` (-1 where absent); a conditional number `<name>.present`
too; a checksum also `<name>.from` and `<name>.end`, the bytes it covers (checking it is the
caller's: it may not want to). A nested struct's fields are named `<struct>.<field>`; the
class's `FLAT_SLOTS` maps each name to its slot.

Types with repeats, params or fields read through their parent are not read flat, nor (in
Python) those with varints.
"""
from __future__ import annotations

from .expr import Int, Name
from .ir import FixedRun, Single, ValueKind
from .model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, TypeSpec
from .compiled.columns import read_zigzag
from .plans.lines import Code
from .plans.read import valid_checks
from .pyexpr import ENCLOSING, OBJECT, Scope

C_SIGNED = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}


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
        self.slot_locals: list[str] = []
        self.locals: dict[str, str] = {}
        self.refused = False
        self.preread = None  # the locals a struct's first run was unpacked into (see merged)
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
                f'    """{spec.name} at pos read into f (slots: FLAT_SLOTS); the position after it, or -1."""']
        decls = [f"    cdef {ctype} {var}" for var, ctype in self.locals.items()]
        return head + decls + body.lines

    def rows_function(self, spec: TypeSpec) -> list[str]:
        """A compiled `_flat_rows`: the flat reader over many instances into one int64 array, a
        row of slots each (after `function` made the reader)."""
        name = self.program.py_name(spec)
        c = Code()
        c("")
        c("")
        with c.block(f"def flat_rows_{name}(const uint8_t[::1] u8, const int64_t[::1] starts, "
                     "const int64_t[::1] ends):"):
            c(f'"""{spec.name} at each start, bounded by its end, read flat: (rows of slots as FLAT_SLOTS names')
            c("them, positions after each), or None at the first the reader would raise on (the Python")
            c('reader names it)."""')
            c("import numpy as np")
            c("cdef Py_ssize_t n = starts.shape[0], i, length = u8.shape[0]")
            with c.block("if ends.shape[0] != n:"):
                c('raise ValueError("starts and ends differ in length")')
            c(f"rows, after = np.empty((n, {len(self.slots)}), np.int64), np.empty(n, np.int64)")
            with c.block("if n == 0:"):
                c("return rows, after")
            with c.block("if length == 0:"):
                c("return None")
            c("cdef int64_t[:, ::1] f = rows")
            c("cdef int64_t[::1] at = after")
            with c.block("for i in range(n):"):
                with c.block("if not 0 <= starts[i] <= ends[i] <= length:"):
                    c("return None")
                c(f"at[i] = fl_{name}(&u8[0], starts[i], ends[i], &f[i, 0])")
                with c.block("if at[i] < 0:"):
                    c("return None")
            c("return rows, after")
        return c.lines

    def at(self, k: int) -> str:
        """Where slot k is kept while reading: the array's item in C, a local in Python (the slots
        are one tuple at the end)."""
        return self.slot_locals[k] if self.python else f"f[{k}]"

    def slot(self, name: str, local: str | None = None) -> int:
        """A new slot; in Python, kept in `local` (a number's own variable) or one of its own."""
        self.slots.append(name)
        self.slot_locals.append(local or f"s{len(self.slots) - 1}")
        return len(self.slots) - 1

    def keep(self, c: Code, name: str, var: str) -> None:
        """A number read into `var` kept as slot `name`: in Python, `var` is the slot."""
        k = self.slot(name, var if self.python else None)
        if not self.python:
            c(f"{self.at(k)} = {var}")

    def local(self, var: str, ctype: str) -> str:
        self.locals.setdefault(var, ctype)
        return var

    def expr(self, e, scope: Scope, loc) -> str:
        code = self.tr.translate(e, scope, loc)
        if scope.uses & {OBJECT, ENCLOSING}:
            self.refused = True
        return code

    def fields(self, c: Code, spec: TypeSpec, prefix: str, preread: list[str] | None = None) -> None:
        """Read the fields of one `spec` at p, bounded by e; `preread`: the locals its first run
        was unpacked into, with the run before it (Python)."""
        key = prefix.replace(".", "_")
        scope = Scope(spec, obj="self", locals={})
        marks = {a.derive.target for a in spec.seq if a.derive is not None and a.derive.kind == DeriveKind.LENGTH_FROM}
        sums = [a for a in spec.seq if a.checksum is not None]
        froms = {a.checksum.from_field: a for a in sums}
        ops = self.ir[spec].ops
        for i, op in enumerate(ops):
            if i == 0 and preread is not None:  # unpacked with the run before this struct
                self.run_fields(c, op, preread, key, prefix, marks, froms, scope)
                continue
            if self.python and isinstance(op, FixedRun) and len(op.fields) > 1:  # one unpack for the run
                inner = self.merged(spec, op, ops[i + 1] if i + 1 < len(ops) else None)
                width = op.width + (inner.width if inner else 0)
                with c.block(f"if e - p < {width}:"):
                    c(self.fail)
                names = [self.local(f"v_{key}{f.id}", "int64_t") for f in op.fields]
                inner_names = [f"v_{key}{ops[i + 1].field.id}_{f.id}" for f in inner.fields] if inner else []
                fmt = op.fmt + (inner.fmt[1:] if inner else "")
                c(f"{', '.join(names + inner_names)} = {self.struct(fmt)}.unpack_from(buf, p)")
                self.run_fields(c, op, names, key, prefix, marks, froms, scope)
                self.preread = inner_names or None
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

    def run_fields(self, c: Code, op: FixedRun, names: list[str], key: str, prefix: str, marks: set,
                   froms: dict, scope: Scope) -> None:
        """The fields of a run unpacked into `names` at p: their checks and slots; p after them."""
        for f, at, var in zip(op.fields, op.offsets, names):
            scope.locals[f.id] = var
            self.marks(c, f.attr, key, prefix, marks, froms, f"p + {at}")
            self.valid(c, f.attr, var, scope)
            self.keep(c, prefix + f.id, var)
        c(f"p += {op.width}")

    def merged(self, spec: TypeSpec, op: FixedRun, following) -> FixedRun | None:
        """The first run of the struct that follows `op`, when one unpack may read both: the
        struct is sized by the run's last field, whose `valid: min` leaves room for that run
        (wherever these bytes are missing, the reader fails too)."""
        if not isinstance(following, Single) or following.field.value != ValueKind.STRUCT:
            return None
        attr, last = following.field.attr, op.fields[-1].attr
        if attr.lazy or attr.process is not None or attr.if_ is not None or not isinstance(attr.size, Name) \
                or attr.size.name != last.id or last.valid is None or not isinstance(last.valid.min, Int):
            return None
        first = self.ir[following.field.target].ops[0] if self.ir[following.field.target].ops else None
        if not isinstance(first, FixedRun) or first.endian != op.endian or first.width > last.valid.min.value:
            return None
        return first

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
                if self.at(k) != var:  # (set above)
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
                read_zigzag(c, "p", "e", VARINT_MAX[kind], var, "p")
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
        self.keep(c, prefix + attr.id, var)

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
        preread, self.preread = self.preread, None
        self.fields(c, f.target, prefix + attr.id + ".", preread)
        if attr.require_eos:
            with c.block("if p != e:"):
                c(self.fail)
        c(f"p, e = e, {outer}")
