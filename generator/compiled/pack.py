"""The compiled writers of the -hot types: `_pack(out, <fields>)` as the Python backend emits it,
in C, for the types whose fields it writes: numbers (on a condition too), varints, bytes and
text sized by a derived length, a struct sized by one, counted repeats, a derived length of the
rest, a CRC-32 of the rest, and a processed value (a compressed one) given as its bytes, written
as they are when its processor leaves bytes as they are. Other types keep the Python `_pack`.

Each type gets `pk_<Type>(out, <fields>)`, a C function with the numbers typed, which other
compiled code calls through a capsule (`PACKERS`, named by the signature), and `pack_<Type>`,
the `_pack` it installs. Wherever the Python writer would raise or take a path of its own (a
value out of range, an object where it takes a tuple, bytes-likes other than bytes, a processor
that changes the bytes), the C function puts `out` back as it was and returns 1, and the Python
writer runs and names it: both give the same bytes and the same errors by construction.

A derived length or CRC that depends on what follows it is written as room (zeros) and patched
once that is written; a varint's room is its widest, and what follows moves back over what it
does not take.
"""
from __future__ import annotations

from .pack_columns import default, value_range
from ..expr import Binary, Int, names_in
from ..ir import ValueKind
from ..model import VARINT_MAX, Attr, DeriveKind, RefKind, TypeSpec
from ..plans.lines import Code
from ..pyexpr import OBJECT, Scope
from ..shapes import field_ref

CHECKSUMS = {"crc32": "crc32_ieee"}  # the C function of each checksum algorithm compiled writers compute


class PackEmitter:
    def __init__(self, planner):
        self.planner = planner
        self.program = planner.program
        self.ir = planner.ir
        self.cls = planner.cls
        self.tr = planner.ctx.tr
        self.caches: list[tuple[str, int]] = []  # (name, argument count) of each processed field's memory
        self.packable_types: dict[TypeSpec, bool] = {}

    # -- which types ---------------------------------------------------------------------------
    def packable(self, spec: TypeSpec, seen: frozenset = frozenset()) -> bool:
        """Whether the compiled writer writes `spec` (asked of each type by the module, of each
        field's by `kind`: answered once for a type asked on its own)."""
        if seen:
            return self.decide_packable(spec, seen)
        if spec not in self.packable_types:
            self.packable_types[spec] = self.decide_packable(spec, seen)
        return self.packable_types[spec]

    def decide_packable(self, spec: TypeSpec, seen: frozenset) -> bool:
        if spec in seen or not spec.hot or spec.params or self.program.schema_of[spec] is not self.planner.schema:
            return False
        if not self.planner.ctx.packable(spec):  # the Python writer needs the object
            return False
        if not all(self.kind(spec, a, seen | {spec}) is not None for a in spec.seq):
            return False
        rooms = [a for a in spec.seq if self.room(spec, a)]
        varint_rooms = [a for a in rooms if self.ir[spec].field(a.id).value == ValueKind.VARINT]
        # a varint's room moves what follows it: then it is the only thing patched
        return not varint_rooms or (len(rooms) == 1 and not any(a.checksum for a in spec.seq))

    def kind(self, spec: TypeSpec, attr: Attr, seen: frozenset = frozenset()) -> str | None:
        """What the compiled writer makes of a field: "int", "checksum", "bytes", "processed",
        "struct", "repeat", or None where it does not write such a field."""
        if attr.contents is not None or attr.size_eos:
            return None
        f = self.ir[spec].field(attr.id)
        d = attr.derive
        if f.value in (ValueKind.INT, ValueKind.VARINT):
            if attr.repeat or attr.process or (f.value == ValueKind.INT and f.width == 8 and not f.signed):
                return None  # (u8 leaves int64)
            if attr.if_ is not None and (d is not None or not self.condition_ok(spec, attr)):
                return None
            if attr.checksum is not None:
                return "checksum" if attr.checksum.algorithm in CHECKSUMS and d is None else None
            if d is not None and d.kind in (DeriveKind.LENGTH_OF, DeriveKind.COUNT_OF) \
                    and self.sibling(spec, d.target) is None:
                return None
            return "int"
        sized = self.ir[spec].field(attr.id).length_field
        if f.value == ValueKind.STRUCT and attr.repeat == "expr":
            counted = any(a.derive is not None and a.derive.kind == DeriveKind.COUNT_OF
                          and self.sibling(spec, a.derive.target) is attr for a in spec.seq)
            plain = counted and attr.if_ is None and attr.process is None
            return "repeat" if plain and self.packable(f.target, seen) else None
        if attr.repeat or sized is None:
            return None
        absent = sized.derive.if_absent
        if attr.if_ is not None and (absent is None or absent >= 0 or not self.absent_below_zero(spec, attr, sized)):
            return None  # absent exactly where its length is negative, as its if-absent writes it
        if attr.process is not None:  # its arguments are numbers, which the writer compares
            numbers = all(self.tr.typed(a, self.scope(spec), attr.loc)[1].kind in ("int", "bool")
                          for a in attr.process.args)
            return "processed" if numbers and all(self.translatable(spec, a) for a in attr.process.args) else None
        if f.value in (ValueKind.BYTES, ValueKind.STR):
            return "bytes"
        if f.value == ValueKind.STRUCT and not attr.lazy and attr.if_ is None:
            return "struct" if self.packable(f.target, seen) else None
        return None

    def absent_below_zero(self, spec: TypeSpec, attr: Attr, length: Attr) -> bool:
        """Whether a field's `if` is `<its length> >= 0`, which the writer takes for granted."""
        e = attr.if_
        earlier = {a.id: a for a in spec.seq[:spec.seq.index(attr)]}
        return (isinstance(e, Binary) and e.op == ">=" and isinstance(e.right, Int) and e.right.value == 0
                and field_ref(self.program, e.left, earlier) == length.id)

    def room(self, spec: TypeSpec, attr: Attr) -> bool:
        """A derived number known only once what follows is written: a length of the rest, or
        of a struct."""
        d = attr.derive
        return d is not None and (d.kind == DeriveKind.LENGTH_FROM or d.kind == DeriveKind.LENGTH_OF
                                  and self.kind(spec, self.sibling(spec, d.target)) == "struct")

    def sibling(self, spec: TypeSpec, target) -> Attr | None:
        name = getattr(target, "name", target)
        return next((a for a in spec.seq if a.id == name), None)

    def scope(self, spec: TypeSpec) -> Scope:
        return Scope(spec, obj="self", locals={a.id: self.value(a) for a in spec.seq})

    def translatable(self, spec: TypeSpec, e) -> bool:
        scope = self.scope(spec)
        self.tr.translate(e, scope, None)
        return OBJECT not in scope.uses

    def condition_ok(self, spec: TypeSpec, attr: Attr) -> bool:
        """A condition on earlier fields the writer is given (not derived ones)."""
        earlier = {a.id for a in spec.seq[:spec.seq.index(attr)] if a.derive is None and a.checksum is None}
        return {n.name for n in names_in(attr.if_)} <= earlier and self.translatable(spec, attr.if_)

    def args(self, spec: TypeSpec) -> list[Attr]:
        """The fields `_pack` takes, in its order."""
        return [a for a in spec.seq if not (a.derive or a.checksum)]

    def is_int(self, spec: TypeSpec, attr: Attr) -> bool:
        return self.ir[spec].field(attr.id).value in (ValueKind.INT, ValueKind.VARINT)

    def value(self, attr: Attr) -> str:
        return f"a_{attr.id}" if attr.derive is None and attr.checksum is None else f"w_{attr.id}"

    def signature(self, spec: TypeSpec) -> str:
        """The C signature of pk_<Type>, which its capsule carries as its name."""
        params = ", ".join("int64_t" if self.is_int(spec, a) else "object" for a in self.args(spec))
        return f"int (bytearray, {params}) except -1"

    # -- one type ------------------------------------------------------------------------------
    def function(self, spec: TypeSpec) -> list[str]:
        name = self.cls(spec)
        args = self.args(spec)
        params = ", ".join(f"{'int64_t' if self.is_int(spec, a) else 'object'} a_{a.id}" for a in args)
        self.locals: dict[str, str] = {}
        self.globals: list[str] = []  # module variables it sets
        body = Code(1)
        numbers = [a for a in spec.seq if self.is_int(spec, a)]  # derived from the others: checked last
        for attr in [a for a in spec.seq if a not in numbers] + numbers:
            self.check(body, spec, attr)
        run: list[Attr] = []
        for attr in spec.seq:
            if self.kind(spec, attr) in ("repeat", "struct"):
                self.flat(body, spec, run)
                run = []
                self.nested(body, spec, attr)
            else:
                run.append(attr)
        self.flat(body, spec, run)
        for attr in reversed([a for a in spec.seq if self.room(spec, a)]):
            self.patch(body, spec, attr)
        for attr in (a for a in spec.seq if a.checksum):
            self.checksum(body, spec, attr)
        body("return 0")
        c = Code(1)
        c(f'"""{spec.name} from field values as _pack writes it; 1 where the Python writer must decide')
        c('(out as it was)."""')
        if self.globals:
            c("global " + ", ".join(self.globals))
        c("cdef Py_ssize_t at = PyByteArray_GET_SIZE(out)")
        c("cdef uint8_t* p")
        for var, ctype in self.locals.items():
            c(f"cdef {ctype} {var}")
        return (["", "", f"cdef int pk_{name}(bytearray out, {params}) except -1:"] + c.lines + body.lines
                + self.wrapper(spec))

    def local(self, var: str, ctype: str) -> str:
        self.locals.setdefault(var, ctype)
        return var

    def check(self, c: Code, spec: TypeSpec, attr: Attr) -> None:
        """Refuse (return 1 before writing) what the C writer does not write as Python would;
        compute the derived numbers known before writing, and where each bytes value lies."""
        kind = self.kind(spec, attr)
        if kind in ("bytes", "processed"):
            self.check_bytes(c, spec, attr, kind)
        elif kind == "repeat":
            with c.block(f"if type(a_{attr.id}) is not list and type(a_{attr.id}) is not tuple:"):
                c("return 1")
        elif kind == "struct":
            arity = len(self.args(self.ir[spec].field(attr.id).target))
            with c.block(f"if type(a_{attr.id}) is not tuple or len(<tuple>a_{attr.id}) != {arity}:"):
                c("return 1")
        elif kind == "int" and not self.room(spec, attr):
            if attr.derive is not None:
                c(f"{self.local(self.value(attr), 'int64_t')} = {self.derived(spec, attr)}")
            bounds = self.bounds(spec, attr)
            if bounds is not None:
                test = f"not {bounds[0]} <= {self.value(attr)} <= {bounds[1]}"
                if attr.if_ is not None:  # checked where it is written
                    test = f"({self.condition(spec, attr)}) and {test}"
                with c.block(f"if {test}:"):
                    c("return 1")

    def check_bytes(self, c: Code, spec: TypeSpec, attr: Attr, kind: str) -> None:
        data, n = self.local(f"d_{attr.id}", "const char*"), self.local(f"n_{attr.id}", "Py_ssize_t")
        with c.block(f"if a_{attr.id} is None:"):
            c("return 1" if attr.if_ is None else f"{n} = -1")
        if attr.type.kind == RefKind.STR:
            if (attr.type.encoding or "").upper().replace("_", "-") in ("UTF-8", "UTF8", "ASCII"):
                with c.block(f"elif type(a_{attr.id}) is str and PyUnicode_IS_ASCII(a_{attr.id}):"):
                    c(f"{data}, {n} = <const char*>PyUnicode_1BYTE_DATA(a_{attr.id}), len(<str>a_{attr.id})")
            with c.block(f"elif type(a_{attr.id}) is str:"):  # kept while its bytes are written
                keep = self.local(f"o_{attr.id}", "object")
                with c.block("try:"):
                    c(f"{keep} = (<str>a_{attr.id}).encode({attr.type.encoding!r}, 'surrogateescape')")
                with c.block("except UnicodeError:  # the Python writer raises it, with its own bytes"):
                    c("return 1")
                c(f"{data}, {n} = PyBytes_AS_STRING({keep}), len(<bytes>{keep})")
        else:
            with c.block(f"elif type(a_{attr.id}) is bytes:"):
                c(f"{data}, {n} = PyBytes_AS_STRING(a_{attr.id}), len(<bytes>a_{attr.id})")
        with c.block("else:"):
            c("return 1")
        if kind == "processed":  # its bytes as they are, where the processor keeps them so
            self.identity(c, spec, attr)

    def identity(self, c: Code, spec: TypeSpec, attr: Attr) -> None:
        """Refuse a value whose processor changes bytes (the Python writer encodes it), asking
        the processor only when its arguments differ from the last ones (kept until a codec or
        processor is registered; `forget_processors`)."""
        scope = self.scope(spec)
        args = [self.tr.translate(a, scope, attr.loc) for a in attr.process.args]
        cache = f"{self.cls(spec)}_{attr.id}"
        self.caches.append((cache, len(args)))
        self.globals.append(f"PS_{cache}")
        keys = [self.local(f"k_{attr.id}_{i}", "int64_t") for i in range(len(args))]
        with c.block(f"if n_{attr.id} >= 0:"):
            for key, arg in zip(keys, args):
                c(f"{key} = {arg}")
            same = " and ".join(f"{key} == PA_{cache}[{i}]" for i, key in enumerate(keys))
            with c.block(f"if not (PS_{cache} >= 0 and {same}):"):
                with c.block("try:"):
                    c(f"PS_{cache} = PROCESSOR({attr.process.name!r}, {', '.join(keys)}).identity")
                with c.block("except Exception:  # no such processor or arguments: the Python writer names it"):
                    c(f"PS_{cache} = -1")
                    c("return 1")
                for i, key in enumerate(keys):
                    c(f"PA_{cache}[{i}] = {key}")
            with c.block(f"if not PS_{cache}:"):
                c("return 1")

    def cache_lines(self) -> list[str]:
        """The module's memory of the processors last asked, and what forgets it when a codec or
        processor is registered."""
        if not self.caches:
            return []
        c = Code()
        for cache, n in self.caches:
            c(f"cdef int PS_{cache} = -1  # whether the processor last asked keeps bytes (-1: none asked)")
            c(f"cdef int64_t PA_{cache}[{n}]  # the arguments it was asked with")
        c("")
        c("")
        with c.block("def forget_processors():"):
            c("global " + ", ".join(f"PS_{cache}" for cache, _ in self.caches))
            for cache, _ in self.caches:
                c(f"PS_{cache} = -1")
        c("")
        c("")
        c("PROCESSORS_CHANGED(forget_processors)")
        return ["", ""] + c.lines

    def derived(self, spec: TypeSpec, attr: Attr) -> str:
        d = attr.derive
        target = self.sibling(spec, d.target)
        plus = f" + {d.plus}" if d.plus else ""
        if d.kind == DeriveKind.COUNT_OF:
            return f"len(a_{target.id}){plus}"
        # a length-of: an absent value without if-absent was refused with its field
        return f"{-1 if d.if_absent is None else d.if_absent} if n_{target.id} < 0 else n_{target.id}{plus}"

    def condition(self, spec: TypeSpec, attr: Attr) -> str:
        return self.tr.translate(attr.if_, self.scope(spec), attr.loc)

    def bounds(self, spec: TypeSpec, attr: Attr) -> tuple[int, int] | None:
        return value_range(self.program, attr)

    def width(self, spec: TypeSpec, attr: Attr) -> int:
        """The most bytes a number field takes."""
        f = self.ir[spec].field(attr.id)
        return VARINT_MAX[f.intrinsic] if f.value == ValueKind.VARINT else f.width

    def marked(self, spec: TypeSpec) -> set[str]:
        """Fields whose start a patch measures from: a length's of the rest, a checksum's."""
        out = {a.derive.target for a in spec.seq if a.derive is not None and a.derive.kind == DeriveKind.LENGTH_FROM}
        return out | {a.checksum.from_field for a in spec.seq if a.checksum is not None}

    def mark(self, c: Code, name: str) -> str:
        var = self.local(f"m_{name}", "Py_ssize_t")
        c(f"{var} = p - <uint8_t*>PyByteArray_AS_STRING(out)")
        return var

    def flat(self, c: Code, spec: TypeSpec, run: list[Attr]) -> None:
        """Fields without items: room for the most they take, then each written at p."""
        if not run:
            return
        sizes = [f"max(n_{a.id}, 0)" if self.kind(spec, a) in ("bytes", "processed") else str(self.width(spec, a))
                 for a in run]
        c(f"p = grow(out, {' + '.join(sizes)})")
        marked = self.marked(spec)
        for attr in run:
            if attr.id in marked:
                self.mark(c, attr.id)
            kind = self.kind(spec, attr)
            if kind in ("bytes", "processed"):
                with c.block(f"if n_{attr.id} > 0:"):
                    c(f"memcpy(p, d_{attr.id}, n_{attr.id})")
                    c(f"p += n_{attr.id}")
            elif self.room(spec, attr) or kind == "checksum":  # zeros, patched last
                self.mark(c, attr.id + "_room")
                c(f"memset(p, 0, {self.width(spec, attr)})")
                c(f"p += {self.width(spec, attr)}")
            elif attr.if_ is not None:
                with c.block(f"if {self.condition(spec, attr)}:"):
                    self.put(c, spec, attr, self.value(attr))
            else:
                self.put(c, spec, attr, self.value(attr))
        c("settle(out, p)")

    def put(self, c: Code, spec: TypeSpec, attr: Attr, value: str, at: str = "p") -> None:
        f = self.ir[spec].field(attr.id)
        if f.value == ValueKind.VARINT:
            c(f"{at} = {'put_zigzag' if f.intrinsic.startswith('zigzag') else 'put_uvarint'}({at}, {value})")
        else:
            c(f"{at} = {'put_le' if f.endian == 'le' else 'put_be'}({at}, <uint64_t>{value}, {f.width})")

    def nested(self, c: Code, spec: TypeSpec, attr: Attr) -> None:
        """A struct, or a repeat's items: each written by its own C writer from a tuple."""
        target = self.ir[spec].field(attr.id).target
        if self.kind(spec, attr) == "struct":
            start = self.local(f"m_{attr.id}", "Py_ssize_t")
            c(f"{start} = PyByteArray_GET_SIZE(out)")
            self.call(c, target, f"a_{attr.id}")
            c(f"{self.local(f'e_{attr.id}', 'Py_ssize_t')} = PyByteArray_GET_SIZE(out)")
            return
        self.local("item", "object")
        with c.block(f"for item in a_{attr.id}:"):
            with c.block(f"if type(item) is not tuple or len(<tuple>item) != {len(self.args(target))}:"):
                c("PyByteArray_Resize(out, at)")
                c("return 1")
            self.call(c, target, "item")

    def call(self, c: Code, target: TypeSpec, values: str) -> None:
        """The C writer of `target` from the tuple `values`, its numbers taken as _pack's wrapper
        takes them; what it refuses undoes this writer's bytes too."""
        fails, passed = [], []
        for k, a in enumerate(self.args(target)):
            item = f"(<tuple>{values})[{k}]"
            if not self.is_int(target, a):
                passed.append(item)
                continue
            var = self.local(f"t_{self.cls(target)}_{a.id}", "int64_t")
            fails.append(f"int_arg({item}, {default(a) is not None}, {default(a) or 0}, &{var})")
            passed.append(var)
        fails.append(f"pk_{self.cls(target)}(out, {', '.join(passed)}) != 0")
        with c.block("if " + " or ".join(fails) + ":"):
            c("PyByteArray_Resize(out, at)")
            c("return 1")

    def patch(self, c: Code, spec: TypeSpec, attr: Attr) -> None:
        """A length known now: of the rest (from its first field) or of a struct, written into
        its room; a varint's moves what follows back over the room it does not take."""
        room, width = f"m_{attr.id}_room", self.width(spec, attr)
        d = attr.derive
        value = self.local(self.value(attr), "int64_t")
        if d.kind == DeriveKind.LENGTH_FROM:
            c(f"{value} = PyByteArray_GET_SIZE(out) - {room} - {width}")
        else:
            c(f"{value} = e_{d.target} - m_{d.target}{f' + {d.plus}' if d.plus else ''}")
        bounds = self.bounds(spec, attr)
        if bounds is not None:
            with c.block(f"if not {bounds[0]} <= {value} <= {bounds[1]}:"):
                c("PyByteArray_Resize(out, at)")
                c("return 1")
        f = self.ir[spec].field(attr.id)
        if f.value == ValueKind.VARINT:
            u = f"zigzag_of({value})" if f.intrinsic.startswith("zigzag") else f"<uint64_t>{value}"
            c(f"patch_varint(out, {room}, {width}, {u})")
        else:
            c(f"{'put_le' if f.endian == 'le' else 'put_be'}(<uint8_t*>PyByteArray_AS_STRING(out) + {room}, "
              f"<uint64_t>{value}, {width})")

    def checksum(self, c: Code, spec: TypeSpec, attr: Attr) -> None:
        f = self.ir[spec].field(attr.id)
        start = f"m_{attr.checksum.from_field}"
        value = self.local(self.value(attr), "int64_t")
        c(f"{value} = {CHECKSUMS[attr.checksum.algorithm]}(<uint8_t*>PyByteArray_AS_STRING(out) + {start}, "
          f"PyByteArray_GET_SIZE(out) - {start})")
        c(f"{'put_le' if f.endian == 'le' else 'put_be'}(<uint8_t*>PyByteArray_AS_STRING(out) + m_{attr.id}_room, "
          f"<uint64_t>{value}, {f.width})")

    def wrapper(self, spec: TypeSpec) -> list[str]:
        """`_pack` itself: the C writer for the values it takes, else the Python writer."""
        name = self.cls(spec)
        args = self.args(spec)
        c = Code(1)
        ok = ["type(out) is bytearray"]
        call = []
        for a in args:
            if not self.is_int(spec, a):
                call.append(f"a_{a.id}")
            elif default(a) is None:
                ok.append(f"type(a_{a.id}) is int")
                call.append(f"a_{a.id}")
            else:
                ok.append(f"(a_{a.id} is None or type(a_{a.id}) is int)")
                call.append(f"{default(a)} if a_{a.id} is None else a_{a.id}")
        c(f'"""{spec.name}._pack: compiled for the values it takes, else the Python writer (which raises,')
        c('also for a wrong number of values)."""')
        with c.block(f"if len(values) == {len(args)}:"):
            c(f"{', '.join(f'a_{a.id}' for a in args)}{',' if len(args) == 1 else ''} = values")
            with c.block("if " + " and ".join(ok) + ":"):
                with c.block("try:"):
                    with c.block(f"if pk_{name}(out, {', '.join(call)}) == 0:"):
                        c("return")
                with c.block("except OverflowError:"):
                    c("pass  # an int beyond 64 bits")
        c(f"PP_{name}(out, *values)")
        return ["", "", f"def pack_{name}(out, *values):"] + c.lines

