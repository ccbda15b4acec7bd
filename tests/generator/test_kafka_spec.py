"""The drafter of Kafka message schemas: one type per message, each field guarded by the versions
that have it, tags a version does not define left raw (where Kafka's reader refuses them). A
made-up message spec (in Kafka's JSON form) is drafted, compiled and read at each version."""
import json
import shutil
import subprocess
import sys

import pytest
import yaml

from tests.support import ROOT
from tests.generator.test_generator import load_module
from kafkacodec.generator.compile import compile_dir

SPEC = {  # a framed record in Kafka's spec form; none of Kafka's has this shape
    "apiKey": 7, "type": "metadata", "name": "GadgetRecord", "validVersions": "0-2", "flexibleVersions": "0+",
    "fields": [
        {"name": "Id", "type": "int32", "versions": "0+"},
        {"name": "Label", "type": "string", "versions": "1+", "nullableVersions": "1+"},
        {"name": "Parts", "type": "[]Part", "versions": "0+", "fields": [
            {"name": "Weight", "type": "int16", "versions": "0+"},
            {"name": "Colour", "type": "int8", "versions": "2+"}]},
        {"name": "Spare", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0},
        {"name": "Late", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 1}]}


def draft(out, spec: dict, schema_id: str):
    """Draft `spec` (written as Kafka writes its specs, a comment first) into a schema, compile it
    and load its module: (the module's root class, the drafted schema)."""
    (out / f"{spec['name']}.json").write_text("// a comment, as Kafka's specs have\n" + json.dumps(spec))
    schemas = out / "schemas"
    schemas.mkdir()
    for needed in ("kafka_types", "uvarint"):
        shutil.copy(ROOT / "schemas" / f"{needed}.ksy", schemas)
    run = subprocess.run([sys.executable, "-m", "kafkacodec.generator.kafka_spec", str(schemas / f"{schema_id}.ksy"),
                          "--id", schema_id, "--title", schema_id.title(), "--doc-ref", "https://example.invalid/",
                          str(out / f"{spec['name']}.json")], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    (out / f"{schema_id}.py").write_text(compile_dir(schemas)[f"{schema_id}.py"])
    module = load_module(out / f"{schema_id}.py", f"{schema_id}_drafted")  # imports the installed kafka_types
    return getattr(module, schema_id.title()), yaml.safe_load((schemas / f"{schema_id}.ksy").read_text())


@pytest.fixture(scope="module")
def G(tmp_path_factory):
    return draft(tmp_path_factory.mktemp("drafted"), SPEC, "gadgets")


def test_one_type_per_message_with_version_conditions(G):
    _, drafted = G
    types = drafted["types"]
    assert set(types) == {"gadget_record", "part", "gadget_record_tag", "gadget_record_tags"}
    record = types["gadget_record"]
    assert record["params"][0]["id"] == "version"
    conditions = {f["id"]: f.get("if") for f in record["seq"]}
    assert conditions["label"] == "version >= 1" and conditions["id"] is None
    assert next(f for f in record["seq"] if f["id"] == "parts")["type"] == "part(version)"
    assert {f["id"]: f.get("if") for f in types["part"]["seq"]}["colour"] == "version >= 2"
    cases = drafted["seq"][3]["type"]["cases"]
    assert cases == {7000: "gadget_record(version.value)", 7001: "gadget_record(version.value)",
                     7002: "gadget_record(version.value)"}


def frame(version: int, body: bytes) -> bytes:
    return bytes([1, 7, version]) + body


def body(version: int, tags: list[tuple[int, bytes]]) -> bytes:
    out = (5).to_bytes(4, "big")
    if version >= 1:
        out += b"\x03ab"  # "ab" as a compact nullable string
    out += b"\x02" + (9).to_bytes(2, "big") + (b"\x04" if version >= 2 else b"") + b"\x00"  # one part, no tags
    out += bytes([len(tags)]) + b"".join(bytes([t, len(d)]) + d for t, d in tags)
    return out


@pytest.mark.parametrize("version", [0, 1, 2])
def test_each_version_reads_and_writes_back(G, version):
    Gadgets, _ = G
    tags = [(0, (3).to_bytes(4, "big")), (1, (4).to_bytes(4, "big"))]
    data = frame(version, body(version, tags))
    record = Gadgets.from_bytes(data)
    b = record.body
    assert (b.version, b.id, b.label.value if b.label else None) == (version, 5, "ab" if version else None)
    assert [(p.weight, p.colour) for p in b.parts] == [(9, 4 if version >= 2 else None)]
    decoded = {f.tag: f.data for f in b.tagged_fields.fields}
    assert decoded[0].value == 3
    # tag 1 is defined from version 2: before that it stays raw (Kafka's reader would refuse it)
    assert decoded[1] == (4).to_bytes(4, "big") if version < 2 else decoded[1].value == 4
    assert record.to_bytes() == data and record.size() == len(data)


def test_a_version_the_spec_does_not_have_stays_raw(G):
    Gadgets, _ = G
    assert Gadgets.from_bytes(frame(3, b"\x00\x01")).body == b"\x00\x01"


# a message whose early versions are not flexible: strings, arrays and the tagged section change
# encoding with the version, as in __consumer_offsets and __transaction_state (made up as well)
MIXED = {
    "apiKey": 8, "type": "metadata", "name": "WidgetRecord", "validVersions": "0-2", "flexibleVersions": "2+",
    "fields": [
        {"name": "Id", "type": "int32", "versions": "0+"},
        {"name": "Spare", "type": "int64", "taggedVersions": "2+", "tag": 0, "default": -1},
        {"name": "Name", "type": "string", "versions": "0+"},
        {"name": "Parts", "type": "[]Part", "versions": "0+", "nullableVersions": "0+", "fields": [
            {"name": "Weight", "type": "int16", "versions": "0+"}]},
        {"name": "Mark", "type": "int16", "taggedVersions": "2+", "tag": 1}]}


@pytest.fixture(scope="module")
def W(tmp_path_factory):
    from kafkacodec.generated.kafka_types import KafkaTypes  # what the drafted module imports
    Widgets, drafted = draft(tmp_path_factory.mktemp("mixed"), MIXED, "widgets")
    return Widgets, KafkaTypes, drafted


def widget(version: int, parts: list[int] | None, tags: list[tuple[int, bytes]]) -> bytes:
    """WidgetRecord's body as Kafka's generated writer lays it out at `version`."""
    flexible = version >= 2
    out = (5).to_bytes(4, "big")
    out += (b"\x04" if flexible else b"\x00\x03") + b"abc"
    if parts is None:
        out += b"\x00" if flexible else b"\xff\xff\xff\xff"
    else:
        out += bytes([len(parts) + 1]) if flexible else len(parts).to_bytes(4, "big")
        out += b"".join(w.to_bytes(2, "big") + (b"\x00" if flexible else b"") for w in parts)
    if flexible:
        out += bytes([len(tags)]) + b"".join(bytes([t, len(d)]) + d for t, d in tags)
    return out


def test_mixed_flexibility_is_one_type_whose_encodings_follow_the_version(W):
    _, _, drafted = W
    fields = {f["id"]: f for f in drafted["types"]["widget_record"]["seq"]}
    assert fields["name"]["type"]["switch-on"] == "version >= 2"
    assert (fields["parts_count"]["if"], fields["parts_count_plus_one"]["if"]) == ("version < 2", "version >= 2")
    assert fields["tagged_fields"]["if"] == "version >= 2"
    assert fields["tagged_fields"]["-tagged"] == [
        {"id": "spare", "tag": 0, "default": -1, "after": "id", "if": "version >= 2"},
        {"id": "mark", "tag": 1, "default": 0, "after": "parts", "if": "version >= 2"}]


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("parts", [[9, 8], [], None])
def test_mixed_flexibility_reads_and_writes_each_version(W, version, parts):
    Widgets, _, _ = W
    tags = [(0, (77).to_bytes(8, "big"))] if version >= 2 else []
    data = bytes([1, 8, version]) + widget(version, parts, tags)
    record = Widgets.from_bytes(data)
    b = record.body
    assert (b.id, b.name.value, None if b.parts is None else [p.weight for p in b.parts]) == (5, "abc", parts)
    assert record.to_bytes() == data and record.size() == len(data)
    # the tagged fields by name: the value held, or Kafka's default where it is not
    assert (b.spare, b.mark) == ((77, 0) if version >= 2 else (-1, 0))
    assert Widgets.WidgetRecord._field_order == ("id", "spare", "name", "parts", "mark", "tagged_fields")


def test_mixed_flexibility_refuses_an_encoding_of_another_version(W):
    from kafkacodec.runtime.errors import EncodeError
    Widgets, K, _ = W
    body = Widgets.WidgetRecord(id=5, name=K.String(value="abc"), parts=[])
    assert Widgets.WidgetRecord.from_bytes(body.to_bytes(version=1), version=1).name.value == "abc"
    body.tagged_fields = Widgets.WidgetRecordTags(fields=[])
    with pytest.raises(EncodeError, match="is a KafkaTypes.String"):  # version 2 holds a compact string
        body.to_bytes(version=2)
    body.name = K.CompactString(value="abc")
    assert body.to_bytes(version=2) == widget(2, [], [])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_mixed_flexibility_builds_back_from_kafkas_json(W, version):
    """message_from_json picks each string's encoding by the version, as the reader does."""
    from kafkacodec.codec.kafka_json import message_from_json, message_json
    Widgets, _, _ = W
    tags = [(0, (77).to_bytes(8, "big"))] if version >= 2 else []
    data = bytes([1, 8, version]) + widget(version, [9, 8], tags)
    body = Widgets.from_bytes(data).body
    shown = message_json(body)
    assert ("spare" in shown) == (version >= 2)  # a tag at its default, or outside its versions, is not shown
    again = message_from_json(Widgets.WidgetRecord, shown, version=version)
    assert Widgets(frame_version=1, api_key=8, version=version, body=again).to_bytes() == data


def test_a_switch_that_selects_no_case_refuses_an_object(W):
    from kafkacodec.runtime.errors import EncodeError
    Widgets, _, _ = W
    body = Widgets.from_bytes(bytes([1, 8, 2]) + widget(2, [], [])).body
    with pytest.raises(EncodeError, match="selects no case"):  # version 9: read back, the body would stay raw
        Widgets(frame_version=1, api_key=8, version=9, body=body).to_bytes()
