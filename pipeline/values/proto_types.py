"""Protobuf messages as Spark and Arrow types, from their descriptors: a message is a struct of its
fields (the .proto's names), repeated fields arrays, map fields maps, enums their names, 32-bit
integers int, 64-bit ones bigint (unsigned ones that may pass 2^63 decimal(20,0)), bytes binary,
google.protobuf.Timestamp a timestamp and the wrappers (StringValue, Int64Value, ...) their
value. Struct, Value, ListValue, Any and a message that holds itself are JSON text.

Values come as protobuf's JSON mapping (codec.values.protobuf) and are converted here: bytes from
base64, timestamps from RFC 3339, maps from objects."""
from __future__ import annotations

import base64
import datetime
import decimal
import json

import pyarrow as pa

from kafkacodec.codec.values.jsonable import jsonable

from .avro_types import Mapped, quoted, struct_converter

# FieldDescriptor.TYPE_* numbers
_DOUBLE, _FLOAT, _INT64, _UINT64, _INT32, _FIXED64, _FIXED32, _BOOL, _STRING, _GROUP, _MESSAGE, _BYTES, _UINT32, \
    _ENUM, _SFIXED32, _SFIXED64, _SINT32, _SINT64 = range(1, 19)
SCALARS = {_DOUBLE: ("double", pa.float64()), _FLOAT: ("float", pa.float32()), _INT64: ("bigint", pa.int64()),
           _SINT64: ("bigint", pa.int64()), _SFIXED64: ("bigint", pa.int64()), _INT32: ("int", pa.int32()),
           _SINT32: ("int", pa.int32()), _SFIXED32: ("int", pa.int32()), _UINT32: ("bigint", pa.int64()),
           _FIXED32: ("bigint", pa.int64()), _BOOL: ("boolean", pa.bool_()), _STRING: ("string", pa.string()),
           _ENUM: ("string", pa.string())}
UNSIGNED_64 = (_UINT64, _FIXED64)
WRAPPERS = {f"google.protobuf.{name}Value" for name in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32",
                                                        "Bool", "String", "Bytes")}
AS_JSON_TYPES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
                 "google.protobuf.Any"}


def _json_text(value):
    return None if value is None else json.dumps(jsonable(value), separators=(",", ":"))


def _float(value):
    return None if value is None else float(value)  # "NaN" and "Infinity" are strings in the JSON mapping


def _bytes(value):
    return None if value is None else base64.b64decode(value)


def _timestamp(value):
    if value is None:
        return None
    text = value.replace("Z", "+00:00")
    if "." in text:  # nanoseconds: Python keeps microseconds
        head, tail = text.split(".", 1)
        digits = "".join(c for c in tail if c.isdigit())
        text = f"{head}.{digits[:6].ljust(6, '0')}{tail[len(digits):]}"
    return datetime.datetime.fromisoformat(text)


def _unsigned(value):
    return None if value is None else decimal.Decimal(int(value))


AS_JSON = Mapped("string", pa.string(), _json_text)


def _field(field, open_messages: frozenset) -> Mapped:
    if field.type in (_MESSAGE, _GROUP):
        if field.message_type.GetOptions().map_entry:
            key = _field(field.message_type.fields_by_name["key"], open_messages)
            value = _field(field.message_type.fields_by_name["value"], open_messages)
            kc, vc = key.convert, value.convert
            return Mapped(f"map<{key.ddl},{value.ddl}>", pa.map_(key.arrow, value.arrow),
                          lambda m: None if m is None else [(k if kc is None else kc(k), v if vc is None else vc(v))
                                                            for k, v in m.items()])
        item = message(field.message_type, open_messages)
    elif field.type in UNSIGNED_64:
        item = Mapped("decimal(20,0)", pa.decimal128(20, 0), _unsigned)
    elif field.type == _BYTES:
        item = Mapped("binary", pa.binary(), _bytes)
    elif field.type in (_DOUBLE, _FLOAT):
        ddl, arrow = SCALARS[field.type]
        item = Mapped(ddl, arrow, _float)
    elif field.type in (_INT64, _SINT64, _SFIXED64):  # the JSON mapping may quote them
        ddl, arrow = SCALARS[field.type]
        item = Mapped(ddl, arrow, lambda v: None if v is None else int(v))
    else:
        ddl, arrow = SCALARS[field.type]
        item = Mapped(ddl, arrow)
    repeated = getattr(field, "is_repeated", None)
    if repeated is None:
        repeated = field.label == 3  # LABEL_REPEATED
    if repeated:
        c = item.convert
        return Mapped(f"array<{item.ddl}>", pa.list_(item.arrow),
                      None if c is None else lambda xs: None if xs is None else [c(x) for x in xs])
    return item


def message(descriptor, open_messages: frozenset = frozenset()) -> Mapped:
    """The Spark and Arrow types of a message descriptor."""
    name = descriptor.full_name
    if name == "google.protobuf.Timestamp":
        return Mapped("timestamp", pa.timestamp("us", "UTC"), _timestamp)
    if name in WRAPPERS:
        return _field(descriptor.fields_by_name["value"], open_messages)
    if name in AS_JSON_TYPES or name in open_messages or not descriptor.fields:
        return AS_JSON
    inner = open_messages | {name}
    fields = [(f.name, _field(f, inner)) for f in descriptor.fields]
    return Mapped("struct<" + ",".join(f"{quoted(n)}:{m.ddl}" for n, m in fields) + ">",
                  pa.struct([(n, m.arrow) for n, m in fields]), struct_converter(fields))
