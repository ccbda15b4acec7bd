"""The record view of a -hot schema root (`-record`): readers of runs of instances straight into
the records of the code that uses the schema (a class it names when reading, whose slots are
the view's fields), without the instances' objects. Over the flat reader's slots
(generator/flat.py), in its two dialects:

- `_record_run(buf, pos, end, verify, max_items, into, *params)`: the instances from pos that
  the view takes (each read flat, its `when` true and, with `verify`, its checksum matching), up
  to `max_items`, as records: (records, the position after them). `into` is the record class,
  or (a holder class, ((slot, source), ...), the record class): each record then in a holder
  whose slots take "start" and "size" (the instance's bytes), "record", "buffer", "verify", or
  None;
- compiled only, `_held_iter(holder)`: an iterator over the record held by a holder of the
  class bound last (`_bind_into`, or a run): an `__iter__` without a Python frame.

A run stops at the first instance the view does not take, which the reader then reads or names;
compiled code stops too wherever a field's value cannot be computed (an integer overflow).
"""
from __future__ import annotations

from .expr import Attribute, Name
from .model import TypeSpec
from .plans.lines import Code
from .pyexpr import INT, OBJECT, PythonSyntax, Scope, Translator

SOURCES = ("start", "size", "record", "buffer", "verify")  # what a holder's slots may take
MARK = "\u27e8"  # opens the stand-in of a struct while translating: a field of it must follow


class ViewSyntax(PythonSyntax):
    """Python's and Cython's spelling, where an enum's value is the number in its slot already."""

    def to_int(self, base: str) -> str:
        return base


class RecordViewEmitter:
    def __init__(self, program, problems, flat, python: bool, crc32: str):
        """`flat`: the FlatEmitter that wrote the root's flat reader (its slots); `crc32`: the
        name of the CRC-32 the dialect calls."""
        self.program = program
        self.problems = problems
        self.flat = flat
        self.python = python
        self.crc32 = crc32
        self.tr = Translator(program, problems, ViewSyntax())
        self.row = "r" if python else "f"

    # -- translation over slots ------------------------------------------------------------
    def slot(self, path: str) -> int | None:
        return self.flat.slots.index(path) if path in self.flat.slots else None

    def value(self, path: str) -> str | None:
        """A field's value from its slots: a number, or bytes (None where absent)."""
        at, size = self.slot(path), self.slot(path + ".size")
        r = self.row
        if size is not None:
            if self.python:
                return f"(None if {r}[{size}] < 0 else buf[{r}[{at}]:{r}[{at}] + {r}[{size}]])"
            return f"(None if {r}[{size}] < 0 else PyBytes_FromStringAndSize(<const char*>b + {r}[{at}], {r}[{size}]))"
        return None if at is None else f"{r}[{at}]"

    def scope(self, spec: TypeSpec) -> Scope:
        """The root's fields as their slots (a struct as a stand-in whose fields are slots), the
        view's params as locals."""
        def field_of(obj: str, _spec, attr) -> str:
            if not obj.startswith(MARK):
                return None
            return self.value(obj[1:] + "." + attr.id) or f"{MARK}{obj[1:]}.{attr.id}"
        names = {p.id: (p.id, INT) for p in spec.record.params}
        local = {a.id: self.value(a.id) or f"{MARK}{a.id}" for a in spec.seq}
        return Scope(spec, obj=f"{MARK}root", locals=local, ancestor_field=field_of, names=names)

    def expr(self, spec: TypeSpec, e, what: str) -> str | None:
        scope = self.scope(spec)
        text = self.tr.translate(e, scope, spec.record.loc)
        if MARK in text or scope.uses & {OBJECT}:
            self.problems.add(spec.record.loc, f"-record {what}: only numbers and bytes of the fields read flat "
                                               "and the view's params")
            return None
        return text

    def checksum(self, spec: TypeSpec) -> tuple[int, int, int, str] | None:
        """(the slots of the stored value and of where the bytes it covers start and end; its
        algorithm), or None when the view names no checksum field read flat."""
        e, path = spec.record.checksum, []
        while isinstance(e, Attribute):
            path.insert(0, e.name)
            e = e.obj
        if not isinstance(e, Name):
            return None
        path.insert(0, e.name)
        owner, attr = spec, None
        for i, name in enumerate(path):
            attr = next((a for a in owner.seq if a.id == name), None)
            if attr is None:
                return None
            if i < len(path) - 1:
                owner = self.flat.ir[owner].field(name).target
        key = ".".join(path)
        found = (self.slot(key), self.slot(key + ".from"), self.slot(key + ".end"))
        if attr.checksum is None or None in found:
            return None
        return (*found, attr.checksum.algorithm)

    # -- the functions ------------------------------------------------------------------------
    def functions(self, spec: TypeSpec) -> list[str] | None:
        """The dialect's functions (Python: static methods of the class, at its indent), or
        None where the view cannot be read flat (a problem says why)."""
        view = spec.record
        self.params = [p.id for p in view.params]
        when = "True" if view.when is None else self.expr(spec, view.when, "when")
        fields = [(name, "[]" if e is None else self.expr(spec, e, f"field {name!r}")) for name, e in view.fields]
        checksum = None
        if view.checksum is not None:
            checksum = self.checksum(spec)
            if checksum is None or checksum[3] != "crc32":
                self.problems.add(view.loc, "-record checksum: a crc32 field of the fields read flat")
                return None
        if when is None or any(code is None for _, code in fields):
            return None
        self.when, self.fields, self.sum = when, fields, checksum
        self.name = self.program.py_name(spec)
        return self.python_functions() if self.python else self.cython_functions()

    def taken(self, c: Code, stop: str) -> None:
        """The instance at pos read flat into the row, `stop` unless the view takes it; `after`
        the position after it."""
        r, fl = self.row, f"{self.name}._flat" if self.python else f"fl_{self.name}"
        if self.python:
            c(f"found = {fl}(buf, pos, end)")
            with c.block("if found is None:"):
                c(stop)
            c(f"after, {r} = found")
        else:
            c(f"after = {fl}(b, pos, end, {r})")
            with c.block("if after < 0:"):
                c(stop)
        check = f"not {self.when}"
        if self.sum is not None:
            value, start, end, _ = self.sum
            covered = f"buf[{r}[{start}]:{r}[{end}]]" if self.python else f"b + {r}[{start}], {r}[{end}] - {r}[{start}]"
            stored = f"{r}[{value}]" if self.python else f"<uint32_t>{r}[{value}]"
            check += f" or verify and {self.crc32}({covered}) != {stored}"
        with c.block(f"if {check}:"):
            c(stop)

    def python_functions(self) -> list[str]:
        params = "".join(f", {p}" for p in self.params)
        c = Code(1)
        c("")
        c("# the record view (-record, generator/record_view.py): runs of instances into records")
        c(f"RECORD_FIELDS = {tuple(n for n, _ in self.fields)!r}")
        c("_held_iter = None  # compiled only")
        c("")
        c("@staticmethod")
        with c.block("def _bind_into(into):"):
            c('"""Compiled only: bind the classes `into` names once (the Python readers look slots up)."""')
            c("return None")
        c("")
        c("@staticmethod")
        with c.block(f"def _record_run(buf, pos, end, verify, max_items, into{params}):"):
            c('"""The instances from pos the record view takes, up to max_items, as records of the')
            c('class `into` names (see generator/record_view.py): (records, the position after them)."""')
            with c.block("if pos < 0 or end > len(buf) or pos > end:"):
                c('raise ValueError(f"range [{pos}, {end}) outside a buffer of {len(buf)} bytes")')
            c("holder = None")
            with c.block("if type(into) is tuple:"):
                c("holder, slots, into = into")
                c(f"slots = [(name, {SOURCES!r}.index(source) if source else 5) for name, source in slots]")
            c("new, out = object.__new__, []")
            with c.block("while pos < end and len(out) < max_items:"):
                self.taken(c, "break")
                c("record = new(into)")
                for name, code in self.fields:
                    c(f"record.{name} = {code}")
                with c.block("if holder is not None:"):
                    c("held, values = new(holder), (pos, after - pos, record, buf, verify, None)")
                    with c.block("for name, source in slots:"):
                        c("setattr(held, name, values[source])")
                    c("record = held")
                c("out.append(record)")
                c("pos = after")
            c("return out, pos")
        return [line.rstrip() for line in c.lines]

    def cython_functions(self) -> list[str]:
        n, slots = self.name, len(self.flat.slots)
        typed = "".join(f", int64_t {p}" for p in self.params)
        passed = "".join(f", {p}" for p in self.params)
        c = Code()
        c("")
        c("")
        c(f"# the record view of {n} (-record, generator/record_view.py): the record class bound, its")
        c("# fields' slot offsets; the holder (class, slots) bound, its slots' offsets and sources")
        c(f"RECORD_FIELDS_{n} = {tuple(name for name, _ in self.fields)!r}")
        c(f"cdef type REC_CLS_{n} = None")
        c(f"cdef Py_ssize_t REC_AT_{n}[{len(self.fields)}]")
        c(f"cdef tuple HOLD_{n} = None")
        c(f"cdef Py_ssize_t HOLD_AT_{n}[16]")
        c(f"cdef int HOLD_SRC_{n}[16]")
        c(f"cdef Py_ssize_t HOLD_N_{n} = 0, HOLD_RECORD_{n} = -1")
        c("")
        c("")
        with c.block(f"def bind_into_{n}(into):"):
            c('"""Bind the classes `into` names (see _record_run): the offsets of their slots, found once')
            c('per class; the holder class, or None."""')
            c(f"global REC_CLS_{n}, HOLD_{n}, HOLD_N_{n}, HOLD_RECORD_{n}")
            c("cdef Py_ssize_t i")
            c("holder = None")
            with c.block("if type(into) is tuple:"):
                c("holder, slots, into = into")
                with c.block(f"if HOLD_{n} is None or HOLD_{n}[0] is not holder or HOLD_{n}[1] is not slots:"):
                    with c.block("if len(slots) > 16:"):
                        c('raise ValueError("a holder of more than 16 slots")')
                    c(f"HOLD_{n}, HOLD_RECORD_{n} = None, -1")
                    with c.block("for i, (name, source) in enumerate(slots):"):
                        c(f"HOLD_AT_{n}[i] = slot_offset(holder, name)")
                        c(f"HOLD_SRC_{n}[i] = {SOURCES!r}.index(source) if source else 5")
                        with c.block('if source == "record":'):
                            c(f"HOLD_RECORD_{n} = HOLD_AT_{n}[i]")
                    c(f"HOLD_N_{n}, HOLD_{n} = len(slots), (holder, slots)")
            with c.block(f"if into is not REC_CLS_{n}:"):
                c(f"REC_CLS_{n} = None")
                with c.block(f"for i, name in enumerate(RECORD_FIELDS_{n}):"):
                    c(f"REC_AT_{n}[i] = slot_offset(into, name)")
                c(f"REC_CLS_{n} = into")
            c("return holder")
        c("")
        c("")
        with c.block(f"cdef Py_ssize_t take_{n}(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, bint verify, "
                     f"int64_t* f{typed}) except -2:"):
            c('"""The position after the instance at pos, read flat into f, where the record view takes it; else -1."""')
            c("cdef Py_ssize_t after")
            self.taken(c, "return -1")
            c("return after")
        c("")
        c("")
        with c.block(f"cdef const uint8_t* bytes_in_{n}(const uint8_t[::1] u8, Py_ssize_t pos, Py_ssize_t end) except? NULL:"):
            with c.block("if pos < 0 or end > u8.shape[0] or pos > end:"):
                c('raise ValueError(f"range [{pos}, {end}) outside a buffer of {u8.shape[0]} bytes")')
            c("return &u8[0] if u8.shape[0] else NULL")
        c("")
        c("")
        with c.block(f"def record_run_{n}(buf, Py_ssize_t pos, Py_ssize_t end, bint verify, Py_ssize_t max_items, "
                     f"into{typed}):"):
            c('"""The instances from pos the record view takes, up to max_items, as records of the class')
            c('`into` names (see generator/record_view.py): (records, the position after them)."""')
            c("cdef const uint8_t[::1] u8 = buf")
            c(f"cdef const uint8_t* b = bytes_in_{n}(u8, pos, end)")
            c(f"cdef int64_t f[{slots}]")
            c("cdef Py_ssize_t after, count = 0, k")
            c("cdef int source")
            c(f"holder = bind_into_{n}(into)")
            c("out = []")
            with c.block("while pos < end and count < max_items:"):
                c(f"after = take_{n}(b, pos, end, verify, f{passed})")
                with c.block("if after < 0:"):
                    c("break")
                with c.block("try:"):
                    c(f"record = alloc(REC_CLS_{n})")
                    for i, (name, code) in enumerate(self.fields):
                        c(f"put(record, REC_AT_{n}[{i}], {code})")
                with c.block("except OverflowError:  # left to the reader"):
                    c("break")
                with c.block("if holder is not None:"):
                    c("held = alloc(holder)")
                    with c.block(f"for k in range(HOLD_N_{n}):"):
                        c(f"source = HOLD_SRC_{n}[k]")
                        c("value = pos if source == 0 else after - pos if source == 1 else None")
                        with c.block("if source >= 2:"):
                            c("value = record if source == 2 else buf if source == 3 else verify if source == 4 else None")
                        c(f"put(held, HOLD_AT_{n}[k], value)")
                    c("record = held")
                c("out.append(record)")
                c("count, pos = count + 1, after")
            c("return out, pos")
        c("")
        c("")
        with c.block(f"def held_iter_{n}(holder):"):
            c('"""An iterator over the record a holder of the class bound holds."""')
            with c.block(f"if HOLD_{n} is None or type(holder) is not HOLD_{n}[0] or HOLD_RECORD_{n} < 0:"):
                c('raise TypeError(f"{type(holder).__name__} is not the holder class bound")')
            c(f"return iter((get(holder, HOLD_RECORD_{n}),))")
        return c.lines

    def attributes(self) -> list[str]:
        """The compiled module's (extension type, attribute, value) of the view's functions."""
        n = self.name
        return [f'({n}, "{attr}", staticmethod({fn}_{n}))' for attr, fn in
                (("_record_run", "record_run"), ("_held_iter", "held_iter"),
                 ("_bind_into", "bind_into"))]
