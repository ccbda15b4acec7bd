"""Input built to break the value decoders: each record that cannot be decoded is reported, with
no traceback and no crash, and the records around it are still printed; damage in the schemas
themselves makes the exit status 1."""
import json
import shutil
import struct

import pytest
from click.testing import CliRunner

from kafkacodec.cli import main
from kafkacodec.storage.change.writer import PartitionWriter

T = 1_700_000_000_000


def schema_record(subject, version, schema_id, text, kind=None):
    key = {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
    value = {"subject": subject, "version": version, "id": schema_id, "schema": text, "deleted": False}
    if kind:
        value["schemaType"] = kind
    return {"key": json.dumps(key).encode(), "value": json.dumps(value).encode(), "timestamp": T}


def framed(schema_id, payload, indexes=b""):
    return b"\x00" + struct.pack(">i", schema_id) + indexes + payload


def log_dir(root, schemas, values, topic="t"):
    with PartitionWriter(root / "_schemas-0") as w:
        for record in schemas:
            w.append([record])
    with PartitionWriter(root / f"{topic}-0") as w:
        w.append([{"key": b"k%d" % i, "value": v, "timestamp": T} for i, v in enumerate(values)])
    return root


def cat(*args):
    run = CliRunner().invoke(main, ["cat", *map(str, args)])
    assert run.exception is None or isinstance(run.exception, SystemExit), run.exception
    return run, [json.loads(line) for line in run.stdout.splitlines()]


LIST = json.dumps({"type": "record", "name": "L", "fields": [{"name": "next", "type": ["null", "L"]}]})


def test_a_value_nested_deep_in_a_recursive_avro_schema_is_an_error_not_a_crash(tmp_path):
    root = log_dir(tmp_path, [schema_record("t-value", 1, 3, LIST)],
                   [framed(3, b"\x02" * 5000 + b"\x00"), framed(3, b"\x02" * 3 + b"\x00"), framed(3, b"\x00")])
    run, lines = cat(root, "--value-format", "registry")
    assert run.exit_code == 1
    assert [line.get("valueError", {}).get("kind") for line in lines] == ["mismatch", None, None]
    assert lines[1]["value"] == {"next": {"next": {"next": {"next": None}}}}


@pytest.mark.parametrize("value", [b"[" * 100_000, b"[" * 300 + b"]" * 300])
def test_json_nested_deeper_than_is_read_is_an_error(tmp_path, value):
    root = log_dir(tmp_path, [], [value, b'{"a": 1}'])
    run, lines = cat(root, "--value-format", "json")
    assert run.exit_code == 1 and lines[0]["valueError"]["kind"] in ("not-text", "mismatch")
    assert lines[1]["value"] == {"a": 1}


def test_a_protobuf_message_without_a_json_form_is_an_error(tmp_path):
    proto = ('syntax = "proto3";\nimport "google/protobuf/any.proto";\nimport "google/protobuf/timestamp.proto";\n'
             'message M { google.protobuf.Any a = 1; google.protobuf.Timestamp t = 2; }\n')
    any_unknown = b"\x0a\x22\x0a\x20type.googleapis.com/nope.Nope12345"[:36]
    far_time = b"\x12\x08\x08" + bytes([0xFF] * 6 + [0x01])  # seconds far past what RFC 3339 holds
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, proto, "PROTOBUF")],
                   [framed(1, any_unknown, b"\x00"), framed(1, far_time, b"\x00"), framed(1, b"", b"\x00")])
    run, lines = cat(root, "--value-format", "protobuf")
    kinds = [line.get("valueError", {}).get("kind") for line in lines]
    assert kinds[:2] == ["mismatch", "mismatch"] and kinds[2] is None and run.exit_code == 1


@pytest.mark.parametrize("key,value", [
    (b'{"keytype":["SCHEMA"],"magic":0}', b"{}"),
    (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}', b'{"id":1,"schema":"\\"int\\"","references":5}'),
    (b"[" * 100_000, b"{}"),
])
def test_a_schemas_record_the_registry_does_not_write_is_damage_said_and_the_rest_read(tmp_path, key, value):
    good = schema_record("t-value", 1, 2, '"string"')
    root = log_dir(tmp_path, [{"key": key, "value": value, "timestamp": T}, good], [framed(2, b"\x04hi")])
    run, lines = cat(root, "--value-format", "registry")
    assert run.exit_code == 1 and lines[0]["value"] == "hi"
    assert "is passed over" in run.stderr and "damaged ranges not read: 1" in run.stderr


def test_a_damaged_schemas_partition_makes_the_exit_status_1(tmp_path, sample):
    shutil.copytree(sample, tmp_path / "logs")
    log = tmp_path / "logs" / "_schemas-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[300] ^= 0xFF
    log.write_bytes(bytes(data))
    run, lines = cat(tmp_path / "logs", "--topic", "shop.orders")
    assert run.exit_code == 1 and len(lines) == 12 and "error: the schemas:" in run.stderr


def test_a_time_index_that_does_not_read_falls_back_to_the_log(tmp_path, sample):
    shutil.copytree(sample, tmp_path / "logs")
    (tmp_path / "logs" / "shop.orders-0" / "00000000000000000000.timeindex").write_bytes(b"\x01" * 7)
    run, lines = cat(tmp_path / "logs", "--topic", "shop.orders", "--from", "@2020-09-13T12:32:00Z")
    assert run.exit_code == 0 and [line["offset"] for line in lines] == [10, 11]
    assert "found by reading the log" in run.stderr


def test_a_schema_that_does_not_compile_is_reported_for_each_record_and_compiled_once(tmp_path, monkeypatch):
    from kafkacodec.codec.values import protobuf

    calls = []
    real = protobuf.compile_files
    monkeypatch.setattr(protobuf, "compile_files", lambda *a: calls.append(1) or real(*a))
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, "syntax = \"proto3\"; message {", "PROTOBUF")],
                   [framed(1, b"", b"\x00")] * 5)
    run, lines = cat(root, "--value-format", "registry")
    assert run.exit_code == 1 and [line["valueError"]["kind"] for line in lines] == ["bad-schema"] * 5
    assert len(calls) == 1


@pytest.mark.parametrize("fmt", ["%o%%%", "ab%", "%o\\"])
def test_a_format_ending_inside_a_token_is_refused(sample, fmt):
    run = CliRunner().invoke(main, ["cat", str(sample), "-f", fmt])
    assert run.exit_code == 2 and "ends inside a token" in run.output


def test_a_pattern_that_backtracks_without_end_is_stopped_and_said(tmp_path):
    """(a|aa)+$ against forty a's and a ! takes Python's re longer than anyone waits: the match is
    stopped, that value said not validated, and the values after it read."""
    schema = json.dumps({"type": "object", "properties": {"s": {"type": "string", "pattern": "(a|aa)+$"}}})
    values = [framed(1, json.dumps({"s": "a" * 40 + "!"}).encode()), framed(1, b'{"s": "aaa"}'),
              framed(1, b'{"s": "b"}')]
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, schema, "JSON")], values)
    run, lines = cat(root, "--value-format", "json-schema", "--validate")
    errors = [line.get("valueError") for line in lines]
    assert errors[0]["kind"] == "invalid" and "not validated" in errors[0]["message"]
    assert errors[1] is None and lines[1]["value"] == {"s": "aaa"}
    assert errors[2]["kind"] == "invalid" and "does not match" in errors[2]["message"] and run.exit_code == 1


def test_protobuf_fields_the_schema_does_not_define_are_said_left_out(tmp_path):
    proto = 'syntax = "proto3";\nmessage M { int32 a = 1; N n = 2; }\nmessage N { string s = 1; }\n'
    newer = b"\x08\x05" + b"\x38\x01" + b"\x12\x05\x0a\x01x\x10\x02"  # field 7, and field 2 inside n
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, proto, "PROTOBUF")],
                   [framed(1, newer, b"\x00"), framed(1, b"\x08\x06", b"\x00")])
    run, lines = cat(root, "--value-format", "protobuf")
    assert [line["value"] for line in lines] == [{"a": 5, "n": {"s": "x"}}, {"a": 6}]
    assert "4 bytes of fields M of schema 1 does not define" in lines[0]["valueNote"]
    assert "valueNote" not in lines[1]
    assert run.exit_code == 0 and "1 Protobuf keys or values hold fields their schema does not define" in run.stderr


def test_a_proto2_string_that_is_not_utf8_is_an_error_naming_the_field(tmp_path):
    proto = ('syntax = "proto2";\nmessage M { optional string s = 1; repeated N ns = 2; map<string, string> m = 3; }\n'
             'message N { repeated string t = 1; }\n')
    bad = b"\x02\xff\xfe"
    values = [b"\x0a" + bad, b"\x12\x07\x0a\x01a\x0a" + bad, b"\x1a\x07\x0a\x01k\x12" + bad,
              b"\x0a\x02ok"]
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, proto, "PROTOBUF")], [framed(1, v, b"\x00") for v in values])
    run, lines = cat(root, "--value-format", "protobuf")
    said = [line.get("valueError", {}).get("message", "") for line in lines]
    assert "the string s of M" in said[0] and "the string ns[0].t[1] of M" in said[1]
    assert "the string m['k'] of M" in said[2] and lines[3]["value"] == {"s": "ok", "ns": [], "m": {}}
    assert run.exit_code == 1


def test_ten_bytes_declaring_millions_of_nulls_are_refused_before_they_are_made(tmp_path):
    nothing = json.dumps({"type": "record", "name": "N", "fields": [
        {"name": "xs", "type": {"type": "array", "items": "null"}}, {"name": "n", "type": "int"}]})
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, nothing)],
                   [framed(1, b"\x80\xc2\xd7\x2f\x00\x02"), framed(1, b"\x06\x00\x02")])  # 5*10^7 nulls; 3
    run, lines = cat(root, "--value-format", "avro")
    assert lines[0]["valueError"]["kind"] == "mismatch" and "1048576 items" in lines[0]["valueError"]["message"]
    assert lines[1]["value"] == {"xs": [None] * 3, "n": 1} and run.exit_code == 1


def test_a_fixed_of_a_negative_size_is_a_bad_schema_not_a_backward_read(tmp_path):
    bad = json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "junk", "type": {"type": "array", "items": {"type": "fixed", "name": "F", "size": -1}}}]})
    root = log_dir(tmp_path, [schema_record("t-value", 1, 1, bad)], [framed(1, b"\x80\x80\x80\x80\x80\x80\x80\x80\x40\x00")])
    run, lines = cat(root, "--value-format", "avro")
    assert lines[0]["valueError"]["kind"] == "bad-schema" and "negative size" in lines[0]["valueError"]["message"]
