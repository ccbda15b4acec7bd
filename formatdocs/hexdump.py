"""Label every byte range of an example with its field, by walking the schema model beside the
object the generated reader decoded from the same bytes."""
from __future__ import annotations

from enum import Enum

from kafkacodec.generator.docs import HexRow
from kafkacodec.generator.model import PRIMITIVES, Attr, RefKind, TypeSpec
from kafkacodec.generator.program import Program
from kafkacodec.runtime import varint

INTRINSIC_SIZE = {"zigzag32": varint.zigzag32_size, "zigzag64": varint.zigzag64_size,
                  "uvarint32": varint.uvarint_size}


def show(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, Enum):
        return f"{value.name} ({value.value})"
    if isinstance(value, (bytes, bytearray)):
        if value and all(32 <= b < 127 for b in value) and b"|" not in value and b"`" not in value:
            return f'"{value.decode()}"' if len(value) <= 40 else f'"{value[:37].decode()}…" ({len(value)} bytes)'
        return f"{len(value)} bytes"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


class Annotator:
    def __init__(self, program: Program, data: bytes):
        self.program, self.data = program, data

    def _target(self, a: Attr, value) -> TypeSpec | None:
        """The type of a field's value; for a switch, the case whose class the value is."""
        if a.type.kind is not RefKind.SWITCH:
            return self.program.resolved.get(a.type)
        if isinstance(value, (bytes, bytearray)):
            return None
        cases = (self.program.resolved.get(ref) for _, ref in a.type.cases)
        return next((t for t in cases if t is not None and self.program.py_name(t) == type(value).__name__), None)

    def _one_size(self, a: Attr, target: TypeSpec | None, v) -> int | None:
        if a.type.kind is RefKind.PRIM:
            return PRIMITIVES[a.type.prim][1]
        if target is not None and target.intrinsic:
            return INTRINSIC_SIZE[target.intrinsic](v)
        if isinstance(v, (bytes, bytearray)):
            return len(v)
        if isinstance(v, str):
            return len(v.encode(a.type.encoding or "utf-8"))
        if a.process is not None:
            return None  # the stored bytes may differ from the decoded ones
        return v.size()

    def size(self, a: Attr, target: TypeSpec | None, value) -> int | None:
        items = value if a.repeat else [value]
        sizes = [self._one_size(a, target, v) for v in items]
        return None if None in sizes else sum(sizes)

    def rows(self, spec: TypeSpec, obj, start: int, prefix: str = "") -> list[HexRow]:
        present = [(a, getattr(obj, a.id)) for a in spec.seq]
        present = [(a, v) for a, v in present if v is not None]
        targets = {a.id: self._target(a, v) for a, v in present}
        sizes = {a.id: self.size(a, targets[a.id], v) for a, v in present}
        unknown = [k for k, n in sizes.items() if n is None]
        if len(unknown) == 1:  # the one field whose stored size is not its decoded size
            sizes[unknown[0]] = obj.size() - sum(n for n in sizes.values() if n is not None)
        out, pos = [], start
        for a, v in present:
            n, target = sizes[a.id], targets[a.id]
            path = f"{prefix}{a.id}"
            raw = self.data[pos:pos + n]
            nested = target is not None and not target.intrinsic and a.type.kind in (RefKind.USER, RefKind.SWITCH)
            if nested and a.repeat:
                at = pos
                for i, item in enumerate(v):
                    out += self.rows(target, item, at, f"{path}[{i}].")
                    at += item.size()
            elif nested and (a.process is None or raw == v.to_bytes()):
                out += self.rows(target, v, pos, f"{path}.")
            else:
                out.append(HexRow(pos, raw, path, show(v)))
            pos += n
        return out


def annotate(program: Program, schema_id: str, data: bytes, obj) -> list[HexRow]:
    rows = Annotator(program, data).rows(program.schemas[schema_id].root, obj, 0)
    covered = sum(len(r.data) for r in rows)
    if covered != len(data):
        raise ValueError(f"{schema_id}: the example's labels cover {covered} of its {len(data)} bytes")
    return rows
