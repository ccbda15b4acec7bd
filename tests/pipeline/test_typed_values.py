"""Values as typed columns in kafka-log (valueFormat=avro): records serialized by confluent-kafka's
own Avro serializer (tests.support.value_corpus) read back through the log dir's `_schemas`
partition, each resolved to the subject's latest version: every field equal to what the
serializer was given, the schema id beside it, and what does not decode in the error column."""
import pytest

pytestmark = pytest.mark.spark

from kafkacodec.pipeline.reading import read  # noqa: E402
from tests.support import value_corpus  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    pytest.importorskip("confluent_kafka.schema_registry.avro")
    tmp = tmp_path_factory.mktemp("values")
    return value_corpus.build(tmp / "logs", tmp / "work")


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
    with pytest.raises(Exception, match="PROTOBUF schema, not Avro"):
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
