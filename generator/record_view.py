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
- compiled only, `_held_iter(holder)`: an iterator over the record a holder holds, for holder
  classes bound (`_bind_into`, or a run) and their subclasses: an `__iter__` without a Python
  frame.

`buf` is bytes (keys and values are bytes of it); a processed field is its stored bytes. A run
stops at the first instance the view does not take, which the reader then reads or names;
compiled code stops too wherever a field's value does not fit 64 bits, and takes positions,
counts and params that fit them.
"""
from __future__ import annotations

from .expr import Attribute, Name
from .model import TypeSpec
from .plans.lines import Code
from .pyexpr import INT, OBJECT, PythonSyntax, Scope, Translator

SOURCES = ("start", "size", "record", "buffer", "verify")  # what a holder's slots may take


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
        """The root's fields as their slots, the view's params as locals. A struct field stands
        for itself by a handle of its own at each use, known by `self.structs`, whose fields are
        found through it (`self.used` notes each handle a field was found through)."""
        root = self.handle("")

        def field_of(obj: str, _spec, attr) -> str | None:
            prefix = self.structs.get(obj)
            if prefix is None:  # not a struct of the view's: the translator refuses it
                return None
            self.used.add(obj)
            return self.value(prefix + attr.id) or self.handle(prefix + attr.id + ".")
        names = {p.id: (f"p_{p.id}", INT) for p in spec.record.params}  # (never a name of the code's own)
        return Scope(spec, obj=root, ancestor_field=field_of, names=names)

    def handle(self, prefix: str) -> str:
        """A new stand-in for the struct whose fields' slots are named from `prefix`."""
        name = f"struct{len(self.structs)}"
        self.structs[name] = prefix
        return name

    def expr(self, spec: TypeSpec, e, what: str) -> str | None:
        self.structs, self.used = {}, set()
        scope = self.scope(spec)
        text = self.tr.translate(e, scope, spec.record.loc)
        # a struct taken as a value (a handle no field was found through), or an object's attribute
        if set(self.structs) - self.used - {scope.obj} or scope.uses & {OBJECT}:
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
        self.params = [f"p_{p.id}" for p in view.params]
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
        r, fl = self.row, "read" if self.python else f"fl_{self.name}"
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
            c('"""Compiled only: what `into` binds, found once (the Python reader looks slots up)."""')
            c("return None")
        c("")
        c("@staticmethod")
        with c.block(f"def _record_run(buf, pos, end, verify, max_items, into{params}):"):
            c('"""The instances from pos the record view takes, up to max_items, as records of the')
            c('class `into` names (see generator/record_view.py): (records, the position after them)."""')
            with c.block("if type(buf) is not bytes:"):
                c('raise TypeError(f"a record run reads bytes, not {type(buf).__name__}")')
            with c.block("if pos < 0 or end > len(buf) or pos > end:"):
                c('raise ValueError(f"range [{pos}, {end}) outside a buffer of {len(buf)} bytes")')
            c("holder, verify = None, bool(verify)")
            with c.block("if type(into) is tuple:"):
                c("holder, slots, into = into")
                with c.block("if len(slots) > 16:"):
                    c('raise ValueError("a holder of more than 16 slots")')
                c(f"slots = [(name, {SOURCES!r}.index(source) if source else 5) for name, source in slots]")
            c(f"new, read, out = object.__new__, {self.name}._flat, []")
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
        n, slots, nf = self.name, len(self.flat.slots), len(self.fields)
        typed = "".join(f", int64_t {p}" for p in self.params)
        passed = "".join(f", {p}" for p in self.params)
        c = Code()
        c("")
        c("")
        c(f"# the record view of {n} (-record, generator/record_view.py): what each `into` binds, found")
        c("# once and kept whole (record class, holder class or None, the offsets of the record's fields,")
        c("# of the holder's slots and their sources); the offset of the record in each holder class")
        c("from weakref import WeakKeyDictionary")
        c(f"RECORD_FIELDS_{n} = {tuple(name for name, _ in self.fields)!r}")
        c(f"cdef dict INTO_{n} = {{}}")
        c(f"HELD_{n} = WeakKeyDictionary()  # holder class -> (its record's slot, that slot's offset)")
        c(f"cdef type LAST_HELD_{n} = None  # the class _held_iter served last, and its offset")
        c(f"cdef Py_ssize_t LAST_AT_{n} = 0")
        c("")
        c("")
        with c.block(f"def bind_into_{n}(into):"):
            c('"""What `into` binds (see _record_run), found once: a class that object.__new__ makes, its')
            c('slots its own (TypeError for others; ValueError for an unknown source or over 16 slots)."""')
            c(f"global LAST_HELD_{n}")
            c(f"bound = INTO_{n}.get(into)")
            with c.block("if bound is not None:"):
                c("return bound")
            c("holder, slots, record = into if type(into) is tuple else (None, (), into)")
            with c.block("for cls in (record, holder) if holder is not None else (record,):"):
                with c.block("if not isinstance(cls, type):"):
                    c('raise TypeError(f"{cls!r} is not a class")')
                c("object.__new__(cls)  # refused where a class needs its own allocator")
            with c.block("if len(slots) > 16:"):
                c('raise ValueError("a holder of more than 16 slots")')
            c(f"fields = tuple([slot_offset(record, name) for name in RECORD_FIELDS_{n}])")
            c("held = tuple([slot_offset(holder, name) for name, _ in slots])")
            c(f"sources = tuple([{SOURCES!r}.index(source) if source else 5 for _, source in slots])")
            c("bound = (record, holder, fields, held, sources)")
            with c.block(f"if len(INTO_{n}) >= 64:  # bounded: a caller making classes anew"):
                c(f"INTO_{n}.clear()")
            c(f"INTO_{n}[into] = bound")
            with c.block("if 2 in sources:"):
                c(f"HELD_{n}[holder] = slots[sources.index(2)][0], held[sources.index(2)]")
                c(f"LAST_HELD_{n} = None  # it may be this class, bound again")
            c("return bound")
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
        with c.block(f"def record_run_{n}(bytes buf not None, Py_ssize_t pos, Py_ssize_t end, bint verify, Py_ssize_t max_items, "
                     f"into{typed}):"):
            c('"""The instances from pos the record view takes, up to max_items, as records of the class')
            c('`into` names (see generator/record_view.py): (records, the position after them)."""')
            with c.block("if pos < 0 or end > len(buf) or pos > end:"):
                c('raise ValueError(f"range [{pos}, {end}) outside a buffer of {len(buf)} bytes")')
            c("cdef const uint8_t* b = <const uint8_t*><const char*>buf")
            c(f"cdef int64_t f[{slots}]")
            c(f"cdef Py_ssize_t after, count = 0, k, held_n, rec_at[{max(nf, 1)}], held_at[16]")
            c("cdef int held_src[16]")
            c("# the offsets are this run's own: a gc callback may bind other classes meanwhile")
            c(f"record_cls, holder, fields, held, sources = bind_into_{n}(into)")
            with c.block(f"for k in range({nf}):"):
                c("rec_at[k] = fields[k]")
            c("held_n = len(held)")
            with c.block("for k in range(held_n):"):
                c("held_at[k], held_src[k] = held[k], sources[k]")
            c("out = []")
            with c.block("while pos < end and count < max_items:"):
                c(f"after = take_{n}(b, pos, end, verify, f{passed})")
                with c.block("if after < 0:"):
                    c("break")
                with c.block("try:"):
                    c("record = alloc(record_cls)")
                    for i, (name, code) in enumerate(self.fields):
                        c(f"put(record, rec_at[{i}], {code})")
                with c.block("except OverflowError:  # left to the reader"):
                    c("break")
                with c.block("if holder is not None:"):
                    c("one = alloc(holder)")
                    with c.block("for k in range(held_n):"):
                        c("value = pos if held_src[k] == 0 else after - pos if held_src[k] == 1 else None")
                        with c.block("if held_src[k] >= 2:"):
                            c("value = record if held_src[k] == 2 else buf if held_src[k] == 3 else verify "
                              "if held_src[k] == 4 else None")
                        c("put(one, held_at[k], value)")
                    c("record = one")
                c("out.append(record)")
                c("count, pos = count + 1, after")
            c("return out, pos")
        c("")
        c("")
        with c.block(f"def held_iter_{n}(holder):"):
            c('"""An iterator over the record a holder holds, for the holder classes bound and their')
            c('subclasses (TypeError for others)."""')
            c(f"global LAST_HELD_{n}, LAST_AT_{n}")
            with c.block(f"if type(holder) is LAST_HELD_{n}:  # (most often: one class, iterated batch after batch)"):
                c(f"return iter((get(holder, LAST_AT_{n}),))")
            c(f"found = HELD_{n}.get(type(holder))")
            with c.block("if found is None:  # a subclass: its own offset of the slot its base binds"):
                c(f"name = next((HELD_{n}[k][0] for k in type(holder).__mro__ if k in HELD_{n}), None)")
                with c.block("if name is None:"):
                    c('raise TypeError(f"{type(holder).__name__} is not a holder class bound")')
                c(f"found = HELD_{n}[type(holder)] = name, slot_offset(type(holder), name)")
            c(f"LAST_AT_{n}, LAST_HELD_{n} = found[1], type(holder)")
            c("return iter((get(holder, found[1]),))")
        return c.lines

    def attributes(self) -> list[str]:
        """The compiled module's (extension type, attribute, value) of the view's functions."""
        n = self.name
        return [f'({n}, "{attr}", staticmethod({fn}_{n}))' for attr, fn in
                (("_record_run", "record_run"), ("_held_iter", "held_iter"),
                 ("_bind_into", "bind_into"))]
