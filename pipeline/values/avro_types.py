"""Avro schemas as Spark and Arrow types, as Spark's own Avro support maps them: records as
structs, arrays, maps with string keys, enums as strings, fixed and bytes as binary, the logical
types as Spark's (decimal, date, timestamps), a union of null and one type as that type,
nullable. What Spark has no type for (other unions, a record that holds itself) is a JSON string."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import pyarrow as pa

from kafkacodec.codec.values.jsonable import jsonable

PRIMITIVES = {"boolean": ("boolean", pa.bool_()), "int": ("int", pa.int32()), "long": ("bigint", pa.int64()),
              "float": ("float", pa.float32()), "double": ("double", pa.float64()), "bytes": ("binary", pa.binary()),
              "string": ("string", pa.string()), "null": ("string", pa.string())}
LOGICAL = {("int", "date"): ("date", pa.date32()), ("long", "timestamp-millis"): ("timestamp", pa.timestamp("us", "UTC")),
           ("long", "timestamp-micros"): ("timestamp", pa.timestamp("us", "UTC")),
           ("long", "local-timestamp-millis"): ("timestamp_ntz", pa.timestamp("us")),
           ("long", "local-timestamp-micros"): ("timestamp_ntz", pa.timestamp("us")),
           ("string", "uuid"): ("string", pa.string())}
MAX_DECIMAL_PRECISION = 38  # Spark's


@dataclass(frozen=True)
class Mapped:
    ddl: str  # Spark's type, as DDL
    arrow: pa.DataType
    convert: Callable | None = None  # what fastavro gives -> what Arrow takes, where they differ
    as_json: bool = False  # whether some part of it is a JSON string (no Spark type holds that part)
    depth: int = 0  # how many records, arrays and maps nest in it


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _as_json(value):
    return None if value is None else json.dumps(jsonable(value), separators=(",", ":"))


AS_JSON = Mapped("string", pa.string(), _as_json, as_json=True)


def _within(precision: int, scale: int):
    """A decimal's converter: one with more digits than the column's precision is refused (Arrow
    would refuse the whole batch). fastavro rounds such a value to the precision, which moves its
    exponent off the scale: that is how it shows."""
    def convert(value):
        if value is not None and (value.as_tuple().exponent != -scale or len(value.as_tuple().digits) > precision):
            raise ValueError(f"a decimal of more digits than its precision, {precision}")
        return value
    return convert


def struct_converter(fields: list[tuple[str, Mapped]]):
    """A struct's converter: the fields whose values need converting converted, None when none do."""
    converting = [(n, m.convert) for n, m in fields if m.convert is not None]
    if not converting:
        return None

    def convert(record):
        if record is None:
            return None
        out = dict(record)
        for n, c in converting:
            out[n] = c(out.get(n))
        return out
    return convert


def _bounded(bits: int):
    """An int's or long's converter: fastavro reads a varint of any length, and a value past the
    column's range would make Arrow refuse the whole batch."""
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def convert(value):
        if value is not None and not low <= value <= high:
            raise ValueError(f"{value} is out of a {bits}-bit integer's range")
        return value
    return convert


BOUNDED = {"int": _bounded(32), "long": _bounded(64)}


def mapped(schema, named: dict | None = None, open_records: frozenset = frozenset()) -> Mapped:
    """The Spark and Arrow types of a schema parsed by fastavro (named types by full name)."""
    named = {} if named is None else named
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            ddl, arrow = PRIMITIVES[schema]
            return Mapped(ddl, arrow, BOUNDED.get(schema))
        if schema in open_records:  # a record that holds itself: no Spark type is deep enough
            return AS_JSON
        return mapped(named[schema], named, open_records)
    if isinstance(schema, list):
        branches = [s for s in schema if s != "null"]
        if len(branches) == 1:
            return mapped(branches[0], named, open_records)
        return AS_JSON
    kind = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed") and schema.get("precision", 0) <= MAX_DECIMAL_PRECISION:
        precision, scale = schema["precision"], schema.get("scale", 0)
        return Mapped(f"decimal({precision},{scale})", pa.decimal128(precision, scale), _within(precision, scale))
    if (kind, logical) in LOGICAL:
        ddl, arrow = LOGICAL[(kind, logical)]
        return Mapped(ddl, arrow, str if logical == "uuid" else None)
    if kind == "record":
        name = schema.get("name")
        if name:
            named[name] = schema
        inner = open_records | {name}
        fields = [(f["name"], mapped(f["type"], named, inner)) for f in schema["fields"]]
        ddl = "struct<" + ",".join(f"{quoted(n)}:{m.ddl}" for n, m in fields) + ">"
        arrow = pa.struct([(n, m.arrow) for n, m in fields])
        return Mapped(ddl, arrow, struct_converter(fields), any(m.as_json for _, m in fields),
                      1 + max((m.depth for _, m in fields), default=0))
    if kind == "enum":
        if schema.get("name"):
            named[schema["name"]] = schema
        return Mapped("string", pa.string())
    if kind == "fixed":
        if schema.get("name"):
            named[schema["name"]] = schema
        return Mapped("binary", pa.binary())
    if kind == "array":
        item = mapped(schema["items"], named, open_records)
        c = item.convert
        return Mapped(f"array<{item.ddl}>", pa.list_(item.arrow),
                      None if c is None else lambda xs: None if xs is None else [c(x) for x in xs],
                      item.as_json, item.depth + 1)
    if kind == "map":
        value = mapped(schema["values"], named, open_records)
        c = value.convert
        return Mapped(f"map<string,{value.ddl}>", pa.map_(pa.string(), value.arrow),
                      lambda m: None if m is None else [(k, v if c is None else c(v)) for k, v in m.items()],
                      value.as_json, value.depth + 1)
    if kind in PRIMITIVES:  # {"type": "string"}, and logical types Spark does not hold (time-millis)
        return mapped(kind, named, open_records)
    return mapped(kind, named, open_records)  # a named type referred to as {"type": "Name"}
