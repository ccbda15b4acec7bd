"""The compiled writer of runs of records (`-record-writer`): the records of the code that uses
the schema (instances of a class it names when writing, whose slots are the writer's fields, or
dicts of those fields), each packed at the end of a bytearray by the type's compiled `_pack`
(`pk_<Type>`), the values computed from the record's fields and the writer's params:

    _pack_run(out, records, into, *params) -> (how many were packed, the largest value of the
    `largest` field among them)

A run stops at the first record it leaves to the Python writer: one of another class, a number
that is neither an int nor None (None takes the field's default) or does not fit 64 bits, one
the writer's `when` refuses, a value the compiled `_pack` leaves to the Python one. The
caller then writes all of them in Python, which names what is wrong. Compiled only: the Python
class has `_pack_run = None`.
"""
from __future__ import annotations

from ..model import TypeSpec
from ..plans.lines import Code
from ..pyexpr import INT, WRITER_FIELD_TYPES, PythonSyntax, Scope, Translator


class RecordWriterEmitter:
    def __init__(self, planner, writers):
        """`writers`: the PackEmitter of the module (what `_pack` takes, and how)."""
        self.planner = planner
        self.writers = writers
        self.tr = Translator(planner.program, planner.ctx.problems, PythonSyntax())

    def function(self, spec: TypeSpec) -> list[str]:
        writer, n = spec.record_writer, self.planner.cls(spec)
        names = [name for name, _, _ in writer.fields]
        local = {name: (f"n_{name}" if kind == "number" else f"r_{name}") for name, kind, _ in writer.fields}
        values = {p.id: (f"p_{p.id}", INT) for p in writer.params}  # (never a name of the code's own)
        defaults = Scope(spec, names=dict(values), index="i")
        values.update({name: (local[name], WRITER_FIELD_TYPES[kind]) for name, kind, _ in writer.fields})
        scope = Scope(spec, names=values, index="i")
        typed = "".join(f", int64_t p_{p.id}" for p in writer.params)
        c = Code()
        c("")
        c("")
        c(f"# the writer of runs of {n} (-record-writer, generator/compiled/record_writer.py): the")
        c("# offsets of each record class's fields, found once")
        c(f"WRITER_FIELDS_{n} = {tuple(names)!r}")
        c(f"cdef dict WRITER_INTO_{n} = {{}}")
        c("")
        c("")
        with c.block(f"def pack_run_{n}(bytearray out not None, records, type into not None{typed}):"):
            c('"""The records (a list or tuple of instances of `into` or dicts of their fields) packed one')
            c("after another at the end of out, up to the first left to the Python writer: (how many,")
            c('the largest value of the run\'s `largest` field among them)."""')
            c(f"cdef Py_ssize_t i, k, count = 0, at[{len(names)}]")
            c("cdef int64_t largest = 0")
            for name, kind, _ in writer.fields:
                if kind == "number":
                    c(f"cdef int64_t {local[name]}")
            with c.block("if type(records) is not list and type(records) is not tuple:"):
                c("return 0, 0")
            c(f"offsets = WRITER_INTO_{n}.get(into)")
            with c.block("if offsets is None:"):
                c(f"offsets = tuple([slot_offset(into, name) for name in WRITER_FIELDS_{n}])")
                with c.block(f"if len(WRITER_INTO_{n}) >= 64:  # bounded: a caller making classes anew"):
                    c(f"WRITER_INTO_{n}.clear()")
                c(f"WRITER_INTO_{n}[into] = offsets")
            with c.block(f"for k in range({len(names)}):  # this run's own: a gc callback may write others meanwhile"):
                c("at[k] = offsets[k]")
            raw = [f"r_{name}" for name in names]
            with c.block("try:"):
                with c.block("for r in records:  # (checked against the length at each step: user code may shrink it)"):
                    c("i = count")
                    with c.block("if type(r) is into:"):
                        c(f"{', '.join(raw)}, = {', '.join(f'get(r, at[{k}])' for k in range(len(names)))},")
                    with c.block("elif type(r) is dict:"):
                        c(f"{', '.join(raw)}, = {', '.join(f'r.get({name!r})' for name in names)},")
                    with c.block("else:"):
                        c("break")
                    for name, kind, default in writer.fields:
                        if kind == "list":
                            with c.block(f"if r_{name} is None:"):
                                c(f"r_{name} = ()")
                        elif kind == "number":
                            with c.block(f"if r_{name} is None:"):
                                c(f"{local[name]} = {self.tr.translate(default, defaults, writer.loc)}")
                            with c.block(f"elif type(r_{name}) is int:"):
                                c(f"{local[name]} = r_{name}")
                            with c.block("else:"):
                                c("break")
                    if writer.when is not None:
                        with c.block(f"if not {self.tr.translate(writer.when, scope, writer.loc)}:"):
                            c("break")
                    args = ", ".join(self.values(spec, writer.pack, scope, writer.loc))
                    with c.block(f"if pk_{n}(out, {args}):"):
                        c("break")
                    if writer.largest is not None:
                        big = local[writer.largest]
                        with c.block(f"if count == 0 or {big} > largest:"):
                            c(f"largest = {big}")
                    c("count += 1")
            with c.block("except (OverflowError, AttributeError, TypeError):  # beyond 64 bits; a slot unset; no len"):
                c("pass")
            c("return count, largest")
        return c.lines

    def values(self, spec: TypeSpec, pack: tuple, scope: Scope, loc) -> list[str]:
        """`_pack`'s values in its order: numbers as C integers, a struct's as a tuple."""
        out = []
        for attr, (_, value) in zip(self.writers.args(spec), pack):
            if isinstance(value, tuple):
                inner = self.values(self.planner.ir[spec].field(attr.id).target, value, scope, loc)
                out.append(f"({', '.join(inner)},)")
            else:
                out.append(self.tr.translate(value, scope, loc))
        return out

    def attribute(self, spec: TypeSpec) -> str:
        n = self.planner.cls(spec)
        return f'({n}, "_pack_run", staticmethod(pack_run_{n}))'
