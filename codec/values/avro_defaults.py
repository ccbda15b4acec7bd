"""A reader's defaults read as Avro's specification reads them. fastavro hands back a field's
default as its JSON (a bytes default as text, a timestamp as a number, a record without the
fields that have defaults of their own), where the specification, and Avro's Java library the
JVM reader resolves with, mean the value those JSON bytes encode: code points 0-255 as bytes, a
union's default as its first branch, a record's missing fields from their defaults, logical
types applied. Each default is encoded once as the field's schema says and read back by fastavro,
and the value replaces the JSON in the parsed reader's schema."""
from __future__ import annotations

import io
import struct

from .avro_items import resolved as _resolved
from .problems import BAD_SCHEMA, UndecodableValue


class _NotItsType(ValueError):
    pass


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _sized(data: bytes) -> bytes:
    return _zigzag(len(data)) + data


def encode(schema, value, named: dict) -> bytes:
    """`value`, a default as JSON holds it, in Avro's binary encoding of `schema`."""
    schema = _resolved(schema, named)
    if isinstance(schema, list):  # a union's default is of its first branch
        return _zigzag(0) + encode(schema[0], value, named)
    kind = schema if isinstance(schema, str) else schema["type"]
    if kind == "null":
        if value is not None:
            raise _NotItsType(f"{value!r} is not null")
        return b""
    if kind == "boolean" and isinstance(value, bool):
        return b"\x01" if value else b"\x00"
    if kind in ("int", "long") and isinstance(value, int) and not isinstance(value, bool):
        return _zigzag(value)
    if kind in ("float", "double") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return struct.pack("<f" if kind == "float" else "<d", value)
    if kind == "string" and isinstance(value, str):
        return _sized(value.encode("utf-8", "surrogatepass"))
    if kind in ("bytes", "fixed") and isinstance(value, str):
        data = value.encode("latin-1")  # code points 0-255 are the bytes
        return data if kind == "fixed" else _sized(data)
    if kind == "enum" and value in schema.get("symbols", ()):
        return _zigzag(schema["symbols"].index(value))
    if kind == "array" and isinstance(value, list):
        items = b"".join(encode(schema["items"], v, named) for v in value)
        return (_zigzag(len(value)) + items if value else b"") + b"\x00"
    if kind == "map" and isinstance(value, dict):
        pairs = b"".join(_sized(str(k).encode("utf-8")) + encode(schema["values"], v, named) for k, v in value.items())
        return (_zigzag(len(value)) + pairs if value else b"") + b"\x00"
    if kind == "record" and isinstance(value, dict):
        out = b""
        for f in schema["fields"]:
            if f["name"] in value:
                out += encode(f["type"], value[f["name"]], named)
            elif "default" in f:
                out += encode(f["type"], f["default"], named)
            else:
                raise _NotItsType(f"it lacks field {f['name']}, which has no default")
        return out
    raise _NotItsType(f"{value!r} is not a {kind}")


def read_defaults(schema, named: dict, what: str, seen: set | None = None) -> None:
    """Every field default of the parsed `schema` replaced by the value it encodes."""
    import fastavro

    seen = set() if seen is None else seen
    schema = _resolved(schema, named)
    if isinstance(schema, list):
        for branch in schema:
            read_defaults(branch, named, what, seen)
        return
    if not isinstance(schema, dict) or id(schema) in seen:
        return
    seen.add(id(schema))
    kind = schema["type"]
    if kind in ("array", "map"):
        read_defaults(schema["items"] if kind == "array" else schema["values"], named, what, seen)
    if kind != "record":
        return
    for f in schema["fields"]:
        read_defaults(f["type"], named, what, seen)
        if "default" not in f:
            continue
        try:
            data = encode(f["type"], f["default"], named)
            # in a record of its own: a parsed top level carries the named types a reader needs
            holder = fastavro.parse_schema({"type": "record", "name": "_default", "fields": [
                {"name": "v", "type": f["type"]}]}, named_schemas=dict(named))
            f["default"] = fastavro.schemaless_reader(io.BytesIO(data), holder, None)["v"]
        except Exception as err:  # _NotItsType, and what fastavro meets (a uuid default that is none)
            raise UndecodableValue(BAD_SCHEMA, f"{what}: the default of field {f['name']} is not one of its type: "
                                               f"{type(err).__name__}: {err}") from None
