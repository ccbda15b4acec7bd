"""The compiled backend: a Cython module of extension types and readers for the types a schema
marks `-hot`.

Each hot type gets an extension type with the fields of the Python class the Python backend
emits (the runtime's `adopt` gives it the class's methods when the module is installed), a C
function that reads it from a byte pointer, and an entry point that is its `_read`. Wherever
the Python reader would raise, and wherever the input is of a kind this backend leaves alone (a
buffer without a contiguous view, a parent of another class), the C function returns None and
the entry point runs the Python reader from the start, which raises its error with position
and path. Both backends so give the same values and the same errors by construction, without
a second copy of every check's message.
"""
from __future__ import annotations

import hashlib

from .columns import ColumnsEmitter, read_zigzag
from ..flat import FlatEmitter
from ..record_view import RecordViewEmitter
from .pack import PackEmitter
from .record_writer import RecordWriterEmitter
from .pack_columns import HELPERS, PackColumnsEmitter
from ..plans.lines import Code
from ..model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, RefKind, Schema, TypeSpec
from ..ir import FixedRun
from ..plans.read import valid_checks
from ..pyexpr import Scope

INT_PRIMS = {"u1", "u2", "u4", "s1", "s2", "s4", "s8"}  # held in a C int64 (u8 stays a Python int)
C_SIGNED = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}


class CythonPlanner:
    def __init__(self, ctx, schema: Schema):
        self.ctx = ctx  # the Python backend's ModulePlanner: translator, names
        self.program = ctx.program
        self.ir = ctx.ir
        self.schema = schema
        self.hot = [s for s in self.program.walk(schema.root) if s.hot]
        self.columnar = [s for s in self.program.walk(schema.root) if s.columnar]
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

    def depth(self, spec: TypeSpec) -> int:
        return self.ir.hot_depth(spec)

    def ancestor_specs(self, spec: TypeSpec) -> list[TypeSpec | None]:
        return self.ir.hot_ancestors(spec)

    # -- the module ------------------------------------------------------------------------
    def module(self) -> str | None:
        """The .pyx text, or None when the schema marks no type hot. Its -columnar types get their
        compiled columnar reader here too (in a schema without hot types, a columnar type is read
        by its vectorised Python reader alone)."""
        if not self.hot:
            return None
        readers, entries = [], []
        for spec in self.hot:  # the hot pass has refused the fields read otherwise
            readers += self.reader(spec)
        for spec in self.hot:
            entries += self.entry(spec)
        writers = PackEmitter(self)
        views = []  # the compiled attributes of the record view and writers
        packed = [self.cls(s) for s in self.hot if writers.packable(s)]
        for spec in (s for s in self.hot if self.cls(s) in packed):
            entries += writers.function(spec)
        runs = RecordWriterEmitter(self, writers)
        for spec in (s for s in self.hot if s.record_writer is not None):
            if self.cls(spec) not in packed:
                self.ctx.problems.add(spec.record_writer.loc, "-record-writer: the type has no compiled _pack")
                continue
            entries += runs.function(spec)
            views.append(runs.attribute(spec))
        flats = FlatEmitter(self.program, self.ir, self.ctx.tr, self.schema)
        flat = []  # the root, where it is read flat
        if self.schema.root.hot and flats.flat(self.schema.root):
            lines = flats.function(self.schema.root)
            if lines is not None:
                entries += lines + flats.rows_function(self.schema.root)
                flat.append(self.cls(self.schema.root))
                if self.schema.root.record is not None:
                    view = RecordViewEmitter(self.program, self.ctx.problems, flats, False, "crc32_ieee")
                    lines = view.functions(self.schema.root)
                    if lines is not None:
                        entries += lines
                        views += view.attributes()
        columns, packs = ColumnsEmitter(self), PackColumnsEmitter(self)
        for spec in self.columnar:  # the columnar pass has refused the fields read otherwise
            entries += columns.function(spec)
            entries += packs.function(spec)
        if self.columnar:
            entries += HELPERS.splitlines()
        entries += self.attributes(packed, writers, flat, views) + writers.cache_lines()
        classes = sorted(self.classes | {c for c, _ in self.offsets} | {self.cls(s) for s in self.hot})
        hot = [self.cls(s) for s in self.hot]
        head = [
            "# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False",
            "# cython: overflowcheck=True, cdivision=False, auto_pickle=False",
            f"# Generated by kafkacodec's schema compiler from {self.schema.file}",
            f"# (sha256 {self.schema.source_sha256}). Do not edit: change the schema and run `make generate`.",
            f'"""Compiled readers of {self.schema.title or self.schema.id}: the types marked -hot, and the',
            'extension types they read into; the columnar readers and writers of its -columnar types."""',
            "cimport cython",
            "from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize",
            "from cpython.pycapsule cimport PyCapsule_New",
            "from cpython.unicode cimport PyUnicode_1BYTE_DATA, PyUnicode_Decode, PyUnicode_DecodeUTF8",
            "from cpython.weakref cimport PyWeakref_NewRef",
            "from libc.string cimport memcpy, memset",
            "from _exttypes cimport adopt, set_in_type",
            "from _fastread cimport *",
            "from _fastwrite cimport *",
            "",
            "from kafkacodec.runtime.codecs import on_change as PROCESSORS_CHANGED, processor as PROCESSOR",
            "from kafkacodec.runtime.limits import LIMITS",
            "from kafkacodec.runtime.support import LAZY",
            "",
            f'include "_c_{self.schema.id}_source.pxi"',
            "",
            'cdef extern from "Python.h":',
            "    bint PyUnicode_IS_ASCII(object text)",
            "",
            "cdef Py_ssize_t MAX_ITEMS  # LIMITS.max_items for the read under way (see enter)",
            *[f"cdef type PY_{c}  # the Python class" for c in hot],
            *[f"cdef type C_{c}" for c in classes],
            *[f"cdef object P_{c}  # the Python reader" for c in hot],
            *[f"cdef object PP_{c}  # the Python writer" for c in packed],
            *[f"cdef Py_ssize_t {var}" for var in self.offsets.values()],
        ]
        for spec in self.hot:
            head += self.ext_type(spec)
        head += [
            "",
            "",
            "def install(namespace):",
            '    """Give the extension types the API of the Python classes of the generated module and bind',
            '    what the readers use; the (Python class, extension type, reader) triples to install."""',
            "    global " + ", ".join(
                [f"PY_{c}" for c in hot] + [f"C_{c}" for c in classes] + list(self.offsets.values())),
            *[f'    PY_{c} = namespace["{c}"]' for c in hot],
            "    swaps = {" + ", ".join(f"PY_{c}: {c}" for c in hot) + "}",
            "    for pure, ext in swaps.items():",
            "        adopt(ext, pure, swaps, new)",
            *[f'    C_{c} = swaps.get(namespace["{c}"], namespace["{c}"])' for c in classes],
            *[f'    {var} = slot_offset(C_{c}, "{slot}")' for (c, slot), var in self.offsets.items()],
            "    bind_python_readers()",
            "    return [" + ", ".join(f"(PY_{c}, {c}, classmethod(read_{c}))" for c in hot) + "]",
            "",
            "",
            "def bind_python_readers():",
            '    """Bind the readers and writers bad input is handed back to: the Python classes\' (again,',
            '    after a test replaced one)."""',
            "    global " + ", ".join([f"P_{c}" for c in hot] + [f"PP_{c}" for c in packed]),
            *[f'    P_{c} = PY_{c}.__dict__["_read"].__func__' for c in hot],
            *[f'    PP_{c} = PY_{c}.__dict__["_pack"].__func__' for c in packed],
            "",
            "",
            "def new(cls):",
            '    """An instance with no field set, of a Python class or an extension type (which',
            '    object.__new__ refuses)."""',
            "    return alloc(cls)",
            "",
            "",
            "def set_attr(type cls, str name, value):",
            '    """Set an attribute of an extension type, which setattr refuses (a static type)."""',
            "    set_in_type(cls, name, value)",
        ]
        return "\n".join(head + readers + entries) + "\n"

    def attributes(self, packed: list[str], writers: PackEmitter, flat: list[str], views: list[str]) -> list[str]:
        """The compiled writers as capsules for other compiled code, and every attribute the
        module gives the extension types besides their readers."""
        specs = {self.cls(s): s for s in self.hot}
        c = Code()
        for name in packed:
            c(f"cdef bytes SIGNATURE_{name} = {writers.signature(specs[name])!r}.encode()")
        c("")
        c("# the C writers by extension type, each capsule named by its signature: pk_<Type>(out, <_pack's fields>)")
        c("PACKERS = {" + ", ".join(f'{n}: PyCapsule_New(<void*>pk_{n}, SIGNATURE_{n}, NULL)' for n in packed) + "}")
        c("")
        c("")
        with c.block("def compiled_attributes():"):
            c('"""(extension type, attribute, value) of what the compiled code provides besides the')
            c('readers: the writers, the flat readers of many instances, the columnar readers and writers."""')
            found = [f'({n}, "_pack", staticmethod(pack_{n}))' for n in packed]
            found += [f'({n}, "_flat_rows_compiled", staticmethod(flat_rows_{n}))' for n in flat] + views
            for spec in self.columnar:
                n = self.cls(spec)
                found += [f'({n}, "_columns_compiled", staticmethod(columns_{n}))',
                          f'({n}, "_pack_columns_compiled", staticmethod(pack_columns_{n}))']
            c("return [" + ", ".join(found) + "]")
        return ["", ""] + c.lines

    def ext_type(self, spec: TypeSpec) -> list[str]:
        """The extension type standing for the Python class of `spec`: the same fields, every one
        an object (made a member descriptor by `adopt`, which gives it the class's methods too);
        the special methods CPython calls through C slots delegate to the class's."""
        name = self.cls(spec)
        c = Code()
        c("")
        c("")
        c("@cython.trashcan(True)  # a long chain of objects is freed without deep C recursion")
        with c.block(f"cdef class {name}:"):
            c(f"cdef public object {', '.join(('_parent_ref',) + self.ir[spec].slots)}")
            c("cdef object __weakref__")
            c.lines.append("")
            with c.block("def __init__(self, *args, **kwargs):"):
                c(f"PY_{name}.__init__(self, *args, **kwargs)")
            c.lines.append("")
            with c.block("def __eq__(self, other):"):
                c(f"return PY_{name}.__eq__(self, other)")
            c.lines.append("")
            with c.block("def __repr__(self):"):
                c(f"return PY_{name}.__repr__(self)")
        return c.lines

    def slot_read_ancestors(self, spec: TypeSpec, seen: frozenset = frozenset()) -> set[int]:
        """The enclosing objects (1: the parent) whose slots reading `spec` reads, its hot
        children's included: the entry point checks their classes, since a slot is found by
        its offset in the expected class."""
        out = set(self.slots_read.get(spec, ()))
        for child in self.ir[spec].children:
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
        facts = self.ir[spec]
        if facts.needs_pos:
            body(f"put(self, {self.offset(spec, '_pos')}, start)")
        if facts.pinned:
            body(f"put(self, {self.offset(spec, '_pins')}, 0)")
        marks = facts.span_starts  # a bad count is the Python reader's to report
        for op in facts.ops:
            if isinstance(op, FixedRun):
                self.fixed_run(body, spec, [f.attr for f in op.fields], scope, marks)
                group = op.fields
            else:
                if op.field.id in marks:
                    self.local(f"m_{op.field.id}", "Py_ssize_t")
                    body(f"m_{op.field.id} = pos")
                self.field(body, spec, op.field.attr, scope)
                group = (op.field,)
            for f in group:
                scope.locals[f.id] = f"f_{f.id}"
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

    def ancestor_field(self, spec: TypeSpec, specs: dict, obj: str, owner: TypeSpec, attr: Attr) -> str | None:
        """A field of an enclosing object read straight from its slot (its class is checked on
        entry); lazy fields load through their property."""
        if obj not in specs or specs[obj] is not owner or attr.lazy or self.program.schema_of[owner] is not self.schema:
            return None
        self.slots_read[spec].add(list(specs).index(obj) + 1)
        slot = self.offset(owner, attr.storage)
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
            c(f"put(self, {self.offset(spec, attr.storage)}, {var})")
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
        c(f"put(self, {self.offset(spec, attr.storage)}, {var})")

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
            read_zigzag(c, "pos", "end", VARINT_MAX[kind], "z", "q")
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
            least = max(1, self.ir[spec].field(attr.id).min_item_size)
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
