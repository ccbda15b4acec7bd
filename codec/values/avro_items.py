"""A bound on Avro arrays and maps whose items take no bytes (nulls, empty records): a block count
is a varint, so ten bytes can declare 10^8 such items, and fastavro allocates (or skips) each one.
Payloads of a schema that holds such a collection are walked first, without building values,
and refused past MAX_EMPTY_ITEMS items (the JVM reader's bound too); other schemas are not walked."""
from __future__ import annotations

from .problems import MISMATCH, UndecodableValue

MAX_EMPTY_ITEMS = 1 << 20
_FIXED_WIDTHS = {"null": 0, "boolean": 1, "float": 4, "double": 8}


class _Ended(Exception):
    """The payload ends (or is otherwise not the schema's) before the walk does: fastavro says how."""


def resolved(schema, named: dict):
    """`schema` with named references and {"type": <schema>} wrappers followed."""
    while True:
        if isinstance(schema, str) and schema in named:
            schema = named[schema]
        elif isinstance(schema, dict) and not isinstance(schema.get("type"), str):
            schema = schema["type"]
        elif isinstance(schema, dict) and schema["type"] in named:
            schema = named[schema["type"]]
        else:
            return schema


def _kind(schema) -> str:
    if isinstance(schema, list):
        return "union"
    return schema if isinstance(schema, str) else schema["type"]


def takes_no_bytes(schema, named: dict, seen: frozenset = frozenset()) -> bool:
    """Whether a value of `schema` may be written in no bytes."""
    schema = resolved(schema, named)
    kind = _kind(schema)
    if kind == "null":
        return True
    if kind == "fixed":
        return schema.get("size", 0) == 0
    if kind == "record":
        name = schema.get("name")
        if name in seen:  # a record that holds itself holds a union or a collection, which take bytes
            return False
        return all(takes_no_bytes(f["type"], named, seen | {name}) for f in schema["fields"])
    return False


def holds_empty_items(schema, named: dict) -> bool:
    """Whether some array or map of `schema` has items that may take no bytes."""
    stack, seen = [schema], set()
    while stack:
        node = resolved(stack.pop(), named)
        if isinstance(node, list):
            stack += node
        elif isinstance(node, dict):
            key = node.get("name") or id(node)
            if key in seen:
                continue
            seen.add(key)
            kind = node.get("type")
            if kind in ("array", "map"):
                items = node["items"] if kind == "array" else node["values"]
                if takes_no_bytes(items, named):
                    return True
                stack.append(items)
            elif kind == "record":
                stack += [f["type"] for f in node["fields"]]
    return False


class _Walk:
    def __init__(self, data: bytes, at: int, named: dict, schema_id: int):
        self.data, self.at, self.named, self.schema_id = data, at, named, schema_id

    def varint(self) -> int:
        shift = result = 0
        while True:
            if self.at >= len(self.data) or shift > 63:
                raise _Ended
            b = self.data[self.at]
            self.at += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7

    def skip(self, n: int) -> None:
        if n < 0 or self.at + n > len(self.data):
            raise _Ended
        self.at += n

    def value(self, schema) -> None:
        schema = resolved(schema, self.named)
        kind = _kind(schema)
        if kind in _FIXED_WIDTHS:
            self.skip(_FIXED_WIDTHS[kind])
        elif kind in ("int", "long", "enum"):
            self.varint()
        elif kind in ("string", "bytes"):
            self.skip(self.varint())
        elif kind == "fixed":
            self.skip(schema["size"])
        elif kind == "union":
            index = self.varint()
            if not 0 <= index < len(schema):
                raise _Ended
            self.value(schema[index])
        elif kind == "record":
            for f in schema["fields"]:
                self.value(f["type"])
        elif kind in ("array", "map"):
            self.items(schema["items"] if kind == "array" else schema["values"], kind == "map")
        else:
            raise _Ended

    def items(self, item, keyed: bool) -> None:
        empty = not keyed and takes_no_bytes(item, self.named)
        total = 0
        while True:
            n = self.varint()
            if n == 0:
                return
            if n < 0:
                self.varint()  # the block's size in bytes
                n = -n
            total += n
            if empty:  # nothing to read; only the count to bound
                if total > MAX_EMPTY_ITEMS:
                    raise UndecodableValue(MISMATCH, f"an array of more than {MAX_EMPTY_ITEMS} items that take no "
                                                     f"bytes (schema {self.schema_id}) is not read", self.at,
                                           self.schema_id)
                continue
            for _ in range(n):  # each takes a byte at least: the payload's end stops a count too large
                if keyed:
                    self.skip(self.varint())
                self.value(item)


def check_items(data: bytes, at: int, schema, named: dict, schema_id: int) -> None:
    """Raises UndecodableValue where the payload holds more items that take no bytes than are read;
    any other problem is left for the decoder to name."""
    try:
        _Walk(data, at, named, schema_id).value(schema)
    except (_Ended, RecursionError):
        return
