"""One entry point: a key or value in, its value out (or why not), by the format asked for.

- `registry`: framed as Confluent's serializers frame it; decoded by the type of the schema its
  id names (Avro, Protobuf or JSON Schema). `avro`, `protobuf` and `json-schema` are the same,
  and the schema must be of that type.
- `json`, `string`, `hex`, `base64`: the bytes as they are (no framing).
- `auto`: `registry` where the bytes are framed and name a schema the source holds, else text
  where they are UTF-8, else base64; bytes that look framed but name a schema the source lacks
  are given so with a note (a big-endian number starts as a framed payload does, so this is no
  error here; `registry` makes it one).
A record's problem is returned with it, never raised: one bad record stops nothing."""
from __future__ import annotations

import base64
from dataclasses import dataclass

from . import framing
from .avro import AvroDecoder
from .json_schema import JsonSchemaDecoder, read_json
from .problems import MISMATCH, NOT_TEXT, UNKNOWN_SCHEMA, UndecodableValue
from .protobuf import ProtobufDecoder
from .registry import AVRO, JSON_SCHEMA, PROTOBUF, RegisteredSchema, Registry

SCHEMA_FORMATS = {"avro": AVRO, "protobuf": PROTOBUF, "json-schema": JSON_SCHEMA}
MAX_DEPTH = 200  # levels of nesting a value may have: what prints it, and Arrow, recurse
FORMATS = ("auto", "registry", *SCHEMA_FORMATS, "json", "string", "hex", "base64")
FORMAT_OF_TYPE = {t: f for f, t in SCHEMA_FORMATS.items()}


@dataclass(frozen=True)
class Decoded:
    value: object  # Python values (None for a null key or value)
    format: str | None  # the format that read it: avro, protobuf, json-schema, json, string, hex, base64
    schema: RegisteredSchema | None = None
    problem: UndecodableValue | None = None
    note: str | None = None  # what `auto` guessed, where it guessed; what a Protobuf value left out
    type_name: str | None = None  # Protobuf: the full name of the message type the payload is

    @property
    def schema_id(self) -> int | None:
        if self.schema is not None:
            return self.schema.id
        return self.problem.schema_id if self.problem is not None else None


class ValueDecoder:
    """Decodes keys (`is_key`) or values in `fmt` with the schemas of `registry`."""

    def __init__(self, fmt: str, registry: Registry | None = None, is_key: bool = False, validate: bool = False,
                 avro_reader_schema: str | None = None, context: str | None = None):
        if fmt not in FORMATS:
            raise ValueError(f"{fmt!r} is none of the formats {', '.join(FORMATS)}")
        self.format = fmt
        self.registry = registry if registry is not None else Registry()
        self.is_key = is_key
        self.context = context
        self._schemas: dict = {}  # by id or GUID: the registry does not change while records are read
        resolve = self.registry.version
        self.avro = AvroDecoder(resolve, avro_reader_schema)
        self.protobuf = ProtobufDecoder(resolve)
        self.json_schema = JsonSchemaDecoder(resolve, validate)

    def decode(self, data: bytes | None, headers=()) -> Decoded:
        if data is None:
            return Decoded(None, None)
        try:
            found = self._decode(data, headers)
        except UndecodableValue as problem:
            return Decoded(None, None, None, problem)
        except RecursionError:
            return Decoded(None, None, None, UndecodableValue(MISMATCH, "the value nests deeper than Python reads"))
        if isinstance(found.value, (dict, list)) and _deeper_than(found.value, MAX_DEPTH):
            problem = UndecodableValue(MISMATCH, f"the value nests deeper than {MAX_DEPTH} levels", None, found.schema_id)
            return Decoded(None, None, None, problem)
        return found

    def _decode(self, data: bytes, headers) -> Decoded:
        fmt = self.format
        if fmt == "auto":
            try:
                framed = framing.unframe(data, headers, self.is_key)
            except UndecodableValue:
                framed = None
            if framed is not None and self._schema(framed.ref) is not None:
                return self._registered(data, None, framed)
            note = None if framed is None else f"starts as a payload of schema {framed.ref} does, which the " \
                                               "schema source does not hold"
            try:
                return Decoded(bytes(data).decode("utf-8"), "string", note=note)
            except UnicodeDecodeError:
                return Decoded(base64.b64encode(data).decode(), "base64", note=note)
        if fmt == "string":
            try:
                return Decoded(bytes(data).decode("utf-8"), "string")
            except UnicodeDecodeError as err:
                raise UndecodableValue(NOT_TEXT, f"not UTF-8: {err.reason} at its byte {err.start}", err.start) from None
        if fmt == "json":
            return Decoded(read_json(data), "json")
        if fmt == "hex":
            return Decoded(bytes(data).hex(), "hex")
        if fmt == "base64":
            return Decoded(base64.b64encode(data).decode(), "base64")
        return self._registered(data, SCHEMA_FORMATS.get(fmt), framing.unframe(data, headers, self.is_key))

    def _schema(self, ref: framing.SchemaRef) -> RegisteredSchema | None:
        if ref not in self._schemas:
            self._schemas[ref] = self.registry.by_id(ref.id, self.context) if ref.id is not None \
                else self.registry.by_guid(ref.guid)
        return self._schemas[ref]

    def writer_schema(self, ref: framing.SchemaRef, wanted_type: str | None) -> RegisteredSchema:
        """The schema a payload names, of `wanted_type` when one is wanted; else an UndecodableValue."""
        schema = self._schema(ref)
        if schema is None:
            contexts = self.registry.contexts_of(ref.id) if ref.id is not None else []
            more = f" (contexts {', '.join(contexts)} each hold one: say which)" if len(contexts) > 1 else ""
            raise UndecodableValue(UNKNOWN_SCHEMA, f"the schema source holds no schema of {ref}{more}", 0, ref.id)
        if wanted_type is not None and schema.schema_type != wanted_type:
            raise UndecodableValue(MISMATCH, f"schema {schema.id} is {schema.schema_type}, not {wanted_type}",
                                   0, schema.id)
        return schema

    def _registered(self, data: bytes, wanted_type: str | None, framed: framing.Framed) -> Decoded:
        schema = self.writer_schema(framed.ref, wanted_type)
        at = 0 if framed.in_header else framed.body_at  # a header names the schema: the payload is bare
        type_name = note = None
        if schema.schema_type == AVRO:
            value = self.avro.decode(data, schema, at)
        elif schema.schema_type == PROTOBUF:  # the message indexes follow the id, in the header or the payload
            indexes, after = framing.message_indexes(framed.header if framed.in_header else data, framed.body_at)
            value, unknown = self.protobuf.decode(data, schema, indexes, 0 if framed.in_header else after)
            type_name = self.protobuf.message_class(schema, indexes).DESCRIPTOR.full_name
            if unknown:
                note = f"{unknown} bytes of fields {type_name} of schema {schema.id} does not define are left out"
        else:
            value = self.json_schema.decode(data, schema, at)
        return Decoded(value, FORMAT_OF_TYPE[schema.schema_type], schema, note=note, type_name=type_name)


def _deeper_than(value, limit: int) -> bool:
    """Whether lists and maps nest more than `limit` levels in `value` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack += [(child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))]
    return False
