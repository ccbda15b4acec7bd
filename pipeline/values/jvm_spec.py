"""What the JVM reader needs to give a typed Avro column as the Python source gives it
(pipeline/java/kafkacodec/spark/AvroColumn.java reads this): the reader's schema and the Spark
type it maps to, and what every schema id and GUID of the registry stands for, as the Python
decoder finds it: a writer's schema (the texts of the schemas it references first), or the
problem with it (another schema type, a reference the source lacks, a text fastavro refuses).
Only Avro columns whose every part Spark holds go to the JVM; the rest, with the reason, stay
with the Python source."""
from __future__ import annotations

import json

from kafkacodec.codec.values.decoding import MAX_DEPTH, SCHEMA_FORMATS, ValueDecoder
from kafkacodec.codec.values.framing import SchemaRef
from kafkacodec.codec.values.problems import UndecodableValue
from kafkacodec.codec.values.registry import RegisteredSchema

from .columns import TypedColumn


def why_not_jvm(column: TypedColumn) -> str | None:
    """Why the JVM reader cannot give `column` as the Python source does, or None when it can."""
    if column.format != "avro":
        return f"the JVM reader decodes Avro, not {column.format}"
    _, types = column.decoder()
    if types.as_json:
        return "part of the schema has no Spark type (a union of several types, or a record that holds itself)"
    if types.depth > MAX_DEPTH:
        return f"the schema nests deeper than {MAX_DEPTH} levels"
    return None


def _texts(decoder: ValueDecoder, schema: RegisteredSchema) -> list[str]:
    return [found.text for _, found in decoder.avro.references(schema)] + [schema.text]


def _entry(decoder: ValueDecoder, ref: SchemaRef) -> dict:
    try:
        schema = decoder.writer_schema(ref, SCHEMA_FORMATS["avro"])
        decoder.avro.writer(schema)  # what fastavro refuses is refused alike
        return {"id": schema.id, "texts": _texts(decoder, schema)}
    except UndecodableValue as err:
        return {"id": err.schema_id, "problem": f"{err.kind}: {err.message}"}


def spec(column: TypedColumn) -> dict:
    """One column's part of the option: its field, the reader's texts, the entries, and which entry
    each id and GUID stands for."""
    decoder = ValueDecoder("avro", column.registry, is_key=column.field == "key")
    registry = column.registry
    refs = [SchemaRef(id=i) for i in registry.ids()]
    refs += [SchemaRef(guid=g) for g in sorted({s.guid for s in registry.versions.values()})]
    entries: list[dict] = []
    index: dict[str, int] = {}  # an entry's JSON -> its place: ids and GUIDs of one schema share it
    by_ref: dict[str, int] = {}
    for ref in refs:
        entry = _entry(decoder, ref)
        key = json.dumps(entry, sort_keys=True)
        if key not in index:
            index[key] = len(entries)
            entries.append(entry)
        by_ref[f"id:{ref.id}" if ref.id is not None else f"guid:{ref.guid}"] = index[key]
    return {"field": column.field, "reader": _texts(decoder, column.reader), "schemas": entries, "refs": by_ref}


def typed_columns_option(columns: list[TypedColumn]) -> str:
    """The JVM reader's typedColumns option."""
    return json.dumps([spec(c) for c in columns], separators=(",", ":"))
