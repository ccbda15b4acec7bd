"""Avro payloads by their writer's schema (fastavro): the registered text parsed once per id,
the schemas it references parsed first into the same names, and a reader's schema, when given,
resolved against it as Avro's rules say (fields added with defaults, promotions, aliases)."""
from __future__ import annotations

import io
import json
from typing import Callable

from .avro_defaults import read_defaults
from .avro_items import check_items, holds_empty_items
from .problems import BAD_SCHEMA, MISMATCH, TRUNCATED, Remembered, UndecodableValue
from .registry import RegisteredSchema, referenced

Resolve = Callable[[str, int], RegisteredSchema | None]  # (subject, version) -> the referenced version


def _negative_fixed(node) -> bool:
    """Whether a fixed of a negative size is declared in `node` (fastavro takes one, and then reads
    backwards)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack += n
        elif isinstance(n, dict):
            if n.get("type") == "fixed" and isinstance(n.get("size"), int) and n["size"] < 0:
                return True
            stack += [v for v in n.values() if isinstance(v, (dict, list))]
    return False


def parse_text(text: str, named: dict, what: str, schema_id: int | None = None):
    """A schema's JSON text parsed by fastavro, its named types added to `named`."""
    import fastavro

    try:
        loaded = json.loads(text)
        if _negative_fixed(loaded):
            raise ValueError("a fixed of a negative size")
        return fastavro.parse_schema(loaded, named_schemas=named)
    except RecursionError:
        raise UndecodableValue(BAD_SCHEMA, f"{what} nests deeper than Python reads", schema_id=schema_id) from None
    except Exception as err:  # fastavro raises what it meets (SchemaParseException, KeyError, ...)
        raise UndecodableValue(BAD_SCHEMA, f"{what} is not an Avro schema fastavro reads: "
                                           f"{type(err).__name__}: {err}", schema_id=schema_id) from None


def _recursive(schema, named: dict) -> bool:
    """Whether a named type of the parsed schema can hold itself (a list, a tree)."""
    def names_in(node, out: set) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, str):
                out.add(n)
            elif isinstance(n, list):
                stack += n
            elif isinstance(n, dict):
                stack += [n.get("type"), n.get("items"), n.get("values")] + [f["type"] for f in n.get("fields", ())]
    for name, definition in named.items():
        seen, todo = set(), [definition]
        while todo:
            found: set = set()
            names_in(todo.pop(), found)
            for ref in found - seen:
                seen.add(ref)
                if ref == name:
                    return True
                if ref in named:
                    todo.append(named[ref])
    return False


class AvroDecoder:
    """Payloads into Python values (records as dicts, logical types as Python's: Decimal,
    datetime, date, UUID)."""

    def __init__(self, resolve: Resolve, reader_schema: str | None = None):
        self._resolve = resolve
        self._deep: dict[tuple[str, int], bool] = {}  # schemas whose values may nest without end
        self._bounded: dict[tuple[str, int], dict | None] = {}  # the names of schemas whose items are counted first
        self.writer = Remembered(self._writer)
        reader_named: dict = {}
        self._reader = parse_text(reader_schema, reader_named, "the reader's schema") if reader_schema is not None \
            else None
        if self._reader is not None:  # as the specification reads them, which fastavro does not
            read_defaults(self._reader, reader_named, "the reader's schema")
        self._reader_deep = self._reader is not None and _recursive(self._reader, reader_named)

    def _writer(self, schema: RegisteredSchema):
        """The writer's schema parsed, the schemas it references first."""
        named: dict = {}
        for name, found in self.references(schema):
            parse_text(found.text, named, f"the schema {name} that schema {schema.id} references", schema.id)
        parsed = parse_text(schema.text, named, f"schema {schema.id} ({schema.subject} version {schema.version})",
                            schema.id)
        self._deep[(schema.context, schema.id)] = _recursive(parsed, named)
        self._bounded[(schema.context, schema.id)] = named if holds_empty_items(parsed, named) else None
        return parsed

    def references(self, schema: RegisteredSchema) -> list[tuple[str, RegisteredSchema]]:
        """The schemas `schema` references, each after those it references in turn: the order they
        are parsed in, so that every name is defined before it is used."""
        out: list[tuple[str, RegisteredSchema]] = []
        seen: set = set()

        def visit(referrer: RegisteredSchema) -> None:
            for ref in referrer.references:
                found = referenced(self._resolve, referrer, ref)
                if (found.subject, found.version) not in seen:
                    seen.add((found.subject, found.version))
                    visit(found)
                    out.append((ref.name, found))
        visit(schema)
        return out

    def decode(self, payload: bytes, schema: RegisteredSchema, at: int = 0):
        """The value of `payload[at:]`; every byte must be read."""
        import fastavro

        writer = self.writer(schema)
        named = self._bounded[(schema.context, schema.id)]
        if named is not None:  # items that take no bytes, which fastavro would make one by one
            check_items(payload, at, writer, named, schema.id)
        stream = io.BytesIO(payload)
        stream.seek(at)
        # a schema that holds itself is read by fastavro's Python reader, whose depth Python bounds: its
        # compiled one recurses on the C stack, which a value nested deep enough overflows
        deep = self._deep[(schema.context, schema.id)] or self._reader_deep
        try:
            if deep:
                from fastavro import _read_py
                value = _read_py.schemaless_reader(stream, writer, self._reader)
            else:
                value = fastavro.schemaless_reader(stream, writer, self._reader)
        except RecursionError:
            raise UndecodableValue(MISMATCH, f"the payload nests deeper than Python reads (schema {schema.id})",
                                   at, schema.id) from None
        except EOFError:
            raise UndecodableValue(TRUNCATED, f"the payload ends before schema {schema.id} is read",
                                   len(payload), schema.id) from None
        except Exception as err:  # what fastavro meets in bytes that are not its schema's
            said = str(err) if len(str(err)) <= 200 else str(err)[:200] + "..."  # resolution errors quote both schemas
            raise UndecodableValue(MISMATCH, f"the payload does not read as schema {schema.id}: "
                                             f"{type(err).__name__}: {said}", stream.tell(), schema.id) from None
        if stream.tell() != len(payload):
            raise UndecodableValue(MISMATCH, f"{_bytes(len(payload) - stream.tell())} follow the value schema "
                                             f"{schema.id} reads", stream.tell(), schema.id)
        return value


def _bytes(n: int) -> str:
    return f"{n} byte{'s' if n != 1 else ''}"
