"""The JVM reader's typed Avro columns against the Python source's, record by record, on payloads
fastavro wrote and on payloads damaged every way a value can be: both readers must give the same
struct, the same schema id and the same kind of error for each (the messages' wording may differ
where the error comes from each reader's Avro library)."""
import decimal
import io
import json
import struct
import uuid

import pytest

pytestmark = pytest.mark.spark

from kafkacodec.codec.values.registry import RegisteredSchema  # noqa: E402
from kafkacodec.pipeline.reading import read, reader_of  # noqa: E402
from kafkacodec.storage.change.writer import PartitionWriter  # noqa: E402

INNER = {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"},
                                                         {"name": "flags", "type": {"type": "map", "values": "boolean"}}]}
V1 = {"type": "record", "name": "Event", "namespace": "t", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "counts", "type": {"type": "map", "values": "int"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
    {"name": "blob", "type": {"type": "fixed", "name": "Three", "size": 3}},
    {"name": "inner", "type": ["null", INNER], "default": None},
    {"name": "ratio", "type": "float"}, {"name": "small", "type": "int"}, {"name": "on", "type": "boolean"}]}
V2 = dict(V1, fields=V1["fields"] + [{"name": "extra", "type": "string", "default": "x"}])
# an older writer: numbers the reader widens, bytes it reads as text, a record where it has a union, an
# enum symbol it lacks, and a field it does not have (a nested one, passed over)
V0 = {"type": "record", "name": "Event", "namespace": "t", "fields": [
    {"name": "id", "type": "int"}, {"name": "name", "type": "bytes"}, V1["fields"][2], V1["fields"][3],
    V1["fields"][4], V1["fields"][5], {"name": "tags", "type": {"type": "array", "items": "bytes"}},
    {"name": "dropped", "type": {"type": "array", "items": {"type": "record", "name": "Gone", "fields": [
        {"name": "g", "type": ["null", "string", "long"]}, {"name": "h", "type": {"type": "map", "values": "float"}}]}}},
    V1["fields"][7], {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["D", "C", "A", "B"]}},
    V1["fields"][9], {"name": "inner", "type": INNER}, {"name": "ratio", "type": "long"},
    {"name": "small", "type": "int"}, {"name": "on", "type": "boolean"}]}
NOTHING = {"type": "record", "name": "Nothing", "fields": [{"name": "xs", "type": {"type": "array", "items": "null"}}]}
MIXED = {"type": "record", "name": "Mixed", "fields": [{"name": "v", "type": ["int", "string"]}]}
OTHER = {"type": "record", "name": "Event", "namespace": "t", "fields": [{"name": "id", "type": "string"}]}


def _value(**changes):
    value = {"id": 7, "name": "café", "price": decimal.Decimal("12.34"), "at": 1_700_000_000_123,
             "day": 19_000, "uid": "0f8fad5b-d9cb-469f-a165-70867728950e", "tags": ["a", "b"],
             "counts": {"k": 1}, "kind": "B", "blob": b"xyz", "inner": {"x": 3, "flags": {"f": True}},
             "ratio": 0.5, "small": -3, "on": True, "extra": "y"}
    value.update(changes)
    return value


def _avro(schema, value) -> bytes:
    import fastavro
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return out.getvalue()


def _framed(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + struct.pack(">i", schema_id) + body


def _registry_records():
    schemas = [("events-value", 1, 1, V1, None, []), ("events-value", 2, 2, V2, None, []),
               ("other-value", 1, 3, 'syntax = "proto3";\nmessage M { int32 a = 1; }\n', "PROTOBUF", []),
               ("broken-value", 1, 4, V1, None, [{"name": "t.Missing", "subject": "missing", "version": 1}]),
               ("nonsense-value", 1, 5, {"type": "nonsense"}, None, []),
               ("other-event-value", 1, 6, OTHER, None, []), ("legacy-value", 1, 7, V0, None, []),
               ("nothing-value", 1, 8, NOTHING, None, []), ("mixed-value", 1, 9, MIXED, None, [])]
    for subject, version, schema_id, schema, kind, refs in schemas:
        yield _schema_record(subject, version, schema_id, schema, **({"schemaType": kind} if kind else {}),
                             **({"references": refs} if refs else {}))


def _payloads():
    """(what it is, value bytes or None, headers)."""
    v2 = _avro(V2, _value())
    guid = RegisteredSchema("events-value", 2, 2, "AVRO", json.dumps(V2, separators=(",", ":"))).guid
    big_string = bytearray(_avro(V2, _value(name="")))
    name_at = big_string.index(b"\x00", 1)  # the empty name's length byte follows the id's varint
    yield "v1, resolved to v2", _framed(1, _avro(V1, _value())), []
    yield "v2", _framed(2, v2), []
    yield "null", None, []
    yield "empty", b"", []
    yield "magic 7", b"\x07" + v2, []
    yield "id cut", b"\x00\x00\x00", []
    yield "unknown id", _framed(99, v2), []
    yield "protobuf id", _framed(3, v2), []
    yield "missing reference", _framed(4, v2), []
    yield "unparsable schema", _framed(5, v2), []
    yield "unresolvable writer", _framed(6, _avro(OTHER, {"id": "s"})), []
    yield "truncated", _framed(2, v2[:len(v2) // 2]), []
    yield "trailing bytes", _framed(2, v2 + b"\x00\x00"), []
    wide = json.loads(json.dumps(V2).replace('"precision": 6', '"precision": 20'))  # the same bytes, more digits
    yield "decimal past its precision", _framed(2, _avro(wide, _value(price=decimal.Decimal("12345.67")))), []
    yield "not UTF-8", _framed(2, _avro(V2, _value(name="ab")).replace(b"\x04ab", b"\x04\xff\xfe", 1)), []
    yield "uuid in braces", _framed(2, _avro(V2, _value(uid="{0F8FAD5B-D9CB-469F-A165-70867728950E}"))), []
    yield "uuid bad", _framed(2, _avro(V2, _value(uid="not-a-uuid"))), []
    yield "date past 9999", _framed(2, _avro(V2, _value(day=3_000_000))), []
    yield "timestamp past 9999", _framed(2, _avro(V2, _value(at=253_402_300_800_000))), []
    yield "negative string length", _framed(2, bytes(big_string[:name_at]) + b"\x01"), []
    yield "string longer than the payload", _framed(2, bytes(big_string[:name_at]) + b"\xfe\xff\xff\xff\x0f"), []
    yield "guid", b"\x01" + uuid.UUID(guid).bytes + v2, []
    yield "header names it", v2, [("__value_schema_id", _framed(2, b""))]
    older = dict(_value(id=5, name=b"old", tags=[b"p", b"q"], kind="A", ratio=3),
                 dropped=[{"g": "s", "h": {"f": 1.5}}, {"g": 9, "h": {}}, {"g": None, "h": {}}])
    yield "older writer, resolved", _framed(7, _avro(V0, older)), []
    yield "enum symbol the reader lacks", _framed(7, _avro(V0, dict(older, kind="D"))), []
    yield "null in the union", _framed(2, _avro(V2, _value(inner=None))), []
    yield "empty arrays and maps", _framed(2, _avro(V2, _value(tags=[], counts={}))), []


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("typed")
    with PartitionWriter(root / "_schemas-0") as w:
        w.append(list(_registry_records()))
    payloads = list(_payloads())
    with PartitionWriter(root / "events-0") as w:
        w.append([{"key": what.encode(), "value": value, "headers": headers, "timestamp": 1_700_000_000_000}
                  for what, value, headers in payloads])
    return root, [p[0] for p in payloads]


def _rows(spark, root, reader, **options):
    frame = read(spark, root, reader=reader, subscribe="events", valueFormat="avro", **options)
    assert reader_of(frame) == reader
    return frame.orderBy("offset").collect()


@pytest.mark.parametrize("headers", [False, True])
def test_the_jvm_reader_decodes_every_payload_as_the_python_source_does(spark, logs, headers):
    root, names = logs
    python, jvm = (_rows(spark, root, r, includeHeaders=headers) for r in ("python", "jvm"))
    assert len(python) == len(jvm) == len(names)
    for name, p, j in zip(names, python, jvm):
        assert (p.valueDecoded, p.valueSchemaId) == (j.valueDecoded, j.valueSchemaId), name
        assert (p.valueError or "").split(":")[0] == (j.valueError or "").split(":")[0], (name, p.valueError, j.valueError)
    said = {name: (p.valueError or "").split(":")[0] for name, p in zip(names, python)}
    assert said["v1, resolved to v2"] == said["v2"] == said["null"] == said["guid"] == ""
    assert said["header names it"] == ""  # the payload is bare: the header is read, shown or not
    assert (said["empty"], said["id cut"], said["unknown id"], said["missing reference"], said["truncated"]) == \
        ("not-framed", "truncated", "unknown-schema", "bad-schema", "truncated")
    decoded = {name: p.valueDecoded for name, p in zip(names, python)}
    assert decoded["v1, resolved to v2"].extra == "x" and decoded["v2"].extra == "y"
    older = decoded["older writer, resolved"].asDict(recursive=True)
    assert (older["id"], older["name"], older["tags"], older["kind"], older["ratio"], older["extra"]) == \
        (5, "old", ["p", "q"], "A", 3.0, "x")
    assert said["enum symbol the reader lacks"] == "mismatch"
    assert decoded["uuid in braces"].uid == "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert decoded["v2"].asDict(recursive=True)["inner"] == {"x": 3, "flags": {"f": True}}


def test_what_does_not_decode_leaves_the_rows_around_it_whole(spark, logs):
    """A value that fails half way is taken back out of the struct's vectors: the next row's fields
    are its own."""
    root, names = logs
    rows = _rows(spark, root, "jvm")
    good = rows[names.index("v2")].valueDecoded
    after_damage = rows[names.index("uuid in braces")].valueDecoded  # follows several half-read values
    assert after_damage.asDict(recursive=True) == dict(good.asDict(recursive=True), uid=good.uid)


@pytest.mark.parametrize("reader", ["python", "jvm"])
def test_only_the_error_column_still_decodes_every_value(spark, logs, reader):
    root, names = logs
    frame = read(spark, root, schema="offset bigint, valueError string", reader=reader, subscribe="events",
                 valueFormat="avro")
    assert reader_of(frame) == reader and frame.columns == ["offset", "valueError"]
    errors = [r.valueError for r in frame.orderBy("offset").collect()]
    full = [r.valueError for r in _rows(spark, root, reader)]
    assert errors == full and sum(e is not None for e in errors) > 10


@pytest.mark.parametrize("reader", ["python", "jvm"])
def test_items_that_take_no_bytes_are_bounded(spark, tmp_path, logs, reader):
    """Ten bytes that declare 10^8 nulls are that value's error, read in no time and no memory; the
    same array at the bound reads."""
    root, _ = logs
    import shutil
    shutil.copytree(root / "_schemas-0", tmp_path / "_schemas-0")
    def zigzag(n):
        n, out = n << 1, bytearray()
        while n > 0x7F:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        return bytes(out + bytes([n]))
    with PartitionWriter(tmp_path / "events-0") as w:
        w.append([{"key": None, "value": _framed(8, zigzag(n) + b"\x00"), "timestamp": 1}
                  for n in (10 ** 8, 1 << 20)])
    rows = read(spark, tmp_path, reader=reader, subscribe="events", valueFormat="avro",
                valueSubject="nothing-value").orderBy("offset").collect()
    assert rows[0].valueDecoded is None and rows[0].valueError.startswith("mismatch:")
    assert rows[1].valueError is None and len(rows[1].valueDecoded.xs) == 1 << 20


def test_a_column_spark_has_no_type_for_stays_with_the_python_source(spark, logs, caplog):
    from kafkacodec.pipeline.jvm import JvmReaderUnavailable

    root, _ = logs
    options = {"subscribe": "events", "valueFormat": "avro", "valueSubject": "mixed-value"}
    with pytest.raises(JvmReaderUnavailable, match="no Spark type"):
        read(spark, root, reader="jvm", **options)
    with caplog.at_level("WARNING", logger="kafkacodec.pipeline"):
        frame = read(spark, root, **options)
    assert reader_of(frame) == "python" and "no Spark type" in caplog.text


DEFAULTS = {"type": "record", "name": "D", "fields": [
    {"name": "a", "type": "int"},
    {"name": "b", "type": "bytes", "default": "\u00ff\u0001"},
    {"name": "f", "type": {"type": "fixed", "name": "Two", "size": 2}, "default": "\u00ff\u0002"},
    {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}, "default": "\u0001"},
    {"name": "t", "type": {"type": "long", "logicalType": "timestamp-millis"}, "default": 1},
    {"name": "lt", "type": {"type": "long", "logicalType": "local-timestamp-micros"}, "default": 5},
    {"name": "n", "type": {"type": "record", "name": "Nd", "fields": [{"name": "x", "type": "int", "default": 5}]},
     "default": {}},
    {"name": "ns", "type": {"type": "array", "items": "Nd"}, "default": [{"x": 1}, {}]},
    {"name": "m", "type": {"type": "map", "values": "long"}, "default": {"k": 2}},
    {"name": "u", "type": ["null", "string"], "default": None},
    {"name": "e", "type": {"type": "enum", "name": "Ed", "symbols": ["P", "Q"]}, "default": "Q"}]}


@pytest.mark.parametrize("reader", ["python", "jvm"])
def test_defaults_are_read_as_avros_specification_reads_them(spark, tmp_path, reader):
    """A writer with one field, resolved to a reader that adds one of every kind: bytes defaults are
    code points 0-255, logical types apply, a record's missing fields take their own defaults."""
    import datetime

    writer = {"type": "record", "name": "D", "fields": [{"name": "a", "type": "int"}]}
    with PartitionWriter(tmp_path / "_schemas-0") as w:
        w.append([_schema_record("d-value", 1, 1, writer), _schema_record("d-value", 2, 2, DEFAULTS)])
    with PartitionWriter(tmp_path / "d-0") as w:
        w.append([{"key": None, "value": _framed(1, _avro(writer, {"a": 3}) + tail), "timestamp": 1}
                  for tail in (b"", b"\x02\x02")])  # the second with bytes left over
    rows = read(spark, tmp_path, reader=reader, subscribe="d", valueFormat="avro").orderBy("offset").collect()
    got = rows[0].valueDecoded.asDict(recursive=True)
    assert got == {"a": 3, "b": b"\xff\x01", "f": b"\xff\x02", "d": decimal.Decimal("0.01"),
                   "t": datetime.datetime(1970, 1, 1, 0, 0, 0, 1000), "lt": datetime.datetime(1970, 1, 1, 0, 0, 0, 5),
                   "n": {"x": 5}, "ns": [{"x": 1}, {"x": 5}], "m": {"k": 2}, "u": None, "e": "Q"}
    assert rows[1].valueDecoded is None and rows[1].valueError.startswith("mismatch:")


def _schema_record(subject, version, schema_id, schema, **more):
    """A SCHEMA record as the registry writes it (`more`: schemaType, references)."""
    key = {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
    value = {"subject": subject, "version": version, "id": schema_id, "deleted": False,
             "schema": schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":")), **more}
    return {"key": json.dumps(key).encode(), "value": json.dumps(value).encode(), "timestamp": 1}


def _log(root, schemas, values, topic="t"):
    with PartitionWriter(root / "_schemas-0") as w:
        w.append([_schema_record(f"{topic}-value", version, version, schema)
                  for version, schema in enumerate(schemas, start=1)])
    with PartitionWriter(root / f"{topic}-0") as w:
        w.append([{"key": None, "value": v, "timestamp": 1} for v in values])
    return root


def test_a_value_that_decodes_past_what_a_value_may_take_is_an_error(spark, tmp_path):
    """Five bytes declare 2^20 empty records, and the reader's default copies a thousand bytes into
    each: the JVM reader stops at 64 MiB and says so; the next value reads."""
    empty = {"type": "record", "name": "E", "fields": []}
    writer = {"type": "record", "name": "T", "fields": [{"name": "xs", "type": {"type": "array", "items": empty}}]}
    padded = {"type": "record", "name": "E", "fields": [{"name": "pad", "type": "string", "default": "x" * 1000}]}
    reader = {"type": "record", "name": "T", "fields": [{"name": "xs", "type": {"type": "array", "items": padded}}]}
    root = _log(tmp_path, [writer, reader], [_framed(1, b"\x80\x80\x80\x01\x00"), _framed(1, b"\x04\x00")])
    rows = read(spark, root, reader="jvm", subscribe="t", valueFormat="avro").orderBy("offset").collect()
    assert rows[0].valueDecoded is None and "decodes to more than" in rows[0].valueError
    assert [x.pad for x in rows[1].valueDecoded.xs] == ["x" * 1000] * 2


def test_a_writers_type_arrow_refuses_is_that_records_error_in_the_python_source(spark, tmp_path):
    """Resolutions fastavro leaves as the writer's type (bytes read as a decimal stay bytes): the
    record says so, and the batch's other records are read."""
    writer = {"type": "record", "name": "T", "fields": [{"name": "d", "type": "bytes"}]}
    reader = {"type": "record", "name": "T", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}}]}
    root = _log(tmp_path, [writer, reader], [_framed(1, b"\x02\x01"), _framed(2, b"\x02\x01")])
    rows = read(spark, root, reader="python", subscribe="t", valueFormat="avro").orderBy("offset").collect()
    assert rows[0].valueError.startswith("mismatch:") and rows[1].valueDecoded.d == decimal.Decimal("0.01")
