"""Records serialized by confluent-kafka's Avro, Protobuf and JSON Schema serializers, stored
by librdkafka, read back through the log dir's own `_schemas` partition (tests.support.value_corpus):
every key and value decodes to what the serializer was given, by the API and by `cat`."""
import json

import pytest
from click.testing import CliRunner

from kafkacodec.cli import main
from kafkacodec.codec.values.decoding import ValueDecoder
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.schemas import open_schema_source
from kafkacodec.storage.segments.reader import partition_records
from tests.support import value_corpus


corpus = pytest.fixture(scope="module", name="corpus")(value_corpus.corpus_fixture)


def records(corpus, topic):
    part = next(p for p in logdir.at_path(corpus.root).partitions if p.topic == topic)
    return [r for _, r in partition_records(part)]


def proto_json(message):
    from google.protobuf import json_format

    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True,
                                     preserving_proto_field_name=True, unquote_int64_if_possible=True)


def cat(*args):
    result = CliRunner().invoke(main, ["cat", *map(str, args)])
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result, lines


def test_the_schemas_partition_is_read_as_the_registry_reads_it(corpus):
    source = open_schema_source(None, corpus.root)
    registry = source.registry
    assert source.passed_over == []
    assert registry.latest("orders-value").version == 2 and registry.latest("orders-value").text == value_corpus.ORDER_V2
    assert registry.version("retired-value", 1).deleted and registry.latest("retired-value") is None
    assert registry.version("gone-value", 1) is None  # permanently deleted: its id is gone too
    assert registry.version("payments-value", 1).references[0].name == "shop/money.proto"


@pytest.mark.parametrize("topic", ["orders", "events", "retired"])
def test_avro_and_json_schema_values_decode_to_what_the_serializer_was_given(corpus, topic):
    decoder = ValueDecoder("registry", open_schema_source(None, corpus.root).registry, validate=True)
    found = [decoder.decode(r.value, r.headers) for r in records(corpus, topic)]
    for decoded, given in zip(found, corpus.given[topic]):
        if given is None:  # the permanently deleted subject's record
            assert decoded.problem.kind == "unknown-schema" and decoded.problem.schema_id is not None
        else:
            assert decoded.problem is None and decoded.value == given
    assert len(found) == len(corpus.given[topic])


def test_protobuf_values_decode_to_what_the_serializer_was_given(corpus):
    decoder = ValueDecoder("protobuf", open_schema_source(None, corpus.root).registry)
    found = [decoder.decode(r.value) for r in records(corpus, "payments")]
    assert [d.value for d in found] == [proto_json(m) for m in corpus.given["payments"]]
    assert found[-1].value == {"payment_id": "p1", "full": True}  # the second message type: indexes [1]


def test_an_avro_reader_schema_resolves_old_records(corpus):
    decoder = ValueDecoder("avro", open_schema_source(None, corpus.root).registry,
                           avro_reader_schema=value_corpus.ORDER_V2)
    values = [decoder.decode(r.value).value for r in records(corpus, "orders")]
    assert [v["channel"] for v in values] == ["web"] * 3 + ["shop"] * 2
    assert [v["id"] for v in values] == [g["id"] for g in corpus.given["orders"]]


def test_cat_prints_every_record_decoded(corpus):
    result, lines = cat(corpus.root, "--value-format", "registry", "--topic", "orders|payments|events")
    assert result.exit_code == 0, result.output
    by_topic = {}
    for line in lines:
        by_topic.setdefault(line["topic"], []).append(line)
    assert [line["value"]["customer"] for line in by_topic["orders"]] == [g["customer"] for g in corpus.given["orders"]]
    assert [line["value"]["amount"] for line in by_topic["orders"]] == [str(g["amount"]) for g in corpus.given["orders"]]
    assert [line["value"] for line in by_topic["payments"]] == [proto_json(m) for m in corpus.given["payments"]]
    assert [line["value"] for line in by_topic["events"]] == corpus.given["events"]
    assert all(line["key"] == f"k{line['offset']}" and line["keyFormat"] == "string" for line in lines)
    assert {line["valueFormat"] for line in lines} == {"avro", "protobuf", "json-schema"}
    assert all(line["headers"] == [{"key": "origin", "value": "corpus"}] for line in lines)


def test_cat_reports_and_counts_what_does_not_decode_and_prints_the_rest(corpus):
    result, lines = cat(corpus.root, "--topic", "retired", "--value-format", "registry")
    assert result.exit_code == 1
    assert [line["offset"] for line in lines] == [0, 1]
    assert lines[0]["value"] == {"n": 1} and lines[1]["valueError"]["kind"] == "unknown-schema"
    raw = records(corpus, "retired")[1].value
    assert lines[1]["valueFormat"] == "base64" and lines[1]["value"] == __import__("base64").b64encode(raw).decode()
    assert "retired-0/00000000000000000000.log: batch at byte" in result.stderr and "offset 1: value:" in result.stderr
    assert "not decoded: 1 values, 0 keys" in result.stderr


def test_cat_auto_notes_a_framed_looking_value_it_cannot_read(corpus):
    result, lines = cat(corpus.root, "--topic", "retired")
    assert result.exit_code == 0
    assert "valueNote" in lines[1] and "id 8" not in lines[0].get("valueNote", "")
    assert "start as schema registry payloads do" in result.stderr


def test_cat_format_strings_head_tail_and_ranges(corpus):
    run = CliRunner().invoke(main, ["cat", str(corpus.root), "--topic", "orders", "-f", r"%t:%p:%o:%k:%i:%S\n",
                                    "--from", "1", "--to", "3"])
    assert run.exit_code == 0, run.output
    sizes = [len(r.value) for r in records(corpus, "orders")]
    assert run.stdout.splitlines() == [f"orders:0:{o}:k{o}:{1 if o < 3 else 2}:{sizes[o]}" for o in (1, 2, 3)]
    assert [line["offset"] for line in cat(corpus.root, "--topic", "orders", "--tail", "2")[1]] == [3, 4]
    assert [line["offset"] for line in cat(corpus.root, "--topic", "orders", "--head", "2")[1]] == [0, 1]
    at = value_corpus.NOW + 2
    assert [line["offset"] for line in cat(corpus.root, "--topic", "orders", "--from", f"@{at}")[1]] == [2, 3, 4]
    bad = CliRunner().invoke(main, ["cat", str(corpus.root), "-f", "%z"])
    assert bad.exit_code == 2 and "%z is none of" in bad.output


def test_schemas_from_a_directory_of_registry_answers(corpus, tmp_path):
    """The REST answers saved as files stand for the partition."""
    registry = open_schema_source(None, corpus.root).registry
    for (subject, version), s in registry.versions.items():
        (tmp_path / f"{subject.replace('/', '_')}-{version}.json").write_text(json.dumps(
            {"subject": subject, "version": version, "id": s.id, "schemaType": s.schema_type, "schema": s.text,
             "references": [{"name": r.name, "subject": r.subject, "version": r.version} for r in s.references]}))
    (tmp_path / "notes.json").write_text("[1, 2]")
    (tmp_path / "x.avsc").write_text("\"string\"")
    result, lines = cat(corpus.root, "--schemas", tmp_path, "--value-format", "registry", "--topic", "payments|events")
    assert result.exit_code == 0, result.output
    assert [line["value"] for line in lines if line["topic"] == "payments"] == \
        [proto_json(m) for m in corpus.given["payments"]]
    assert "x.avsc is passed over" in result.stderr


def test_schemas_from_a_registry_address(corpus):
    from tests.support.peers.registry_stub import RegistryStub

    with RegistryStub() as stub:
        for k, v in corpus.records:  # the stub holds what the partition holds
            if v is not None and b'"SCHEMA"' in k:
                obj = json.loads(v)
                stub.store.versions[(obj["subject"], obj["version"])] = dict(obj, _md5="")
        result, lines = cat(corpus.root, "--schemas", stub.url, "--value-format", "registry", "--topic", "orders|events")
    assert result.exit_code == 0, result.output
    assert [line["value"] for line in lines if line["topic"] == "events"] == corpus.given["events"]


def test_damaged_payloads_are_each_reported_and_the_rest_decode(corpus, tmp_path):
    """Values cut short, with bytes after them, naming a missing id, or not of their schema:
    each reported with its kind and offset, each good one around them printed decoded."""
    import shutil

    from kafkacodec.storage.change.writer import PartitionWriter

    shutil.copytree(corpus.root / "_schemas-0", tmp_path / "_schemas-0")
    good = [r.value for r in records(corpus, "orders")] + [r.value for r in records(corpus, "payments")]
    event = records(corpus, "events")[0].value
    bad = {"truncated": good[0][:-2], "mismatch": good[1] + b"\x01", "unknown-schema": b"\x00\x00\x00\x03\xe7" + good[2][5:],
           "invalid": event.replace(b'"count":1', b'"count":"one"'), "not-text": event[:5] + b"\xff\xfe",
           "not-framed": b"plain text"}
    values = [v for pair in zip(good, list(bad.values()) + [None] * len(good)) for v in pair if v is not None]
    with PartitionWriter(tmp_path / "mixed-0") as w:
        w.append([{"key": None, "value": v, "timestamp": value_corpus.NOW} for v in values])
    result, lines = cat(tmp_path, "--topic", "mixed", "--value-format", "registry", "--validate")
    assert result.exit_code == 1
    assert len(lines) == len(values)
    kinds = [line.get("valueError", {}).get("kind") for line in lines]
    assert [k for k in kinds if k] == list(bad)
    assert sum(1 for k in kinds if k is None) == len(good)
    assert f"not decoded: {len(bad)} values" in result.stderr


def test_dump_json_gains_decoded_values(corpus):
    run = CliRunner().invoke(main, ["dump", "--json", "--value-format", "registry", str(corpus.root / "events-0")])
    assert run.exit_code == 0, run.output
    listed = [r for line in run.stdout.splitlines() for r in json.loads(line)["records"]]
    assert [r["valueDecoded"]["value"] for r in listed] == corpus.given["events"]
    assert {r["valueDecoded"]["format"] for r in listed} == {"json-schema"}
    retired = CliRunner().invoke(main, ["dump", "--json", "--value-format", "registry", str(corpus.root / "retired-0")])
    assert retired.exit_code == 1 and "offset 1: value: the schema source holds no schema of id" in retired.stderr
    text = CliRunner().invoke(main, ["dump", "--value-format", "avro", str(corpus.root / "retired-0")])
    assert text.exit_code == 2
