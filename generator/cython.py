"""The compiled backend: a Cython module of readers for the types a schema marks `-hot`.

Each hot type gets a C function that reads it from a byte pointer into an instance of the same
Python class the Python backend emits, and an entry point that takes the place of the class's
`_read`. Wherever the Python reader would raise, and wherever the input is of a kind this backend
leaves alone (a buffer without a contiguous view, a parent of another class), the C function
returns None and the entry point runs the Python reader from the start, which raises its error
with position and path. Both backends so give the same values and the same errors by
construction, without a second copy of every check's message.
"""
from __future__ import annotations

import hashlib

from .plans.lines import Code
from .model import PRIMITIVES, Attr, DeriveKind, RefKind, Schema, TypeSpec
from .plans.module import parent_chain
from .plans.read import VARINT_MAX, is_simple_prim, runs, valid_checks
from .pyexpr import Scope, storage

INT_PRIMS = {"u1", "u2", "u4", "s1", "s2", "s4", "s8"}  # held in a C int64 (u8 stays a Python int)
C_SIGNED = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}


def shape_problem(program, spec: TypeSpec) -> tuple[object, str] | None:
    """The first field (or eager instance) of a hot type that compiled code does not read, with
    why: checked by a pass, so that one run reports it beside every other problem."""
    for attr in spec.seq:
        why = _field_problem(program, attr)
        if why is not None:
            return attr.loc, f"type {spec.name!r} is -hot, but {why}"
    for inst in spec.instances:
        if inst.eager and program.enum_of.get(inst) is not None:
            return inst.loc, f"type {spec.name!r} is -hot, but eager instance {inst.id!r} has an enum"
    return None


def _field_problem(program, attr: Attr) -> str | None:
    ref = attr.type
    target = program.resolved.get(ref) if ref.kind == RefKind.USER else None
    if program.enum_of.get(attr) is not None:
        return f"field {attr.id!r} has an enum"
    if attr.contents is not None:
        return f"field {attr.id!r} has fixed contents"
    if attr.lazy:
        return None  # its bytes are kept whatever they hold
    if attr.process is not None:
        return f"field {attr.id!r} is processed ({attr.process.name}) and not lazy"
    if attr.repeat:
        if target is None or target.intrinsic or attr.size is not None or attr.size_eos:
            return f"repeated field {attr.id!r} is not a repeat of a struct type"
        if attr.repeat == "until":
            return f"field {attr.id!r} repeats until a condition"
        return None
    if ref.kind == RefKind.PRIM:
        return f"field {attr.id!r} is a float" if ref.prim.startswith("f") else None
    if target is not None and target.intrinsic and (attr.size is not None or attr.size_eos):
        return f"varint field {attr.id!r} is sized"
    if ref.kind == RefKind.SWITCH:
        return f"field {attr.id!r} switches between types"
    return None


class CythonPlanner:
    def __init__(self, ctx, schema: Schema):
        self.ctx = ctx  # the Python backend's ModulePlanner: translator, names, type facts
        self.program = ctx.program
        self.schema = schema
        self.hot = [s for s in self.program.walk(schema.root) if s.hot]
        self.offsets: dict[tuple[str, str], str] = {}  # (class, slot) -> C variable
        self.slots_read: dict[TypeSpec, set[int]] = {}  # enclosing objects whose slots a reader reads
        self.locals: dict[str, str] = {}  # C declarations of the reader being planned
        self.classes: set[str] = set()  # generated classes the readers name besides those with slots read

    def cls(self, spec: TypeSpec) -> str:
        return self.program.py_name(spec)

    def offset(self, spec: TypeSpec, slot: str) -> str:
        key = (self.cls(spec), slot)
        if key not in self.offsets:
            self.offsets[key] = f"O_{key[0]}_{slot.lstrip('_')}_{len(self.offsets)}"
        return self.offsets[key]

    def depth(self, spec: TypeSpec, seen: frozenset = frozenset()) -> int:
        """How many enclosing objects reading `spec` passes along: at least its parent (for
        `_parent`), and as many as its fields, eager instances and hot children refer to."""
        depth = max([1, self.ctx.parent_depth(spec)] + [parent_chain(i.value) for i in spec.instances if i.eager])
        for child in self.ctx.child_types(spec):
            if child.hot and child not in seen:
                depth = max(depth, self.depth(child, seen | {spec}) - 1)
        return depth

    def ancestor_specs(self, spec: TypeSpec) -> list[TypeSpec | None]:
        chain, node = [], spec
        for _ in range(self.depth(spec)):
            node = self.program.parent_type(node) if node is not None else None
            chain.append(node)
        return chain

    # -- the module ------------------------------------------------------------------------
    def module(self) -> str | None:
        """The .pyx text, or None when the schema marks no type hot."""
        if not self.hot:
            return None
        readers, entries = [], []
        for spec in self.hot:  # the hot pass has refused the fields read otherwise
            readers += self.reader(spec)
        for spec in self.hot:
            entries += self.entry(spec)
        classes = sorted(self.classes | {c for c, _ in self.offsets} | {self.cls(s) for s in self.hot})
        head = [
            "# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False",
            "# cython: overflowcheck=True, cdivision=False",
            f"# Generated by kafkacodec's schema compiler from {self.schema.file}",
            f"# (sha256 {self.schema.source_sha256}). Do not edit: change the schema and run `make generate`.",
            f'"""Compiled readers of {self.schema.title or self.schema.id}: the types marked -hot."""',
            "from cpython.bytes cimport PyBytes_FromStringAndSize",
            "from cpython.unicode cimport PyUnicode_Decode, PyUnicode_DecodeUTF8",
            "from cpython.weakref cimport PyWeakref_NewRef",
            "from _fastread cimport *",
            "",
            "from kafkacodec.runtime.limits import LIMITS",
            "from kafkacodec.runtime.support import LAZY",
            "",
            f'include "_c_{self.schema.id}_source.pxi"',
            "",
            "cdef Py_ssize_t MAX_ITEMS  # LIMITS.max_items for the read under way (see enter)",
            *[f"cdef type C_{c}" for c in classes],
            *[f"cdef object P_{self.cls(s)}  # the Python reader" for s in self.hot],
            *[f"cdef Py_ssize_t {var}" for var in self.offsets.values()],
            "",
            "",
            "def install(namespace):",
            '    """Bind the classes of the generated module; the (class, reader) pairs to install."""',
            "    global " + ", ".join(
                [f"C_{c}" for c in classes] + [f"P_{self.cls(s)}" for s in self.hot]
                + list(self.offsets.values())),
            *[f'    C_{c} = namespace["{c}"]' for c in classes],
            *[f'    P_{self.cls(s)} = C_{self.cls(s)}.__dict__["_read"].__func__' for s in self.hot],
            *[f'    {var} = slot_offset(C_{c}, "{slot}")' for (c, slot), var in self.offsets.items()],
            "    return [" + ", ".join(f"(C_{self.cls(s)}, classmethod(read_{self.cls(s)}))" for s in self.hot)
            + "]",
        ]
        return "\n".join(head + readers + entries) + "\n"

    def slot_read_ancestors(self, spec: TypeSpec, seen: frozenset = frozenset()) -> set[int]:
        """The enclosing objects (1: the parent) whose slots reading `spec` reads, its hot
        children's included: the entry point checks their classes, since a slot is found by
        its offset in the expected class."""
        out = set(self.slots_read.get(spec, ()))
        for child in self.ctx.child_types(spec):
            if child.hot and child not in seen:
                out |= {k - 1 for k in self.slot_read_ancestors(child, seen | {spec}) if k > 1}
        return out

    def entry(self, spec: TypeSpec) -> list[str]:
        """The `_read` classmethod, through the shared `enter`, and what it reads with: the
        enclosing objects found from the parent, each whose slots are read of its expected class."""
        name = self.cls(spec)
        ancestors = self.ancestor_specs(spec)
        c = Code()
        c("")
        c("")
        with c.block(f"cdef object e_{name}(const uint8_t* b, object buf, Py_ssize_t pos, Py_ssize_t end, "
                     "object a1, Py_ssize_t* after):"):
            for k in range(2, len(ancestors) + 1):
                c(f"a{k} = None if a{k - 1} is None else a{k - 1}._parent")
            checks = []
            for k in sorted(self.slot_read_ancestors(spec)):
                self.classes.add(self.cls(ancestors[k - 1]))
                checks.append(f"type(a{k}) is not C_{self.cls(ancestors[k - 1])}")
            if checks:
                with c.block(f"if {' or '.join(checks)}:"):
                    c("return None")
            args = ", ".join(f"a{k}" for k in range(1, len(ancestors) + 1))
            c(f"return r_{name}(b, buf, pos, end, None if a1 is None else PyWeakref_NewRef(a1, None), {args}, after)")
        c("")
        c("")
        with c.block(f"def read_{name}(cls, buf, pos, end, _parent=None):"):
            c(f'"""{spec.name}: compiled when it can be, else the Python reader (which raises)."""')
            with c.block(f"if cls is not C_{name}:"):
                c(f"return P_{name}(cls, buf, pos, end, _parent)")
            c(f"return enter(e_{name}, P_{name}, cls, buf, pos, end, _parent, LIMITS, &MAX_ITEMS)")
        return c.lines

    # -- one type's reader ----------------------------------------------------------------
    def reader(self, spec: TypeSpec) -> list[str]:
        name = self.cls(spec)
        params = ", ".join(f"object a{k}" for k in range(1, self.depth(spec) + 1))
        c = Code()
        body = Code(1)
        self.locals = {}
        ancestors = tuple(f"a{k}" for k in range(1, self.depth(spec) + 1))
        specs = dict(zip(ancestors, self.ancestor_specs(spec)))
        self.slots_read[spec] = set()
        scope = Scope(spec, obj="self", parent="a1", io=("pos", "start", "end"), ancestors=ancestors,
                      ancestor_field=lambda obj, owner, attr: self.ancestor_field(spec, specs, obj, owner, attr))
        body("self = alloc(C_" + name + ")")
        body(f"put(self, {self.offset(spec, '_parent_ref')}, up)")
        if self.ctx.needs_pos(spec):
            body(f"put(self, {self.offset(spec, '_pos')}, start)")
        if self.ctx.has_pins(spec):
            body(f"put(self, {self.offset(spec, '_pins')}, 0)")
        marks = self.marks(spec)
        for group in runs(spec.seq):
            if is_simple_prim(group[0]):
                self.fixed_run(body, spec, group, scope, marks)
            else:
                attr = group[0]
                if attr.id in marks:
                    self.local(f"m_{attr.id}", "Py_ssize_t")
                    body(f"m_{attr.id} = pos")
                self.field(body, spec, attr, scope)
            for attr in group:
                scope.locals[attr.id] = f"f_{attr.id}"
        for attr in spec.seq:
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                with body.block(f"if pos - m_{d.target} != f_{attr.id}:"):
                    body("return None")
            if attr.checksum is not None:
                body(f"put(self, {self.offset(spec, f'_{attr.id}_computed')}, "
                     f"(buf, m_{attr.checksum.from_field}, pos))")
        for inst in spec.instances:
            if inst.eager:
                # no `except AttributeError` as in Python: an unset parent's field raises, and the
                # Python reader decides
                body(f"put(self, {self.offset(spec, inst.id)}, {self.ctx.tr.translate(inst.value, scope, inst.loc)})")
        body("after[0] = pos")
        body("return self")
        c("")
        c("")
        c(f"cdef object r_{name}(const uint8_t* b, object buf, Py_ssize_t pos, Py_ssize_t end, object up, "
          f"{params}, Py_ssize_t* after):")
        c(f'    """{spec.name}, or None where the Python reader must decide; `up`: a weak reference to a1,')
        c('    made once for all the children of an object."""')
        c("    cdef object me = None  # a weak reference to self, for its children")
        c("    cdef Py_ssize_t start = pos, n, e, q, count, i")
        for var, ctype in self.locals.items():
            c(f"    cdef {ctype} {var}")
        return c.lines + body.lines

    def local(self, var: str, ctype: str) -> None:
        self.locals.setdefault(var, ctype)

    def marks(self, spec: TypeSpec) -> set[str]:
        out = set()
        for a in spec.seq:
            if a.checksum:
                out.add(a.checksum.from_field)
            if a.derive and a.derive.kind == DeriveKind.LENGTH_FROM:
                out.add(a.derive.target)
        return out

    def ancestor_field(self, spec: TypeSpec, specs: dict, obj: str, owner: TypeSpec, attr: Attr) -> str | None:
        """A field of an enclosing object read straight from its slot (its class is checked on
        entry); lazy fields load through their property."""
        if obj not in specs or specs[obj] is not owner or attr.lazy or self.program.schema_of[owner] is not self.schema:
            return None
        self.slots_read[spec].add(list(specs).index(obj) + 1)
        slot = self.offset(owner, storage(attr))
        if self.is_int(attr):
            return f"get_int({obj}, {slot})"
        return f"get({obj}, {slot})"

    def is_int(self, attr: Attr) -> bool:
        if attr.repeat or attr.if_ is not None or self.program.enum_of.get(attr) is not None:
            return False
        if attr.type.kind == RefKind.PRIM:
            return attr.type.prim in INT_PRIMS and attr.process is None and attr.size is None
        target = self.program.resolved.get(attr.type) if attr.type.kind == RefKind.USER else None
        return target is not None and target.intrinsic is not None

    # -- fields -----------------------------------------------------------------------------
    def fixed_run(self, c: Code, spec: TypeSpec, group: list[Attr], scope: Scope, marks: set[str]) -> None:
        width = sum(PRIMITIVES[a.type.prim][1] for a in group)
        with c.block(f"if end - pos < {width}:"):
            c("return None")
        at = 0
        for attr in group:
            _, size, signed = PRIMITIVES[attr.type.prim]
            if attr.id in marks:
                self.local(f"m_{attr.id}", "Py_ssize_t")
                c(f"m_{attr.id} = pos + {at}")
            load = f"{'be' if attr.type.endian == 'be' else 'le'}(b + pos + {at}, {size})"
            var = f"f_{attr.id}"
            if attr.type.prim == "u8":
                self.local(var, "object")
                c(f"{var} = {load}")
            else:
                self.local(var, "int64_t")
                c(f"{var} = <{C_SIGNED[size]}>{load}" if signed else f"{var} = <int64_t>{load}")
            self.valid(c, attr, var, scope)
            c(f"put(self, {self.offset(spec, storage(attr))}, {var})")
            at += size
        c(f"pos += {width}")

    def valid(self, c: Code, attr: Attr, var: str, scope: Scope) -> None:
        if attr.valid is None:
            return
        fails = [cond for cond, _ in valid_checks(self.ctx.tr, attr.valid, var, scope)]
        with c.block(f"if {' or '.join(fails)}:"):
            c("return None")

    def field(self, c: Code, spec: TypeSpec, attr: Attr, scope: Scope) -> None:
        var = f"f_{attr.id}"
        if attr.if_ is not None:
            with c.block(f"if {self.ctx.tr.translate(attr.if_, scope, attr.loc)}:"):
                self.present(c, spec, attr, var, scope)
            with c.block("else:"):
                c(f"{var} = None")
        else:
            self.present(c, spec, attr, var, scope)
        c(f"put(self, {self.offset(spec, storage(attr))}, {var})")

    def present(self, c: Code, spec: TypeSpec, attr: Attr, var: str, scope: Scope) -> None:
        ref = attr.type
        target = self.program.resolved.get(ref) if ref.kind == RefKind.USER else None
        if attr.lazy:
            self.local(var, "object")
            self.bounds(c, attr, scope)
            c(f"put(self, {self.offset(spec, f'_{attr.id}_raw')}, (buf, pos, e))")
            c(f"{var} = LAZY")
            c("pos = e")
            return
        if attr.repeat:
            self.repeat(c, spec, attr, var, target, scope)
            return
        if target is not None and target.intrinsic:
            self.local(var, "int64_t" if attr.if_ is None else "object")
            self.varint(c, target.intrinsic, var)
            return
        if ref.kind == RefKind.PRIM:  # a number read on a condition
            _, size, signed = PRIMITIVES[ref.prim]
            self.local(var, "object")
            with c.block(f"if end - pos < {size}:"):
                c("return None")
            load = f"{'be' if ref.endian == 'be' else 'le'}(b + pos, {size})"
            c(f"{var} = <{C_SIGNED[size]}>{load}" if signed else f"{var} = {load}")
            c(f"pos += {size}")
            self.valid(c, attr, var, scope)
            return
        self.local(var, "object")
        if ref.kind in (RefKind.BYTES, RefKind.STR):
            self.bounds(c, attr, scope)
            if ref.kind == RefKind.BYTES:
                c(f"{var} = PyBytes_FromStringAndSize(<const char*>b + pos, n)")
            elif ref.encoding.upper().replace("_", "-") in ("UTF-8", "UTF8"):
                c(f"{var} = PyUnicode_DecodeUTF8(<const char*>b + pos, n, 'surrogateescape')")
            else:
                c(f"{var} = PyUnicode_Decode(<const char*>b + pos, n, {ref.encoding!r}, 'surrogateescape')")
            c("pos = e")
            return
        if target is not None:
            if attr.size is not None or attr.size_eos:
                self.bounds(c, attr, scope)
                self.child(c, spec, target, var, "e")
                if attr.require_eos:
                    with c.block("if q != e:"):
                        c("return None")
                c("pos = e")
            else:
                self.child(c, spec, target, var, "end")
                c("pos = q")
            return
        raise AssertionError(f"{attr.id}: the hot pass lets through what compiled code does not read")

    def bounds(self, c: Code, attr: Attr, scope: Scope) -> None:
        """n: the field's size, e: its end, or return when they do not fit."""
        if attr.size_eos:
            c("n = end - pos")
        else:
            c(f"n = {self.ctx.tr.translate(attr.size, scope, attr.loc)}")
        with c.block("if n < 0 or n > end - pos:"):
            c("return None")
        c("e = pos + n")

    def varint(self, c: Code, kind: str, var: str) -> None:
        if kind.startswith("zigzag"):
            self.local("z", "int64_t")
            c(f"q = zigzag(b, pos, end, {VARINT_MAX[kind]}, &z)")
        else:
            self.local("u", "uint64_t")
            c(f"q = uvarint(b, pos, end, {VARINT_MAX[kind]}, &u)")
        with c.block("if q < 0:"):
            c("return None")
        c(f"{var} = {'z' if kind.startswith('zigzag') else 'u'}")
        c("pos = q")

    def child(self, c: Code, spec: TypeSpec, target: TypeSpec, var: str, end: str) -> None:
        """Read one `target` at pos (its end at `end`) into var; q: the position after it."""
        if target.hot and self.program.schema_of[target] is self.schema:
            mine = ["self"] + [f"a{k}" for k in range(1, self.depth(spec) + 1)]
            args = ", ".join(mine[:self.depth(target)])
            with c.block("if me is None:"):
                c("me = PyWeakref_NewRef(self, None)")
            c(f"{var} = r_{self.cls(target)}(b, buf, pos, {end}, me, {args}, &q)")
            with c.block(f"if {var} is None:"):
                c("return None")
        else:  # a type read by Python code: its errors are exceptions, which defer the whole read
            c(f"{var}, q = C_{self.cls(target)}._read(buf, pos, {end}, self)")
            self.classes.add(self.cls(target))

    def repeat(self, c: Code, spec: TypeSpec, attr: Attr, var: str, target, scope: Scope) -> None:
        self.local(var, "object")
        self.local("item", "object")
        if attr.repeat == "expr":
            c(f"count = {self.ctx.tr.translate(attr.repeat_expr, scope, attr.loc)}")
            least = max(1, self.ctx.min_size(attr))
            with c.block(f"if count < 0 or count > (end - pos) // {least} or count > MAX_ITEMS:"):
                c("return None")
            c(f"{var} = hidden_list(count)")
            with c.block("for i in range(count):"):
                self.child(c, spec, target, "item", "end")
                c("pos = q")
                c(f"fill({var}, i, item)")
            c(f"shown({var})")
        elif attr.repeat == "eos":
            c(f"{var} = []")
            with c.block("while pos < end:"):
                self.child(c, spec, target, "item", "end")
                c("pos = q")
                c(f"{var}.append(item)")


def source_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
