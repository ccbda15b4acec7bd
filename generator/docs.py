"""Format documentation from the model: one Markdown page per schema (layout tables, derived and
checksum fields, enums, instances, a byte-layout SVG) and an index page.

Example hex dumps are not computed here: they need the generated codecs, which the generator never
imports. The caller passes them in as plain rows (see `HexRow`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import expr as E
from .model import PRIMITIVES, Attr, DeriveKind, RefKind, Schema, TypeSpec
from .program import Program
from .render import environment
from .svg import Box, layout_svg

PRIM_NAMES = {"u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "s1": "int8", "s2": "int16",
              "s4": "int32", "s8": "int64", "f4": "float32", "f8": "float64"}
CHECKSUM_NAMES = {"crc32": "CRC-32 (IEEE)", "crc32c": "CRC-32C (Castagnoli)"}


@dataclass(frozen=True)
class HexRow:
    """One labelled byte range of an example: where, the bytes, the field's path and its value."""
    offset: int
    data: bytes
    field: str
    value: str


@dataclass
class FieldDoc:
    id: str
    offset: str
    size: str
    type: str
    meaning: str
    valid: str
    notes: list[str] = field(default_factory=list)


@dataclass
class TypeDoc:
    name: str
    anchor: str
    doc: str
    fixed_size: int | None
    fields: list[FieldDoc]
    instances: list[tuple[str, str, str]]  # id, expression, doc
    enums: list[tuple[str, list[tuple[int, str, str]]]]
    svg_name: str | None
    checksums: list[str]
    params: list[tuple[str, str, str]]  # id, type, doc


def expr_text(e: E.Expr) -> str:
    """Kaitai source text of an expression (normalised spacing and parentheses)."""
    if isinstance(e, E.Int):
        return str(e.value)
    if isinstance(e, E.Str):
        return repr(e.value)
    if isinstance(e, E.Bool):
        return "true" if e.value else "false"
    if isinstance(e, E.Name):
        return e.name
    if isinstance(e, E.EnumRef):
        return f"{e.enum}::{e.value}"
    if isinstance(e, E.Attribute):
        return f"{expr_text(e.obj)}.{e.name}"
    if isinstance(e, E.Index):
        return f"{expr_text(e.obj)}[{expr_text(e.index)}]"
    if isinstance(e, E.Call):
        return f"{expr_text(e.func)}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, E.Unary):
        return f"{e.op} {expr_text(e.operand)}" if e.op == "not" else f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, E.Binary):
        return f"{_operand(e.left)} {e.op} {_operand(e.right)}"
    if isinstance(e, E.Ternary):
        return f"{_operand(e.cond)} ? {_operand(e.then)} : {_operand(e.other)}"
    raise TypeError(f"unknown expression node {type(e).__name__}")


def _operand(e: E.Expr) -> str:
    text = expr_text(e)
    return f"({text})" if isinstance(e, (E.Binary, E.Ternary)) else text


def oneline(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


class DocBuilder:
    def __init__(self, program: Program):
        self.program = program

    # -- sizes and names -------------------------------------------------------------------
    def fixed_size(self, spec: TypeSpec) -> int | None:
        """Byte size when every field has one fixed size, else None."""
        total = 0
        for a in spec.seq:
            n = self.attr_size(a)
            if n is None:
                return None
            total += n
        return total

    def attr_size(self, a: Attr) -> int | None:
        if a.if_ is not None or (a.repeat and not (a.repeat == "expr" and isinstance(a.repeat_expr, E.Int))):
            return None
        count = a.repeat_expr.value if a.repeat else 1
        if a.type.kind == RefKind.PRIM:
            return PRIMITIVES[a.type.prim][1] * count
        if a.size is not None and isinstance(a.size, E.Int):
            return a.size.value * count
        if a.contents is not None:
            return len(a.contents) * count
        target = self.program.resolved.get(a.type)
        if a.type.kind == RefKind.USER and a.size is None and target is not None and not target.intrinsic:
            n = self.fixed_size(target)
            return None if n is None else n * count
        return None

    def anchor(self, spec: TypeSpec) -> str:
        return "type-" + "-".join(p.lower() for p in self.program.class_path(spec))

    def type_link(self, spec: TypeSpec, here: Schema) -> str:
        owner = self.program.schema_of[spec]
        name = self.program.py_name(spec) if not spec.intrinsic else owner.id
        page = "" if owner is here else f"{owner.id}.md"
        target = "" if spec is owner.root and page else f"#{self.anchor(spec)}"
        return f"[{name}]({page}{target})"

    def type_text(self, a: Attr, here: Schema) -> str:
        t = a.type
        if t.kind == RefKind.PRIM:
            text = PRIM_NAMES[t.prim]
            width = PRIMITIVES[t.prim][1]
            if width > 1:
                text += ", big-endian" if (t.endian or "be") == "be" else ", little-endian"
        elif t.kind == RefKind.BYTES:
            text = "bytes"
        elif t.kind == RefKind.STR:
            text = f"string ({t.encoding or 'UTF-8'})"
        elif t.kind == RefKind.SWITCH:  # each type once, though many cases may read it
            links = (self.type_link(self.program.resolved[c], here) + self.args_text(c)
                     for _, c in t.cases if c in self.program.resolved)
            text = "one of " + ", ".join(dict.fromkeys(links))
        else:
            target = self.program.resolved.get(t)
            text = self.type_link(target, here) + self.args_text(t) if target is not None else t.name or "?"
            if target is not None and target.intrinsic:
                text += f" (`{target.intrinsic}`)"
        if a.repeat == "expr":
            text = f"{text} × `{expr_text(a.repeat_expr)}`"
        elif a.repeat == "eos":
            text = f"{text}, repeated to the end"
        elif a.repeat == "until":
            text = f"{text}, repeated until `{expr_text(a.repeat_until)}`"
        if a.enum:
            text += f" → enum [{a.enum}](#enum-{a.enum.replace('::', '-')})"
        return text

    def size_text(self, a: Attr) -> str:
        n = self.attr_size(a)
        if n is not None:
            return str(n)
        if a.size is not None:
            return f"`{expr_text(a.size)}`"
        if a.size_eos:
            return "to the end"
        return "variable"

    def valid_text(self, a: Attr) -> str:
        v = a.valid
        out = []
        if v is not None:
            if v.eq is not None:
                out.append(f"= `{expr_text(v.eq)}`")
            if v.min is not None:
                out.append(f"≥ `{expr_text(v.min)}`")
            if v.max is not None:
                out.append(f"≤ `{expr_text(v.max)}`")
            if v.any_of:
                out.append("one of " + ", ".join(f"`{expr_text(x)}`" for x in v.any_of))
        if a.contents is not None:
            out.append("bytes `" + a.contents.hex(" ") + "`")
        return "; ".join(out)

    def notes(self, a: Attr) -> list[str]:
        out = []
        if a.if_ is not None:
            out.append(f"present when `{expr_text(a.if_)}`")
        d = a.derive
        if d is not None:
            if d.kind == DeriveKind.LENGTH_OF:
                text = f"written as the byte length of `{d.target}`" + (f" plus {d.plus}" if d.plus else "")
                if d.if_absent is not None:
                    text += f" ({d.if_absent} when absent)"
            elif d.kind == DeriveKind.LENGTH_FROM:
                text = f"written as the number of bytes from `{d.target}` to the end; checked on read"
            else:
                target = expr_text(d.target) if isinstance(d.target, E.Expr) else d.target
                text = f"written as the number of elements of `{target}`" + (f" plus {d.plus}" if d.plus else "")
                if d.if_absent is not None:
                    text += f" ({d.if_absent} when absent)"
            out.append(text)
        if a.checksum is not None:
            out.append(f"{CHECKSUM_NAMES.get(a.checksum.algorithm, a.checksum.algorithm)} of the bytes from "
                       f"`{a.checksum.from_field}` to the end; recomputed on write unless pinned")
        if a.default is not None and a.derive is None:
            out.append(f"default `{expr_text(a.default)}`")
        if a.process is not None:
            args = ", ".join(expr_text(x) for x in a.process.args)
            out.append(f"stored through the `{a.process.name}({args})` processor")
        if a.lazy:
            out.append("decoded on first access")
        if a.require_eos:
            out.append("its type must use every byte")
        if a.tagged:
            named = ", ".join(f"`{t.id}` (tag {t.tag}, default {self.default_text(t.default)})" for t in a.tagged)
            out.append(f"its tags by name, each a read-only attribute of this type: {named}")
        return out

    @staticmethod
    def default_text(value) -> str:
        if value is None:
            return "null"
        if isinstance(value, bytes):
            return f"{len(value)} zero bytes" if not any(value) else f"bytes `{value.hex(' ')}`"
        return f"`{'[]' if value == () else value}`"

    @staticmethod
    def args_text(ref) -> str:
        return f" given `{', '.join(expr_text(a) for a in ref.args)}`" if ref.args else ""

    # -- types -----------------------------------------------------------------------------
    def type_doc(self, spec: TypeSpec, here: Schema) -> tuple[TypeDoc, list[Box]]:
        offset: int | None = 0
        fields = []
        boxes = []
        covered_from = {a.checksum.from_field for a in spec.seq if a.checksum is not None}
        covering = False
        for a in spec.seq:
            size = self.attr_size(a)
            covering = covering or a.id in covered_from
            fields.append(FieldDoc(a.id, "" if offset is None else str(offset), self.size_text(a),
                                   self.type_text(a, here), oneline(a.doc), self.valid_text(a), self.notes(a)))
            boxes.append(Box(a.id, size, covering, a.checksum is not None))
            offset = None if offset is None or size is None else offset + size
        instances = [(i.id, expr_text(i.value), oneline(i.doc)) for i in spec.instances]
        enums = [(e.name, [(v.value, v.id, oneline(v.doc)) for v in e.values]) for e in spec.enums]
        checksums = [f"`{a.id}`: {CHECKSUM_NAMES.get(a.checksum.algorithm, a.checksum.algorithm)} over every byte "
                     f"from `{a.checksum.from_field}` to the end of `{spec.name}`" for a in spec.seq if a.checksum]
        svg_name = None
        if spec.seq and not spec.intrinsic:
            nested = [p.lower() for p in self.program.class_path(spec)[1:]]
            svg_name = f"svg/{'.'.join([here.id] + nested)}.svg"
        return TypeDoc(self.program.py_name(spec), self.anchor(spec), (spec.doc or "").strip(),
                       self.fixed_size(spec), fields, instances, enums, svg_name, checksums,
                       [(p.id, PRIM_NAMES[p.prim], oneline(p.doc)) for p in spec.params]), boxes


def build_docs(program: Program, examples: dict[str, list[HexRow]] | None = None) -> dict[str, str]:
    """{path under docs/formats: text} for every schema, their diagrams and the index page."""
    examples = examples or {}
    env = environment()
    builder = DocBuilder(program)
    out: dict[str, str] = {}
    pages = []
    for sid, schema in sorted(program.schemas.items()):
        types = []
        for spec in program.walk(schema.root):
            doc, boxes = builder.type_doc(spec, schema)
            types.append(doc)
            if doc.svg_name:
                out[doc.svg_name] = layout_svg(doc.name, boxes)
        users = sorted({program.schema_of[u].id for t in program.walk(schema.root)
                        for u in program.users.get(t, ()) if program.schema_of[u] is not schema})
        out[f"{sid}.md"] = env.get_template("format_page.md.j2").render(
            s=schema, types=types, example=examples.get(sid), users=users,
            imports=sorted(schema.imports)).rstrip("\n") + "\n"
        pages.append((sid, schema.title or sid, oneline((schema.root.doc or "").split("\n\n")[0])))
    out["index.md"] = env.get_template("format_index.md.j2").render(pages=pages).rstrip("\n") + "\n"
    return out
