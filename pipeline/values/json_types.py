"""JSON Schemas as Spark and Arrow types: an object with `properties` is a struct of them, `string`
a string, `integer` a bigint, `number` a double, `boolean` a boolean, an array of one `items`
schema an array; a `$ref` to a registered reference or into the same document is followed; a
type list of null and one type is that type. Anything else (oneOf, anyOf, several types, a schema
that refers to itself) is JSON text. A value that does not fit the type it maps to (a string
where the schema says integer: its validation was not asked for) is the record's error, not the
batch's."""
from __future__ import annotations

import json

import pyarrow as pa

from kafkacodec.codec.values.jsonable import jsonable

from .avro_types import Mapped, quoted


def column_converter(mapped_type: Mapped):
    """The converter a column applies to each value (this module's take a path for messages)."""
    return None if mapped_type.convert is None else (lambda value: mapped_type.convert(value, "value"))

SCALARS = {"string": ("string", pa.string(), str), "integer": ("bigint", pa.int64(), int),
           "number": ("double", pa.float64(), float), "boolean": ("boolean", pa.bool_(), bool)}
MAX_INT64 = 2 ** 63


class Mismatch(ValueError):
    """A value that does not fit its column's type; the message says where."""


def _json_text(value, where="value"):
    return None if value is None else json.dumps(jsonable(value), separators=(",", ":"))


AS_JSON = Mapped("string", pa.string(), _json_text)


def _scalar(kind: str):
    ddl, arrow, python = SCALARS[kind]

    def convert(value, where="value"):
        if value is None:
            return None
        if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, python) or (python is int and isinstance(value, bool)):
            raise Mismatch(f"{where} is {type(value).__name__}, not {kind}")
        if kind == "integer" and not -MAX_INT64 <= value < MAX_INT64:
            raise Mismatch(f"{where} is beyond a 64-bit integer")
        return value
    return Mapped(ddl, arrow, convert)


def _resolve(schema: dict, root, documents: dict):
    ref = schema["$ref"]
    name, _, pointer = ref.partition("#")
    doc = documents.get(name) if name else root
    if doc is None:
        return None
    for part in [p for p in pointer.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def mapped(schema, root=None, documents: dict | None = None, open_refs: frozenset = frozenset()) -> Mapped:
    """The Spark and Arrow types of a JSON Schema; `documents`: its references by name."""
    root = schema if root is None else root
    documents = documents or {}
    if not isinstance(schema, dict):
        return AS_JSON
    if "$ref" in schema:
        if schema["$ref"] in open_refs:
            return AS_JSON
        target = _resolve(schema, root, documents)
        if target is None:
            return AS_JSON
        name = schema["$ref"].partition("#")[0]
        return mapped(target, documents.get(name, root) if name else root, documents, open_refs | {schema["$ref"]})
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if any(k in schema for k in ("oneOf", "anyOf", "allOf", "not", "if")):
        return AS_JSON
    if kind in SCALARS:
        return _scalar(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        item = mapped(schema["items"], root, documents, open_refs)

        def convert_array(value, where="value"):
            if value is None:
                return None
            if not isinstance(value, list):
                raise Mismatch(f"{where} is {type(value).__name__}, not an array")
            return [item.convert(v, f"{where}[{i}]") if item.convert is not None else v for i, v in enumerate(value)]
        return Mapped(f"array<{item.ddl}>", pa.list_(item.arrow), convert_array)
    properties = schema.get("properties")
    if kind in ("object", None) and isinstance(properties, dict) and properties:
        fields = [(name, mapped(sub, root, documents, open_refs)) for name, sub in properties.items()]

        def convert_object(value, where="value"):
            if value is None:
                return None
            if not isinstance(value, dict):
                raise Mismatch(f"{where} is {type(value).__name__}, not an object")
            return {n: (m.convert(value.get(n), f"{where}.{n}") if m.convert is not None else value.get(n))
                    for n, m in fields}
        return Mapped("struct<" + ",".join(f"{quoted(n)}:{m.ddl}" for n, m in fields) + ">",
                      pa.struct([(n, m.arrow) for n, m in fields]), convert_object)
    return AS_JSON
