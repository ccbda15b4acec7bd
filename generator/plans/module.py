"""The plan: per schema module, the classes, constants and method bodies the template lays out."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from .imports import ImportList
from .lines import Code, Constants
from ..flat import FlatEmitter
from ..record_view import RecordViewEmitter
from ..model import Attr, EnumSpec, RefKind, Schema, TypeSpec
from ..ir import IR, FixedRun
from .columns import ColumnPlanner
from .read import Frame, ReadPlanner
from .write import WritePlanner
from ..program import Program, camel
from ..expr import Binary, Bool, Int, names_in
from ..pyexpr import OBJECT, Scope, Translator

CHECKSUM_FUNCTIONS = {"crc32": "_crc32", "crc32c": "_crc32c"}


def default_code(value) -> str:
    """A tagged field's default as code: a fresh list where it is an empty one."""
    return "[]" if value == () else repr(value)


@dataclass
class Prop:
    name: str
    doc: str
    getter: list[str]
    setter: list[str] | None = None


@dataclass
class ClassPlan:
    name: str  # module-level name
    qualname: str  # Kaitai-style nested name
    doc: str
    slots: list[str]
    init_params: list[str]
    init_body: list[str]
    read_body: list[str]
    write_body: list[str]
    size_body: list[str] | None
    verify_body: list[str] | None
    pack_params: list[str]
    pack_body: list[str] | None
    props: list[Prop]
    loaders: list[tuple[str, list[str]]]
    raw_loaders: list[tuple[str, list[str]]]
    eq_fields: list[str]
    repr_fields: list[str]
    dict_fields: list[str]
    schema_path: str
    nested: list[tuple[str, str]] = field(default_factory=list)  # (attribute, module-level name)
    field_docs: list[list[str]] = field(default_factory=list)  # each field's lines: name, hint, doc
    hints: dict[str, str] = field(default_factory=dict)
    columns_body: list[str] | None = None  # -columnar types: the vectorised readers
    flat_body: list[str] | None = None  # a -hot root read into slots (generator/flat.py)
    flat_slots: dict[str, int] | None = None
    record_view: list[str] | None = None  # its record view's functions (generator/record_view.py)
    record_writer: bool = False  # it has a compiled writer of runs of records (-record-writer)
    skip_body: list[str] | None = None
    skip1_body: list[str] | None = None
    starts_body: list[str] | None = None
    spans: list[str] = field(default_factory=list)  # slots holding (buffer, start, end) of bytes read
    parent: str | None = None  # the enclosing type whose fields reading this one takes, if any
    layout: tuple[tuple[str, int, int], ...] = ()  # (field, offset, width) of the fixed-width prefix
    params: list[str] = field(default_factory=list)  # the type's params, as keyword arguments
    tagged: dict[str, str] = field(default_factory=dict)  # named tagged field -> (tag, default), as code
    json: dict[str, tuple] = field(default_factory=dict)  # field -> (Kafka's JSON name, shown as), where -json says
    field_types: dict[str, str] = field(default_factory=dict)  # field -> its Python type, as code
    switch_cases: dict[str, dict[str, str]] = field(default_factory=dict)  # switch field -> case -> class
    field_order: list[str] | None = None  # stored and named tagged fields, in the message's order
    tag_section: str | None = None  # the field holding the named tagged fields
    derived: list[tuple[str, str, int, str]] = field(default_factory=list)  # (field, slot, pin bit, doc)
    present_when: list[tuple[str, str]] = field(default_factory=list)  # (field, function of the params)
    switch_on: list[tuple[str, str]] = field(default_factory=list)  # (switch field, function of the params)


@dataclass
class EnumPlan:
    name: str
    qualname: str
    members: list[tuple[str, int, str]]
    owner: str
    attr: str


@dataclass
class ModulePlan:
    source_file: str
    source_sha256: str
    title: str
    root_class: str
    structs: list[tuple[str, str]]
    tables: list[tuple[str, str]]
    enums: list[EnumPlan]
    classes: list[ClassPlan]
    imports: list[tuple[str, str]]  # (module, class) of imported schemas
    exports: list[str]
    runtime_names: frozenset[str]  # the runtime's names its code uses
    columnar: bool = False
    compiled: tuple[str, str] | None = None  # (module, sha256 of its .pyx) of the -hot types' readers


class ModulePlanner:
    def __init__(self, program: Program, schema: Schema, problems, ir: IR):
        self.program = program
        self.ir = ir
        self.schema = schema
        self.tr = Translator(program, problems)
        self.problems = problems
        self.consts = Constants()
        self.rt = ImportList()  # the runtime names the module's code uses, recorded as it is planned
        self.imports: set[tuple[str, str]] = set()  # (module, class) of other schemas' types
        self._packs: dict[TypeSpec, list[str] | None] = {}
        self._reads: dict[TypeSpec, list[str]] = {}
        self._inlining: set[TypeSpec] = set()
        self._switch_cases: dict[TypeSpec, dict[str, dict[str, str]]] = {}

    # -- shared services for the read/write planners ---------------------------------------
    def field_path(self, spec: TypeSpec, attr: Attr) -> str:
        return self.ir.field_path(spec, attr)

    def class_ref(self, spec: TypeSpec) -> str:
        owner = self.program.schema_of[spec]
        name = self.program.py_name(spec)
        if owner is not self.schema:
            self.imports.add((owner.id, name))
        return name

    def checksum_fn(self, algorithm: str) -> str:
        return self.rt(CHECKSUM_FUNCTIONS[algorithm])

    def pack_body(self, spec: TypeSpec) -> list[str] | None:
        """The body of `_pack`, or None where writing needs the object (its parent, instances...).
        Only hot types have one: they are the ones written in bulk from field values (records),
        and a second writer for every other type would double the generated code for nothing."""
        if spec not in self._packs:
            self._packs[spec] = None  # a type nested in itself is written through _write
            if spec.hot and self.program.schema_of[spec] is self.schema:
                writer = WritePlanner(self, spec, pack=True)
                lines = writer.plan_write()
                self._packs[spec] = None if OBJECT in writer.scope.uses else lines
        return self._packs[spec]

    def read_body(self, spec: TypeSpec) -> list[str]:
        if spec not in self._reads:
            self._inlining.add(spec)
            try:
                self._reads[spec] = ReadPlanner(self, spec).plan()
            finally:
                self._inlining.discard(spec)
        return self._reads[spec]

    def spliced_read(self, spec: TypeSpec, frame: Frame, counter) -> list[str] | None:
        """The read body of `spec` planned to stand in an enclosing reader's loop, or None where a
        call stays: a type not marked hot (what a call costs matters only in the types read
        most), a varint, a type of another module, a type inside itself."""
        if (not spec.hot or spec.intrinsic or spec in self._inlining
                or self.program.schema_of[spec] is not self.schema):
            return None
        self._inlining.add(spec)
        try:
            return ReadPlanner(self, spec, frame, counter).plan()
        finally:
            self._inlining.discard(spec)

    def spliced_pack(self, spec: TypeSpec, values: str, suffix: str, counter) -> list[str] | None:
        """The `_pack` body of `spec` planned to stand in a writer's loop, its arguments unpacked
        from the tuple `values`; None where a call must stay."""
        if self.pack_body(spec) is None or spec in self._inlining:
            return None
        writer = WritePlanner(self, spec, pack=True, suffix=suffix, counter=counter)
        lines = writer.plan_write()
        params = writer.pack_params()
        return [f"{', '.join(params)}{',' if len(params) == 1 else ''} = {values}"] + lines

    def packable(self, spec: TypeSpec) -> bool:
        return self.pack_body(spec) is not None

    # -- planning -------------------------------------------------------------------------
    def plan(self) -> ModulePlan:
        classes = []
        enums = []
        for spec in self.program.walk(self.schema.root):
            for enum in spec.enums:
                enums.append(self.enum_plan(enum, spec))
            classes.append(self.class_plan(spec))
        root_name = self.program.py_name(self.schema.root)
        return ModulePlan(
            self.schema.file, self.schema.source_sha256, self.schema.title or self.schema.id,
            root_name, [(n, f) for f, n in self.consts.structs.items()],
            [(n, t) for t, n in self.consts.tables.items()], enums, classes,
            sorted(self.imports), [root_name], frozenset(self.rt.used), any(c.columns_body for c in classes))

    def enum_plan(self, enum: EnumSpec, owner: TypeSpec) -> EnumPlan:
        return EnumPlan(self.program.enum_py_name(enum),
                        ".".join(self.program.class_path(owner) + [camel(enum.name)]),
                        [(v.id, v.value, v.doc or "") for v in enum.values],
                        self.program.py_name(owner), camel(enum.name))

    def class_plan(self, spec: TypeSpec) -> ClassPlan:
        name = self.program.py_name(spec)
        seq = spec.seq
        facts = self.ir[spec]
        init_body = [f"self._parent_ref = None if _parent is None else {self.rt('_ref')}(_parent)"]
        init_body += [f"self.{p.id} = {p.id}" for p in spec.params]
        init_body += [f"self.{i.id} = None" for i in spec.instances if i.eager]
        if facts.needs_pos:
            init_body.append("self._pos = None")
        if facts.pinned:
            pins = " | ".join(f"({f.pin_bit} if {f.id} is not None else 0)" for f in facts.pinned)
            init_body.append(f"self._pins = {pins}")
        for a in seq:
            if a.repeat and a.if_ is None:  # an unset repeated field is empty, unless it may be absent
                init_body.append(f"self.{a.storage} = [] if {a.id} is None else {a.id}")
            else:
                init_body.append(f"self.{a.storage} = {a.id}")
            if a.lazy:
                init_body.append(f"self._{a.id}_raw = None")
            if a.checksum:
                init_body.append(f"self._{a.id}_computed = None")
        props = self.props(spec)
        loaders = [(a.id, self.loader(spec, a)) for a in seq if a.lazy]
        loaders += [(f"{a.id}_checksum", self.checksum_loader(a)) for a in seq if a.checksum]
        raw_loaders = [(a.id, self.raw_loader(spec, a)) for a in seq if a.lazy]
        nested = [(camel(t.name), self.program.py_name(t)) for t in spec.types]
        nested += [(camel(e.name), self.program.enum_py_name(e)) for e in spec.enums]
        writer = WritePlanner(self, spec)
        writer_pack = WritePlanner(self, spec, pack=True)
        params = [p.id for p in spec.params]
        return ClassPlan(
            name=name, qualname=".".join(self.program.class_path(spec)),
            doc=(spec.doc or spec.name).strip(), slots=list(facts.slots),
            init_params=[p.id for p in spec.params] + [a.id for a in seq], init_body=init_body,
            read_body=self.read_body(spec), write_body=writer.plan_write(),
            # computed without encoding where size matters (the -hot types) or is a constant (a fixed
            # layout, which an object not yet filled has too); the others encode (Node.size)
            size_body=writer.plan_size() if spec.hot or all(isinstance(op, FixedRun) for op in facts.ops) else None,
            verify_body=self.verify(spec) if facts.has_checksums else None,
            pack_params=writer_pack.pack_params(), pack_body=self.pack_body(spec),
            props=props, loaders=loaders, raw_loaders=raw_loaders,
            eq_fields=params + [a.id for a in seq if not (a.derive or a.checksum)],
            repr_fields=params + [a.id for a in seq],
            dict_fields=params + [a.id for a in seq] + [i.id for i in spec.instances],
            schema_path="/".join(self.program.class_path(spec)),
            nested=nested,
            field_docs=[self.field_doc(p.id, "int", f"(param) {p.doc or ''}") for p in spec.params]
            + [self.field_doc(a.id, self.hint(a) + (" | None" if a.if_ is not None else ""), a.doc, a) for a in seq],
            hints={**{p: "int" for p in params}, **{a.id: self.hint(a) for a in seq}},
            spans=[f"_{a.id}_raw" for a in seq if a.lazy] + [f"_{a.id}_computed" for a in seq if a.checksum],
            parent=self.parent_name(spec),
            layout=facts.layout, params=params,
            tagged={t.id: f"({t.tag}, {default_code(t.default)})" for a in seq for t in a.tagged},
            json={x.id: (x.json.name, x.json.as_) for x in list(seq) + [t for a in seq for t in a.tagged]
                  if x.json is not None},
            field_types={a.id: self.field_type(self.tr.attr_type(a)) for a in seq if not (a.derive or a.checksum)},
            switch_cases=self.switch_cases(spec),
            field_order=self.field_order(spec), present_when=self.present_when(spec), switch_on=self.switch_on(spec),
            tag_section=next((a.id for a in seq if a.tagged), None), derived=self.derived(spec),
            record_writer=spec.record_writer is not None, **self.columnar(spec), **self.flat(spec))

    def flat(self, spec: TypeSpec) -> dict:
        """The flat reader of the schema's root, where it is -hot and its fields read flat."""
        if spec is not self.schema.root or not spec.hot:
            return {}
        flats = FlatEmitter(self.program, self.ir, self.tr, self.schema, python=True, struct=self.consts.struct)
        body = flats.function(spec) if flats.flat(spec) else None
        if body is None:
            if spec.record is not None:
                self.problems.add(spec.record.loc, "-record: the root's fields do not read flat (see generator/flat.py)")
            return {}
        view = None
        if spec.record is not None:
            uses_crc = spec.record.checksum is not None
            view = RecordViewEmitter(self.program, self.problems, flats, True,
                                     self.rt("_crc32") if uses_crc else "").functions(spec)
        return {"flat_body": body, "flat_slots": {k: i for i, k in enumerate(flats.slots)}, "record_view": view}

    def parent_name(self, spec: TypeSpec) -> str | None:
        if not self.ir[spec].parent_depth:
            return None
        parent = self.program.lexical_parent.get(spec)
        return ".".join(self.program.class_path(parent)) if parent is not None else "enclosing type"

    def columnar(self, spec: TypeSpec) -> dict:
        """The vectorised readers of a `-columnar` type and of the types it repeats."""
        repeated_by_columnar = any(
            t.columnar and any(a.repeat and self.program.resolved.get(a.type) is spec for a in t.seq)
            for t in self.program.all_types())
        if not (spec.columnar or repeated_by_columnar):
            return {}
        cols = ColumnPlanner(self, spec)
        if not spec.columnar:  # read only as items of a columnar type's repeat
            return {"columns_body": cols.plan()}
        return {"columns_body": cols.plan(), "skip_body": cols.plan_skip(),
                "skip1_body": cols.plan_skip1(ReadPlanner(self, spec)), "starts_body": cols.plan_starts()}

    def hint(self, attr: Attr) -> str:
        """A type hint for a field, as a string (forward references stay unevaluated)."""
        t = self.tr.attr_type(attr)
        return self._hint(t)

    def _hint(self, t) -> str:
        if t.kind == "array":
            return f"list[{self._hint(t.elem)}]"
        if t.kind in ("int", "bool", "float", "str", "bytes"):
            return t.kind
        if t.kind == "intrinsic":
            return "int"
        if t.kind == "user":
            return self.class_ref(t.spec)
        if t.kind == "enum":
            return f"{self.program.enum_py_name(t.enum)} | int"
        return "object"

    @staticmethod
    def field_doc(name: str, hint: str, doc: str | None, attr: Attr | None = None) -> list[str]:
        """A field's lines in its class's docstring: name, type and doc, wrapped."""
        text = " ".join((doc or "").split())
        if attr is not None and (attr.derive is not None or attr.checksum is not None):
            text += " (Computed on write unless set.)"
        return textwrap.wrap(f"{name} ({hint}): {text}".strip(), 88)

    def props(self, spec: TypeSpec) -> list[Prop]:
        out = []
        for a in spec.seq:
            doc = (a.doc or "").strip()
            if a.lazy and not (a.derive or a.checksum):
                out.append(Prop(a.id, doc, [
                    f"value = self._{a.id}",
                    f"if value is {self.rt('_LAZY')}:",
                    f"    value = self._{a.id} = self._load_{a.id}()",
                    "return value"], [f"self._{a.id} = value", f"self._{a.id}_raw = None"]))
            if a.checksum:
                out.append(Prop(f"{a.id}_valid",
                                f"Whether the stored `{a.id}` matches the bytes read; None for objects not read.",
                                [f"if self._{a.id}_computed is None:", "    return None",
                                 f"return self._load_{a.id}_checksum() == self._{a.id}"]))
        out += self.tagged_props(spec)
        for inst in spec.instances:
            if inst.eager:
                continue  # a plain attribute, set while reading
            value = self.tr.translate(inst.value, Scope(spec, obj="self"), inst.loc)
            if inst in self.program.enum_of:
                value = f"{self.rt('_enum_value')}({self.program.enum_py_name(self.program.enum_of[inst])}, {value})"
            out.append(Prop(inst.id, (inst.doc or "").strip(), [f"return {value}"]))
        return out

    def derived(self, spec: TypeSpec) -> list[tuple[str, str, int, str]]:
        """(field, slot, pin bit, doc) of each field computed on write unless set (pinned)."""
        if any(a.derive or a.checksum for a in spec.seq):
            self.rt("_derived")
        return [(a.id, f"_{a.id}", self.ir[spec].field(a.id).pin_bit,
                 f"{' '.join((a.doc or '').split())} Computed on write unless set (pinned).".strip())
                for a in spec.seq if a.derive or a.checksum]

    def tagged_props(self, spec: TypeSpec) -> list[Prop]:
        """A read-only property per named tagged field: its value from the section (the last
        one, as Kafka's reader keeps, should a tag come twice), or its default where the section
        does not hold it decoded (a tag the message's version does not define stays raw)."""
        out = []
        for a in spec.seq:
            for t in a.tagged:
                held, _ = self.program.tagged_value_field(a, t.tag)
                default = default_code(t.default)
                doc = f"{(t.doc or '').strip()}\n\nTag {t.tag} of `{a.id}`; {default} where the message does not hold it."
                out.append(Prop(t.id, doc.strip(), [
                    f"_v = {default}",
                    f"for _f in self.{a.storage}.fields if self.{a.storage} is not None else ():",
                    f"    if _f.tag == {t.tag} and not isinstance(_f.data, (bytes, bytearray, memoryview)):",
                    f"        _v = _f.data.{held}",
                    "return _v"]))
        return out

    def field_order(self, spec: TypeSpec) -> list[str] | None:
        """The stored fields and the named tagged ones in the message's order (Kafka's, for its
        JSON), where a type names tagged fields."""
        tagged = [t for a in spec.seq for t in a.tagged]
        if not tagged:
            return None
        order = [a.id for a in spec.seq if not (a.derive or a.checksum)]
        for t in tagged:
            order.insert(order.index(t.after) + 1 if t.after is not None else len(order), t.id)
        return order

    def field_type(self, t) -> str:
        """A field's type as code: a builtin, a generated class, [item type], or object (a switch)."""
        if t.kind == "array":
            return f"[{self.field_type(t.elem)}]"
        if t.kind in ("int", "bool", "float", "str", "bytes"):
            return t.kind
        if t.kind in ("intrinsic", "enum"):
            return "int"
        if t.kind == "user":
            return self.class_ref(t.spec)
        return "object"

    def switch_cases(self, spec: TypeSpec) -> dict[str, dict[str, str]]:
        """For each switch field whose cases are all literals (or the default) naming generated
        types: case -> class (None for the default). Planned once per type (the writer asks per
        switch)."""
        if spec not in self._switch_cases:
            self._switch_cases[spec] = self._plan_switch_cases(spec)
        return self._switch_cases[spec]

    def _plan_switch_cases(self, spec: TypeSpec) -> dict[str, dict[str, str]]:
        out = {}
        for a in spec.seq:
            if a.type.kind != RefKind.SWITCH or not a.type.cases:
                continue
            targets = [(key, self.program.resolved.get(case)) for key, case in a.type.cases]
            if all((key is None or isinstance(key, (Int, Bool))) and t is not None and not t.intrinsic
                   for key, t in targets):
                out[a.id] = {"None" if key is None else repr(key.value): self.class_ref(t) for key, t in targets}
        return out

    def present_when(self, spec: TypeSpec) -> list[tuple[str, str]]:
        """(field, a function of the params telling whether the field is there) for the fields
        and named tagged fields whose `if` the params decide, wholly or in a conjunct (the fields
        of some versions; `version >= 2 and count >= 0` is absent before version 2)."""
        if not spec.params:
            return []
        out = []
        for a in spec.seq:
            if a.if_ is not None and (fn := self.of_params(spec, a.if_, a.loc)) is not None:
                out.append((a.id, fn))
            out += [(t.id, self.of_params(spec, t.if_, t.loc)) for t in a.tagged if t.if_ is not None]
        return out

    def of_params(self, spec: TypeSpec, e, loc) -> str | None:
        """A function of the params giving the conjuncts of `e` that name only params, as code;
        None where none does."""
        params = [p.id for p in spec.params]
        conjuncts, todo = [], [e]
        while todo:
            x = todo.pop()
            if isinstance(x, Binary) and x.op == "and":
                todo += [x.right, x.left]
            elif {n.name for n in names_in(x)} <= set(params):
                conjuncts.append(x)
        if not conjuncts:
            return None
        scope = Scope(spec, obj="self")
        scope.locals = {p: p for p in params}
        test = " and ".join(f"({self.tr.translate(x, scope, loc)})" for x in conjuncts)
        return f"lambda {', '.join(params)}: {test}"

    def switch_on(self, spec: TypeSpec) -> list[tuple[str, str]]:
        """(switch field, a function of the params giving the value it switches on) where only
        the params decide the case (a string's encoding by version), for building from JSON."""
        out, literal = [], self.switch_cases(spec)
        for a in spec.seq:
            if a.type.kind == RefKind.SWITCH and a.id in literal and spec.params:
                names = {n.name for n in names_in(a.type.switch_on)}
                if names <= {p.id for p in spec.params}:
                    out.append((a.id, self.of_params(spec, a.type.switch_on, a.type.loc)))
        return out

    def loader(self, spec: TypeSpec, attr: Attr) -> list[str]:
        planner = ReadPlanner(self, spec)
        c = Code()
        c(f"buf, pos, _e = self._{attr.id}_raw")
        scope = Scope(spec, obj="self")
        planner.region(c, attr, "value", scope, "buf", "pos", "_e")
        with c.block(f"if isinstance(buf, {self.rt('_MUTABLE')}):"):
            c(f"value = {self.rt('_detached')}(value)")
        c("return value")
        return c.lines

    def checksum_loader(self, attr: Attr) -> list[str]:
        """The checksum of the bytes read, computed on first use (a header-only scan never pays for it)
        from the span the reader kept."""
        fn = self.checksum_fn(attr.checksum.algorithm)
        c = Code()
        c(f"value = self._{attr.id}_computed")
        with c.block("if value.__class__ is tuple:"):
            c("buf, start, end = value")
            c(f"value = self._{attr.id}_computed = {fn}(memoryview(buf)[start:end])")
        c("return value")
        return c.lines

    def raw_loader(self, spec: TypeSpec, attr: Attr) -> list[str]:
        """`<field>_bytes()` of a lazy field: its bytes as its type would read them, not decoded."""
        c = Code()
        with c.block(f"if self._{attr.id}_raw is None:"):
            c("return None")
        c(f"buf, pos, _e = self._{attr.id}_raw")
        p = attr.process
        if p is None:
            c("return memoryview(buf)[pos:_e]")
            return c.lines
        scope = Scope(spec, obj="self")
        args = ", ".join(self.tr.translate(a, scope, p.loc) for a in p.args)
        with c.block("try:"):  # arguments it refuses (an unknown codec) are the field's error too
            c(f"_p = {self.rt('_processor')}({p.name!r}{', ' if args else ''}{args})")
            with c.block("if _p.identity:"):
                c("return memoryview(buf)[pos:_e]")
            c("return _p.decode(buf[pos:_e])")
        with c.block(f"except {self.rt('_DecodeError')} as _err:"):
            c(f"raise {self.rt('_in_processed')}(_err, pos, {self.field_path(spec, attr)!r}, {p.name!r})")
        return c.lines

    def verify(self, spec: TypeSpec) -> list[str]:
        c = Code()
        for a in spec.seq:
            if a.checksum:
                path = self.field_path(spec, a)
                with c.block(f"if self._{a.id}_computed is not None and self._load_{a.id}_checksum() != self._{a.id}:"):
                    c(f"raise {self.rt('_ChecksumError')}(f\"stored {a.id} = {{self._{a.id}}}, computed {a.id} = "
                      f"{{self._{a.id}_computed}}\", self._pos, {path!r}, stored=self._{a.id}, "
                      f"computed=self._{a.id}_computed)")
        for a in spec.seq:
            if a.lazy:
                continue
            kids = [self.program.resolved.get(r) for r in [a.type] + [t for _, t in a.type.cases]]
            if not any(k is not None and not k.intrinsic and self.ir[k].has_checksums for k in kids):
                continue
            v = f"self.{a.storage}"
            if a.repeat:
                with c.block(f"for _x in {v} or ():"):
                    c("_x._verify()")
            elif a.type.kind == RefKind.SWITCH:
                with c.block(f"if {v} is not None and not isinstance({v}, (bytes, bytearray, memoryview)):"):
                    c(f"{v}._verify()")
            else:
                with c.block(f"if {v} is not None:"):
                    c(f"{v}._verify()")
        return c.lines or ["pass"]

