"""Values as typed columns in kafka-log (valueFormat=avro): records serialized by confluent-kafka's
own Avro serializer (tests.support.value_corpus) read back through the log dir's `_schemas`
partition, each resolved to the subject's latest version: every field equal to what the
serializer was given, the schema id beside it, and what does not decode in the error column."""
import pytest

pytestmark = pytest.mark.spark

from kafkacodec.pipeline.reading import read  # noqa: E402
from tests.support import value_corpus  # noqa: E402


corpus = pytest.fixture(scope="module", name="corpus")(value_corpus.corpus_fixture)


def test_avro_values_as_a_struct_of_the_subjects_latest_version(spark, corpus):
    frame = read(spark, corpus.root, subscribe="orders", valueFormat="avro")
    assert frame.schema["valueDecoded"].dataType.simpleString() == \
        "struct<id:bigint,customer:string,amount:decimal(9,2),note:string,channel:string>"
    rows = frame.orderBy("offset").collect()
    for row, given in zip(rows, corpus.given["orders"]):
        assert row.valueDecoded.asDict() == {"channel": "web", **given}  # v1 records gain v2's default
        assert row.valueError is None and row.value is not None
    assert [row.valueSchemaId for row in rows] == [1, 1, 1, 2, 2]
    assert len(rows) == len(corpus.given["orders"])


def test_what_does_not_decode_is_in_the_error_column(spark, corpus):
    frame = read(spark, corpus.root, subscribe="retired", valueFormat="avro", valueSubject="retired-value",
                 valueSchemaVersion="1")  # soft-deleted: no latest, but version 1 is still there
    rows = frame.orderBy("offset").collect()
    assert rows[0].valueDecoded.asDict() == {"n": 1} and rows[0].valueError is None
    assert rows[1].valueDecoded is None and rows[1].valueError.startswith("unknown-schema:")
    assert rows[1].valueSchemaId is not None and rows[1].value is not None  # the bytes stay


def test_options_that_name_no_one_subject_are_refused(spark, corpus):
    with pytest.raises(Exception, match="valueSubject"):
        read(spark, corpus.root, valueFormat="avro").schema
    with pytest.raises(Exception, match="no live version"):
        read(spark, corpus.root, subscribe="retired", valueFormat="avro").schema
    with pytest.raises(Exception, match="PROTOBUF schema, not AVRO"):
        read(spark, corpus.root, subscribe="payments", valueFormat="avro").schema


def test_export_writes_the_typed_columns_to_parquet_and_says_what_did_not_decode(spark, corpus, tmp_path):
    from kafkacodec.pipeline.export import export

    summary = export(spark, str(corpus.root), str(tmp_path / "orders"), mode="overwrite", reader="python",
                     options={"subscribe": "orders", "valueFormat": "avro"})
    written = spark.read.parquet(str(tmp_path / "orders")).orderBy("offset").collect()
    assert [r.valueDecoded.asDict() for r in written] == [{"channel": "web", **g} for g in corpus.given["orders"]]
    assert summary.undecoded == [] and [t[0] for t in summary.topics] == ["orders"]
    retired = export(spark, str(corpus.root), str(tmp_path / "retired"), mode="overwrite", reader="python",
                     options={"subscribe": "retired", "valueFormat": "avro", "valueSubject": "retired-value",
                              "valueSchemaVersion": "1"})
    assert [(offset, why.split(":")[1].strip()) for _, _, offset, why in retired.undecoded] == [(1, "unknown-schema")]


def test_protobuf_values_as_a_struct_of_the_first_message(spark, corpus):
    from google.protobuf import json_format

    frame = read(spark, corpus.root, subscribe="payments", valueFormat="protobuf")
    assert frame.schema["valueDecoded"].dataType.simpleString() == (
        "struct<id:string,amount:struct<currency:string,units:bigint>,tags:array<string>,at:timestamp,kind:string>")
    rows = frame.orderBy("offset").collect()
    payments = [m for m in corpus.given["payments"] if m.DESCRIPTOR.name == "Payment"]
    for row, message in zip(rows, payments):
        got = row.valueDecoded.asDict(recursive=True)
        assert got["id"] == message.id and got["tags"] == list(message.tags) and got["kind"] == \
            message.DESCRIPTOR.enum_types_by_name["Kind"].values_by_number[message.kind].name
        assert got["amount"] == {"currency": message.amount.currency, "units": message.amount.units}
        assert got["at"].timestamp() == message.at.seconds
    # the Refund record names message index [1]: not the column's type, and said so
    assert rows[-1].valueDecoded is None and "is a shop.Refund, not the column's shop.Payment" in rows[-1].valueError
    refunds = read(spark, corpus.root, subscribe="payments", valueFormat="protobuf",
                   valueMessage="shop.Refund").orderBy("offset").collect()
    assert refunds[-1].valueDecoded.asDict() == json_format.MessageToDict(
        corpus.given["payments"][-1], preserving_proto_field_name=True)
    assert len(rows) == len(corpus.given["payments"])


def test_json_schema_values_as_a_struct_of_their_schema_with_its_references(spark, corpus):
    frame = read(spark, corpus.root, subscribe="events", valueFormat="json-schema")
    assert frame.schema["valueDecoded"].dataType.simpleString() == \
        "struct<kind:string,count:bigint,where:struct<city:string,zip:string>>"
    rows = frame.orderBy("offset").collect()
    assert [r.valueDecoded.asDict(recursive=True) for r in rows] == \
        [{"where": None, **g} for g in corpus.given["events"]]
    assert all(r.valueError is None and r.valueSchemaId is not None for r in rows)
