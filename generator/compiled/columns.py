"""The compiled columnar reader of a `-columnar` type: every instance of many sections at once
(instances laid end to end, `counts[i]` of them from `starts[i]` to exactly `ends[i]`, as the
records of batches lie), walking each section once and filling the columns the Python
`_columns` gives, with the same names and types. A repeated field's items are walked (and
checked) with their instance, then read into their own columns in a second pass over the items
alone, once they are counted.

It returns None wherever the input is not regular (a varint too long or cut short, a size or
count out of bounds or over the limit of items, a length that does not span its instance, a
section not filled exactly),
and the Python readers then run and name the damage, as the compiled object readers do.
"""
from __future__ import annotations

from ..plans.lines import Code
from ..model import PRIMITIVES, VARINT_MAX, Attr, DeriveKind, RefKind, TypeSpec
from ..shapes import field_ref


def read_zigzag(c: Code, at: str, end: str, max_bytes: int, value: str, after: str) -> None:
    """The zigzag varint at `at` into `value`, `after` the position after it (-1 as the runtime's
    zigzag gives): a one-byte varint, most lengths and deltas, read inline (the C compiler does
    not inline the runtime's at every call)."""
    with c.block(f"if {at} < {end} and b[{at}] < 0x80:"):
        c(f"{value} = <int64_t>(b[{at}] >> 1) ^ -<int64_t>(b[{at}] & 1)")
        c(f"{after} = {at} + 1")
    with c.block("else:"):
        c(f"{after} = zigzag(b, {at}, {end}, {max_bytes}, &{value})")

C_INT = {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}
C_UINT = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
DTYPE = {"int32_t": "np.int32", "int64_t": "np.int64"}


class ColumnsEmitter:
    def __init__(self, planner):
        self.program = planner.program
        self.ir = planner.ir
        self.cls = planner.cls
        self.columns: dict[str, str] = {}  # column -> C type, in order of first use
        self.sizes: dict[str, str] = {}  # a byte field's `.size` column -> the length column it is
        self.values: list[str] = []  # C locals holding a field's value in the instance being read

    def function(self, spec: TypeSpec) -> list[str]:
        name = self.cls(spec)
        self.columns, self.sizes, self.values = {}, {}, []
        repeats = [a for a in spec.seq if a.repeat]
        walk = Code(3)
        self.fields(walk, spec, "r", True, "")
        fills = {}
        for attr in repeats:
            fills[attr.id] = Code(3)
            self.fields(fills[attr.id], self.program.resolved[attr.type], "t", True, attr.id + ".")
        c = Code(1)
        c("import numpy as np")
        c("cdef Py_ssize_t nb = starts.shape[0], length = u8.shape[0], n = 0, i, k, j, r = 0, t, p, e, q")
        c("cdef const uint8_t* b = &u8[0] if length else NULL")
        c("cdef int64_t v" + "".join(f", {var}" for var in self.values))
        c("cdef uint64_t u")
        for attr in repeats:
            c(f"cdef int64_t total_{attr.id} = 0")
        with c.block("if ends.shape[0] != nb or counts.shape[0] != nb:"):
            c('raise ValueError("starts, ends and counts differ in length")')
        least = max(1, self.ir.min_type_size(spec))
        with c.block("for i in range(nb):"):  # every count fits its section: the columns are bounded
            with c.block(f"if counts[i] < 0 or starts[i] < 0 or ends[i] > length or starts[i] > ends[i] "
                         f"or counts[i] > (ends[i] - starts[i]) // {least} or counts[i] > max_items:"):
                c("return None")
            c("n += counts[i]")
        c("cols = {}")
        for col, ctype in self.columns.items():
            if "." not in col:
                self.allocate(c, col, ctype, "n + 1" if any(a.id == col for a in repeats) else "n")
        for attr in repeats:
            c(f"cdef int64_t[::1] at_{attr.id} = np.empty(n, np.int64)  # where each one's items start")
        with c.block("for i in range(nb):"):
            c("p, e = starts[i], ends[i]")
            with c.block("for k in range(counts[i]):"):
                c.lines += walk.lines
                c("r += 1")
            with c.block("if p != e:"):
                c("return None")
        for attr in repeats:
            c(f"{self.var(attr.id)}[n] = total_{attr.id}")
            for col, ctype in self.columns.items():
                if col.startswith(attr.id + "."):
                    self.allocate(c, col, ctype, f"total_{attr.id}")
            c("t = 0")
            with c.block("for r in range(n):"):  # checked by the walk: bounded by the buffer only
                c(f"p, e = at_{attr.id}[r], length")
                first = self.var(attr.id)
                with c.block(f"for j in range({first}[r + 1] - {first}[r]):"):
                    c.lines += fills[attr.id].lines
                    c("t += 1")
        for size, source in self.sizes.items():
            c(f"cols[{size!r}] = cols[{source!r}]")
        c("return cols")
        return ["", "", f"def columns_{name}(const uint8_t[::1] u8, const int64_t[::1] starts, "
                        f"const int64_t[::1] ends, const int64_t[::1] counts, Py_ssize_t max_items):",
                f'    """The columns {name}._columns gives, of the instances laid end to end in each',
                "    section [starts[i], ends[i]) (counts[i] of them), walking each section once; byte",
                "    fields' positions as int64. None where the input is not regular, for the Python",
                '    readers to name."""'] + c.lines

    def allocate(self, c: Code, col: str, ctype: str, count: str) -> None:
        c(f"cols[{col!r}] = np.empty({count}, {DTYPE[ctype]})")
        c(f"cdef {ctype}[::1] {self.var(col)} = cols[{col!r}]")

    @staticmethod
    def var(col: str) -> str:
        return "c_" + col.replace(".", "__")

    def column(self, col: str, ctype: str) -> str:
        self.columns.setdefault(col, ctype)
        return self.var(col)

    # -- one instance ------------------------------------------------------------------------
    def fields(self, c: Code, spec: TypeSpec, index: str, store: bool, prefix: str) -> None:
        """Read one instance at `p` (bounded by `e`), storing its columns at `index` if `store`."""
        earlier: dict[str, Attr] = {}
        held: dict[str, str] = {}  # field -> the C local holding its value
        spans = {a.derive.target: a for a in spec.seq if a.derive and a.derive.kind == DeriveKind.LENGTH_FROM}
        mark = "q" + prefix.replace(".", "_")  # `q` itself is declared with the positions
        if spans and prefix and mark not in self.values:
            self.values.append(mark)
        for attr in spec.seq:
            if attr.id in spans:
                c(f"{mark} = p  # {spans[attr.id].id} counts the bytes from here")
            self.field(c, spec, attr, earlier, held, index, store, prefix)
            earlier[attr.id] = attr
        for attr in spans.values():
            with c.block(f"if p - {mark} != {held[attr.id]}:"):
                c("return None")

    def field(self, c: Code, spec: TypeSpec, attr: Attr, earlier: dict, held: dict, index: str, store: bool,
              prefix: str) -> None:
        col = prefix + attr.id
        kind = attr.type.kind
        if kind in (RefKind.BYTES, RefKind.STR):  # sized by an earlier field, absent where that is negative
            length = field_ref(self.program, attr.size, earlier)
            size = held[length]
            optional = attr.if_ is not None
            with c.block(f"if {size} > e - p" + ("" if optional else f" or {size} < 0") + ":"):
                c("return None")
            if store:
                c(f"{self.column(col, 'int64_t')}[{index}] = p")
                self.sizes[col + ".size"] = prefix + length
            c(f"p += {size} if {size} > 0 else 0" if optional else f"p += {size}")
            return
        target = self.program.resolved.get(attr.type) if kind == RefKind.USER else None
        if target is not None and not target.intrinsic:
            self.repeat(c, spec, attr, earlier, held, index, store, target)
            return
        if kind == RefKind.PRIM:
            _, width, signed = PRIMITIVES[attr.type.prim]
            little = (attr.type.endian or spec.endian) == "le"
            ctype = "int64_t" if width == 8 or (width == 4 and not signed) else "int32_t"
            with c.block(f"if e - p < {width}:"):
                c("return None")
            raw = "b[p]" if width == 1 else f"{'le' if little else 'be'}(b + p, {width})"
            c(f"v = <{C_INT[width] if signed else C_UINT[width]}>{raw}")
            c(f"p += {width}")
        else:  # a varint the runtime reads
            max_bytes = VARINT_MAX[target.intrinsic]
            ctype = "int32_t" if max_bytes <= 5 else "int64_t"
            if target.intrinsic.startswith("zigzag"):
                read_zigzag(c, "p", "e", max_bytes, "v", "p")
            else:
                c(f"p = uvarint(b, p, e, {max_bytes}, &u)")
                c("v = <int64_t>u")
            with c.block("if p < 0:"):
                c("return None")
            if ctype == "int32_t":  # the low 32 bits, as the Python reader keeps them
                c("v = <int32_t>v")
        var = ("f_" + prefix.replace(".", "_") + attr.id) if prefix else "f_" + attr.id
        if var not in self.values:
            self.values.append(var)
        c(f"{var} = v")
        held[attr.id] = var
        if store:
            c(f"{self.column(col, ctype)}[{index}] = v")

    def repeat(self, c: Code, spec: TypeSpec, attr: Attr, earlier: dict, held: dict, index: str, store: bool,
               target: TypeSpec) -> None:
        """A counted repeat: the count checked against the bytes left and the limit, the items
        walked and checked now; the second pass fills their columns."""
        count = held[field_ref(self.program, attr.repeat_expr, earlier)]
        least = max(1, self.ir[spec].field(attr.id).min_item_size)
        with c.block(f"if {count} < 0 or {count} > (e - p) // {least} or {count} > max_items:"):
            c("return None")
        c(f"{self.column(attr.id, 'int64_t')}[{index}] = total_{attr.id}")
        c(f"total_{attr.id} += {count}")
        c(f"at_{attr.id}[{index}] = p")
        with c.block(f"for j in range({count}):"):
            self.fields(c, target, "", False, attr.id + ".")
