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


@pytest.fixture(scope="module")
def G(tmp_path_factory):
    out = tmp_path_factory.mktemp("drafted")
    (out / "spec").mkdir()
    (out / "spec" / "GadgetRecord.json").write_text("// a comment, as Kafka's specs have\n" + json.dumps(SPEC))
    schemas = out / "schemas"
    schemas.mkdir()
    for needed in ("kafka_types", "uvarint"):
        shutil.copy(ROOT / "schemas" / f"{needed}.ksy", schemas)
    run = subprocess.run([sys.executable, "-m", "kafkacodec.generator.kafka_spec", str(schemas / "gadgets.ksy"),
                          "--id", "gadgets", "--title", "Gadgets", "--doc-ref", "https://example.invalid/",
                          str(out / "spec" / "GadgetRecord.json")], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    drafted = yaml.safe_load((schemas / "gadgets.ksy").read_text())
    outputs = compile_dir(schemas)
    for name in ("gadgets", "kafka_types"):
        (out / f"{name}.py").write_text(outputs[f"{name}.py"])
    return load_module(out / "gadgets.py", "gadgets_drafted").Gadgets, drafted


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
