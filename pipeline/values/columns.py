"""Keys and values as typed columns: with `valueFormat` (and `keyFormat`) avro, protobuf or
json-schema, kafka-log adds `valueDecoded` (a struct of the subject's schema), `valueSchemaId`
(the id each record names) and `valueError` (why a record does not decode; NULL when it does),
beside the `value` bytes, which stay. Every record is read with its writer's schema; the column
has the type of the subject's version (its latest by default): Avro values are resolved to it as
Avro's schema evolution says, Protobuf and JSON values fill its fields by name (a field the
version lacks is left out, one it adds is NULL).

The schemas come from the log dir's own `_schemas` partition on whatever filesystem the read is
on, or from the `schemas` option (a `_schemas` partition directory, a directory of schema files,
a registry's address), read once on the driver and shipped to the tasks."""
from __future__ import annotations

import decimal
import json
import logging
from dataclasses import dataclass

import pyarrow as pa

from kafkacodec.codec.values.avro import parse_text
from kafkacodec.codec.values.decoding import SCHEMA_FORMATS, ValueDecoder
from kafkacodec.codec.values.problems import MISMATCH, UndecodableValue
from kafkacodec.codec.values.registry import RegisteredSchema, Registry

from . import avro_types, json_types, proto_types
from .avro_types import Mapped

log = logging.getLogger("kafkacodec.pipeline")
FORMATS = tuple(SCHEMA_FORMATS)  # avro, protobuf, json-schema


class ValueOptionError(ValueError):
    pass


@dataclass(frozen=True)
class TypedColumn:
    """What one of key or value decodes to: picklable, shipped with each slice."""
    field: str  # "key" or "value"
    format: str  # avro, protobuf or json-schema
    registry: Registry
    reader: RegisteredSchema  # the subject's version whose schema types the column
    ddl_type: str
    message: str | None = None  # Protobuf: the message type's full name (default: the schema's first)

    def ddl(self) -> str:
        return f"{self.field}Decoded {self.ddl_type}, {self.field}SchemaId int, {self.field}Error string"

    def names(self) -> tuple[str, str, str]:
        return f"{self.field}Decoded", f"{self.field}SchemaId", f"{self.field}Error"

    def message_name(self, decoder: ValueDecoder) -> str:
        """Protobuf: the full name of the column's message type."""
        _, root = decoder.protobuf.compiled(self.reader)
        if not root.message_type:
            raise UndecodableValue(MISMATCH, "the schema defines no message")
        return self.message or ".".join(filter(None, [root.package, root.message_type[0].name]))

    def decoder(self) -> tuple[ValueDecoder, Mapped]:
        is_key = self.field == "key"
        if self.format == "avro":
            named: dict = {}
            parsed = parse_text(self.reader.text, named, f"{self.reader.subject} version {self.reader.version}")
            decoder = ValueDecoder("avro", self.registry, is_key=is_key, avro_reader_schema=self.reader.text)
            return decoder, avro_types.mapped(parsed, named)
        decoder = ValueDecoder(self.format, self.registry, is_key=is_key)
        if self.format == "protobuf":
            name = self.message_name(decoder)
            pool, _ = decoder.protobuf.compiled(self.reader)
            return decoder, proto_types.message(pool.FindMessageTypeByName(name))
        documents = decoder.json_schema.documents(self.reader)
        types = json_types.mapped(json.loads(self.reader.text), documents=documents)
        return decoder, Mapped(types.ddl, types.arrow, json_types.column_converter(types))


def registry_in_log(uri: str, topic: str) -> Registry:
    """The registry's state from the `topic` partition under `uri` (any filesystem pyarrow reads);
    what cannot be used is logged and passed over."""
    from kafkacodec.runtime.errors import DecodeError
    from kafkacodec.storage.schemas.topic_records import registry_of
    from kafkacodec.storage.segments.reader import Skipped, batches_of

    from ..files import list_log, read_range

    found = [p for p in list_log(uri).partitions if p.topic == topic]
    if not found:
        raise ValueOptionError(f"no `{topic}` partition under {uri}: say where the schemas are with the schemas option")

    def records():
        for seg in found[0].segments:
            try:
                for batch in batches_of(read_range(uri, seg.log), skip_corrupt=True):
                    if isinstance(batch, Skipped):
                        log.warning("kafka-log: %s: bytes %d..%d of the schemas passed over: %s", seg.log,
                                    batch.start, batch.end, batch.error.message)
                        continue
                    for record in batch:
                        yield seg.log, batch, record
            except DecodeError as err:
                log.warning("kafka-log: %s: %s; the schemas after it are not read", seg.log, err)

    return registry_of(records(), lambda message: log.warning("kafka-log: %s", message))


def _registry(options: dict, uri: str) -> Registry:
    spec = options.get("schemas")
    topic = options.get("schemastopic", "_schemas")
    if spec is None:
        return registry_in_log(uri, topic)
    from pathlib import Path

    from kafkacodec.storage.schemas import open_schema_source

    source = open_schema_source(spec, Path(spec), topic)
    for line in source.passed_over:
        log.warning("kafka-log: %s", line)
    return source.registry


def typed_columns(options: dict, topics: tuple[str, ...] | None) -> list[TypedColumn]:
    """The typed columns the options ask for (names lower-cased, as Spark hands them over)."""
    wanted = [(f, options[f"{f}format"].lower()) for f in ("key", "value") if options.get(f"{f}format")]
    if not wanted:
        return []
    registry = None
    out = []
    for field, fmt in wanted:
        if fmt not in FORMATS:
            raise ValueOptionError(f"{field}Format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        subject = options.get(f"{field}subject")
        if subject is None:
            if not topics or len(topics) != 1:
                raise ValueOptionError(f"{field}Format={fmt} types one column by one subject: give {field}Subject, "
                                       f"or subscribe to one topic (its subject is <topic>-{field})")
            subject = f"{topics[0]}-{field}"
        registry = registry if registry is not None else _registry(options, options["path"])
        version = options.get(f"{field}schemaversion", "latest")
        reader = registry.latest(subject) if version == "latest" else registry.version(subject, _int(version, field))
        if reader is None:
            raise ValueOptionError(f"the schemas hold no {'live version' if version == 'latest' else f'version {version}'}"
                                   f" of subject {subject!r}")
        if reader.schema_type != SCHEMA_FORMATS[fmt]:
            raise ValueOptionError(f"subject {subject!r} holds a {reader.schema_type} schema, not {SCHEMA_FORMATS[fmt]}")
        column = TypedColumn(field, fmt, registry, reader, "", options.get(f"{field}message"))
        try:
            _, types = column.decoder()
        except UndecodableValue as err:
            raise ValueOptionError(f"subject {subject!r} version {reader.version}: {err.message}") from None
        except KeyError:
            raise ValueOptionError(f"subject {subject!r} has no message {column.message!r}") from None
        out.append(TypedColumn(field, fmt, registry, reader, types.ddl, column.message))
    return out


def _int(text: str, field: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueOptionError(f"{field}SchemaVersion must be latest or a number, not {text!r}") from None


class ColumnDecoder:
    """Decodes one batch's keys or values into the typed column's three arrays."""

    def __init__(self, column: TypedColumn):
        self.column = column
        self.decoder, self.types = column.decoder()
        self.message = column.message_name(self.decoder) if column.format == "protobuf" else None

    def arrays(self, raw: pa.Array, headers: pa.Array | None) -> list[pa.Array]:
        values, ids, errors = [], [], []
        convert = self.types.convert
        header_lists = headers.to_pylist() if headers is not None else None
        for i, data in enumerate(raw.to_pylist()):
            found = self.decoder.decode(data, _headers(header_lists[i]) if header_lists else ())
            ids.append(found.schema_id)
            if found.problem is not None:
                values.append(None)
                errors.append(f"{found.problem.kind}: {found.problem.message}")
                continue
            if self.message is not None and found.type_name != self.message:
                values.append(None)
                errors.append(f"{MISMATCH}: the record is a {found.type_name}, not the column's {self.message}")
                continue
            try:
                values.append(found.value if convert is None else convert(found.value))
                errors.append(None)
            except (ValueError, TypeError, AttributeError, decimal.InvalidOperation) as why:  # json_types.Mismatch too
                values.append(None)
                errors.append(f"{MISMATCH}: the value does not fit the column's type: {why}")
        return [self._array(values, errors), pa.array(ids, pa.int32()), pa.array(errors, pa.string())]

    def _array(self, values: list, errors: list) -> pa.Array:
        """The values as the column's Arrow array; one Arrow refuses (a value of a type a resolution
        left as the writer's) is that record's error, not its whole batch's."""
        try:
            return pa.array(values, self.types.arrow)
        except (pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError):
            pass
        for i, value in enumerate(values):
            try:
                pa.array([value], self.types.arrow)
            except (pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError) as why:
                values[i] = None
                errors[i] = f"{MISMATCH}: the value does not fit the column's type: {type(why).__name__}: {why}"
        return pa.array(values, self.types.arrow)


class _Header:
    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key, self.value = key, value


def _headers(pairs) -> list:
    return [_Header(h["key"], h["value"]) for h in pairs or ()]


def with_typed(batch: pa.RecordBatch, decoders: list[ColumnDecoder]) -> pa.RecordBatch:
    """`batch` with each typed column's arrays added at the end."""
    if not decoders:
        return batch
    arrays, names = list(batch.columns), list(batch.schema.names)
    headers = batch.column("headers") if "headers" in names else None
    for d in decoders:
        arrays += d.arrays(batch.column(d.column.field), headers)
        names += list(d.column.names())
    return pa.RecordBatch.from_arrays(arrays, names=names)
