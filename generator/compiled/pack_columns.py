"""The compiled columnar writer of a `-columnar` type, the inverse of its columnar reader: the
instances start..stop of columns named as `_columns` names them, encoded end to end.

A number is a column of its own (absent: the field's literal `-default`, else required); a
byte or text field is positions into `data[field]` with sizes in `field.size` (-1 for null); a
repeat is its items' start in the item columns, one more than instances, the items' fields
named `repeat.field`. Derived fields (lengths, counts, the length of the rest) are computed,
never read. Each instance is measured, the output allocated once, then written, the length of
the rest measured again where it is written.

It returns None for a value its field cannot hold (a number out of range, a null where the
field cannot be absent): the Python writer then names it. Columns that do not agree (too
short, positions outside their data, item starts that go back) are a ValueError.
"""
from __future__ import annotations

from ..expr import Int, Name, Unary
from ..model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, RefKind, TypeSpec
from ..plans.lines import Code

VARINT_RANGE = {"zigzag32": (-(1 << 31), (1 << 31) - 1), "zigzag64": None, "uvarint32": (0, (1 << 32) - 1)}


class PackColumnsEmitter:
    def __init__(self, planner):
        self.program = planner.program
        self.ir = planner.ir
        self.cls = planner.cls
        self.inputs: dict[str, Attr] = {}  # number column -> its field
        self.byte_fields: list[str] = []
        self.repeats: list[str] = []
        self.spans: list[str] = []  # C locals holding the length of the rest of an instance
        self.kept: list[str] = []  # those of the instances themselves (not of items)

    def function(self, spec: TypeSpec) -> list[str]:
        name = self.cls(spec)
        self.inputs, self.byte_fields, self.repeats, self.spans, self.kept = {}, [], [], [], []
        measure, write = Code(2), Code(2)
        self.instance(measure, spec, "i", "", False)
        self.instance(write, spec, "i", "", True)
        c = Code(1)
        c("import numpy as np")
        with c.block("if start < 0 or stop < start or stop > MAX_INSTANCES:"):
            c('raise ValueError(f"no instances {start}..{stop}")')
        c("cdef Py_ssize_t n = stop - start, i, j")
        c("cdef int64_t v, s = 0, total = 0" + "".join(f", {span}" for span in self.spans))
        for col in self.repeats:  # the item columns are as long as the last instance's items reach
            c(f"cdef const int64_t[::1] {var(col)} = column(cols, {col!r}, stop + 1, None)")
            c(f"cdef Py_ssize_t items_{var(col)} = {var(col)}[stop]")
        for col, attr in self.inputs.items():
            if col in self.repeats:
                continue
            if default(attr) is not None:  # absent: the default, without a column of it
                c(f"cdef bint has_{var(col)} = cols.get({col!r}) is not None")
            c(f"cdef const int64_t[::1] {var(col)} = column(cols, {col!r}, {need(col)}, {default(attr)!r})")
        for span in self.kept:  # an instance's own length of the rest, kept from measuring for the write
            c(f"cdef int64_t[::1] kept_{span} = np.empty(n, np.int64)")
        for col in self.byte_fields:
            c(f"cdef const int64_t[::1] {var(col)}_size = column(cols, {col + '.size'!r}, {need(col)}, None)")
            c(f"cdef const uint8_t[::1] {var(col)}_data = data.get({col!r}, b'')")
        with c.block("for i in range(start, stop):"):
            c("s = 0")
            c.lines += measure.lines
            c("total += s")
        c("out = bytearray(total)")
        c("cdef uint8_t* p = <uint8_t*><char*>out")
        with c.block("for i in range(start, stop):"):
            c.lines += write.lines
        c("return out")
        return ["", "", f"def pack_columns_{name}(dict cols, dict data, Py_ssize_t start, Py_ssize_t stop):",
                f'    """{spec.name} instances start..stop written from columns as {name}._columns names them',
                "    (see generator/compiled/pack_columns.py): the bytes, or None for a value its field cannot",
                '    hold, which the Python writer names."""'] + c.lines

    # -- one instance ------------------------------------------------------------------------
    def instance(self, c: Code, spec: TypeSpec, index: str, prefix: str, writing: bool) -> None:
        """Measure (into `s`) or write (at `p`) the instance at `index`."""
        seq = list(spec.seq)
        for k, attr in enumerate(seq):
            d = attr.derive
            if d is not None and d.kind == DeriveKind.LENGTH_FROM:
                rest = seq[next(j for j, a in enumerate(seq) if a.id == d.target):]
                span = "span_" + var(prefix + attr.id)
                if span not in self.spans:
                    self.spans.append(span)
                if not prefix and span not in self.kept:
                    self.kept.append(span)
                if writing and not prefix:
                    c(f"{span} = kept_{span}[{index} - start]")
                else:
                    c(f"{span} = s")
                    for later in rest:
                        self.field(c, spec, later, index, prefix, False)
                    c(f"{span} = s - {span}")
                    if writing:
                        c(f"s -= {span}")  # s is scratch while writing
                    elif not prefix:
                        c(f"kept_{span}[{index} - start] = {span}")
                self.number(c, attr, span, writing)
                continue
            if any(a.derive is not None and a.derive.kind == DeriveKind.LENGTH_FROM and a.derive.target == attr.id
                   for a in seq[:k]) and not writing:
                return  # measured with the length of the rest
            self.field(c, spec, attr, index, prefix, writing)

    def field(self, c: Code, spec: TypeSpec, attr: Attr, index: str, prefix: str, writing: bool) -> None:
        col = prefix + attr.id
        kind = attr.type.kind
        if kind in (RefKind.BYTES, RefKind.STR):
            if col not in self.byte_fields:
                self.byte_fields.append(col)
            size, data = f"{var(col)}_size[{index}]", f"{var(col)}_data"
            if writing:
                with c.block(f"if {size} > 0:"):
                    c(f"memcpy(p, &{data}[0] + {var(col)}[{index}], <size_t>{size})")
                    c(f"p += {size}")
                return
            self.inputs.setdefault(col, attr)
            if attr.if_ is None and self.ir[spec].field(attr.id).length_field is None:
                with c.block(f"if {size} < 0:"):  # (a length derived from it refuses it first)
                    c("return None")
            with c.block(f"if {size} > 0 and ({var(col)}[{index}] < 0 or {size} > {data}.shape[0] - {var(col)}[{index}]):"):
                c(f'raise ValueError("{col}: positions outside its data")')
            c(f"s += {size} if {size} > 0 else 0")
            return
        target = self.program.resolved.get(attr.type) if kind == RefKind.USER else None
        if target is not None and not target.intrinsic:
            if col not in self.repeats:
                self.repeats.append(col)
            self.inputs.setdefault(col, attr)
            if not writing:
                self.item_starts(c, col, index)
            with c.block(f"for j in range({var(col)}[{index}], {var(col)}[{index} + 1]):"):
                self.instance(c, target, "j", col + ".", writing)
            return
        self.number(c, attr, self.value(c, spec, attr, index, prefix), writing)

    def item_starts(self, c: Code, col: str, index: str) -> None:
        first, after = f"{var(col)}[{index}]", f"{var(col)}[{index} + 1]"
        with c.block(f"if {first} < 0 or {after} < {first} or {after} > items_{var(col)}:"):
            c(f'raise ValueError("{col}: item starts outside its items")')

    def value(self, c: Code, spec: TypeSpec, attr: Attr, index: str, prefix: str) -> str:
        """The C expression of a number field's value: its column, or what it is derived from."""
        d = attr.derive
        if d is None:
            col = prefix + attr.id
            self.inputs.setdefault(col, attr)
            if default(attr) is not None:
                return f"({var(col)}[{index}] if has_{var(col)} else {default(attr)})"
            return f"{var(col)}[{index}]"
        sibling = d.target.name if isinstance(d.target, Name) else d.target
        if not isinstance(sibling, str):
            raise ValueError(f"{spec.name}.{attr.id}: a -columnar type's counts name a sibling field")
        target = prefix + sibling
        if d.kind == DeriveKind.COUNT_OF:  # its items' starts checked before they are subtracted
            self.inputs.setdefault(target, next(a for a in spec.seq if a.id == sibling))
            self.item_starts(c, target, index)
            c(f"v = {var(target)}[{index} + 1] - {var(target)}[{index}] + {d.plus}")
            return "v"
        c(f"v = {var(target)}_size[{index}]")  # length-of: the field is measured before it is read
        absent = "return None" if d.if_absent is None else f"v = {d.if_absent}"
        with c.block("if v < 0:"):
            c(absent)
        if d.plus:
            with c.block("else:"):
                c(f"v += {d.plus}")
        return "v"

    def number(self, c: Code, attr: Attr, value: str, writing: bool) -> None:
        if attr.type.kind == RefKind.PRIM:
            _, width, signed = PRIMITIVES[attr.type.prim]
            if writing:
                put = "put_le" if attr.type.endian == "le" else "put_be"
                c(f"p = {put}(p, <uint64_t>{value}, {width})")
                return
            bounds = value_range(self.program, attr)
            if bounds is not None:
                with c.block(f"if not {bounds[0]} <= {value} <= {bounds[1]}:"):
                    c("return None")
            elif not signed:  # the columns hold int64: u8 up to 2**63 - 1
                with c.block(f"if {value} < 0:"):
                    c("return None")
            c(f"s += {width}")
            return
        kind = self.program.resolved[attr.type].intrinsic
        if writing:
            c(f"p = {'put_zigzag' if kind.startswith('zigzag') else 'put_uvarint'}(p, {value})")
            return
        bounds = value_range(self.program, attr)
        if bounds is not None:
            with c.block(f"if not {bounds[0]} <= {value} <= {bounds[1]}:"):
                c("return None")
        c(f"s += {'zigzag_size' if kind.startswith('zigzag') else 'uvarint_size'}({value})")


def value_range(program, attr: Attr) -> tuple[int, int] | None:
    """The values a number field holds, for the compiled writers to check; None where int64
    holds them all (s8, zigzag64) or cannot (u8, each writer's own case)."""
    if attr.type.kind != RefKind.PRIM:
        return VARINT_RANGE[program.resolved[attr.type].intrinsic]
    _, width, signed = PRIMITIVES[attr.type.prim]
    if width == 8:
        return None
    bits = 8 * width
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def var(col: str) -> str:
    return "c_" + col.replace(".", "__")


def need(col: str) -> str:
    """How many values a column must hold: one per instance, or per item of its repeat."""
    return "items_" + var(col.split(".")[0]) if "." in col else "stop"


def default(attr: Attr) -> int | None:
    """A number field's literal -default, which stands for its absent column."""
    e = attr.default
    if isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, Int):
        return -e.operand.value
    return e.value if isinstance(e, Int) else None


HELPERS = '''

MAX_INSTANCES = 1 << 62  # more than any column holds: stop + 1 stays in range


def column(dict cols, str name, Py_ssize_t need, default):
    """A column as int64, at least `need` long; a field's default where it is absent. Integers
    only: a float or an unsigned 64-bit column would be cut or wrapped."""
    import numpy as np
    found = cols.get(name)
    if found is None:
        if default is None:
            raise ValueError(f"no column {name!r}")
        return np.empty(0, np.int64)  # not read: the default stands for it
    found = np.asarray(found)
    if found.ndim != 1 or found.dtype.kind not in "iu" or found.dtype.kind == "u" and found.dtype.itemsize == 8:
        raise ValueError(f"column {name!r} is not one-dimensional, of integers that fit int64")
    if found.shape[0] < need:
        raise ValueError(f"column {name!r} holds {found.shape[0]} values, fewer than {need}")
    return np.ascontiguousarray(found, np.int64)
'''
