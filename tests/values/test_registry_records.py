"""The registry's state rebuilt from `_schemas` records as the registry writes them (keys and
values spelled here as its KafkaStore serializes them: compact JSON, SCHEMA keys with magic 1),
including the forms older registries wrote."""
import json

import pytest

from kafkacodec.codec.values.registry import AVRO, PROTOBUF, RecordProblem, Registry


def key(keytype, **fields):
    return json.dumps({"keytype": keytype, **fields, "magic": 1 if keytype == "SCHEMA" else 0},
                      separators=(",", ":")).encode()


def schema(subject, version, schema_id, text="\"string\"", **more):
    return (key("SCHEMA", subject=subject, version=version),
            json.dumps({"subject": subject, "version": version, "id": schema_id, "schema": text, "deleted": False,
                        **more}, separators=(",", ":")).encode())


def replay(*records):
    registry = Registry()
    for k, v in records:
        registry.apply(k, v)
    return registry


def test_a_schema_without_a_type_is_avro_and_ids_are_shared_across_subjects():
    r = replay(schema("a-value", 1, 1), schema("b-value", 1, 1), schema("p", 1, 2, "syntax = \"proto3\";",
                                                                       schemaType="PROTOBUF"))
    assert r.by_id(1).schema_type == AVRO and r.by_id(2).schema_type == PROTOBUF
    assert {r.version("a-value", 1).id, r.version("b-value", 1).id} == {1}
    assert r.subjects() == ["a-value", "b-value", "p"]


def test_a_soft_deleted_version_keeps_its_id_readable_and_a_tombstone_removes_it():
    k, v = schema("s", 1, 7)
    deleted = json.dumps(dict(json.loads(v), deleted=True)).encode()
    r = replay((k, v), (k, deleted))
    assert r.by_id(7).deleted and r.latest("s") is None and r.subjects() == [] and r.subjects(deleted=True) == ["s"]
    r.apply(k, None)
    assert r.by_id(7) is None and len(r) == 0


def test_delete_subject_marks_the_versions_up_to_its_watermark():
    r = replay(schema("s", 1, 1), schema("s", 2, 2, "\"int\""),
               (key("DELETE_SUBJECT", subject="s"), b'{"subject":"s","version":1}'))
    assert r.version("s", 1).deleted and not r.version("s", 2).deleted and r.latest("s").version == 2
    assert r.by_id(1) is not None  # still readable


def test_clear_subject_forgets_only_soft_deleted_versions():
    k, v = schema("s", 1, 1)
    r = replay((k, v), (k, json.dumps(dict(json.loads(v), deleted=True)).encode()), schema("s", 2, 2, "\"int\""),
               schema("t", 1, 3, "\"long\""),
               (key("CLEAR_SUBJECT", subject="s"), b'{"subject":"s"}'))
    assert r.version("s", 1) is None and r.version("s", 2) is not None and r.by_id(1) is None


def test_ids_count_per_context():
    r = replay(schema("a", 1, 1), schema(":.staging:a", 1, 1, "\"int\""))
    assert r.by_id(1).subject == "a" and r.by_id(1, ".staging").text == "\"int\""
    assert r.contexts_of(1) == [".", ".staging"]
    only_there = replay(schema(":.staging:b", 1, 5))
    assert only_there.by_id(5).subject == ":.staging:b"  # the one context that has it


def test_records_that_hold_no_schema_are_read_and_passed_over():
    r = replay((key("CONFIG"), b'{"compatibilityLevel":"BACKWARD"}'),
               (b'{"keytype":"CONFIG","subject":null,"magic":0}', b'{"compatibilityLevel":"NONE"}'),  # before 2021
               (key("MODE", subject="s"), b'{"subject":"s","mode":"READONLY"}'),
               (key("NOOP"), None), (key("CONTEXT", tenant="default", context=".c"), b'{"tenant":"default","context":".c"}'),
               schema("s", 1, 1, offset=12, ts=1700000000000))  # a rollback's extra fields
    assert r.other_records == 5 and r.by_id(1) is not None


@pytest.mark.parametrize("k,v", [(b"not json", b"{}"), (None, b"{}"), (b'{"keytype":"SHRUG","magic":0}', b"{}"),
                                 (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}', b'{"id":1}'),
                                 (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}',
                                  b'{"id":1,"schema":"x","schemaType":"THRIFT"}'),
                                 (b'{"keytype":"SCHEMA","subject":"s","magic":1}', b'{"id":1,"schema":"x"}')])
def test_records_the_registry_does_not_write_are_refused_by_name(k, v):
    with pytest.raises(RecordProblem):
        Registry().apply(k, v)


def test_the_guid_is_the_md5_of_text_and_references():
    import hashlib
    import struct
    import uuid

    r = replay(schema("s", 1, 1, "\"string\"", references=[{"name": "n", "subject": "x", "version": 2}]))
    digest = hashlib.md5(b"\"string\"" + b"n" + b"x" + struct.pack(">i", 2)).digest()
    assert r.by_guid(str(uuid.UUID(bytes=digest))).id == 1


def test_the_guid_covers_the_rule_set_as_the_registry_hashes_it():
    """Each rule: name, doc, kind and mode (TRANSFORM and WRITEREAD when not given), type, tags and
    params sorted, expr, onSuccess, onFailure, then a 1 byte when disabled; a 1 byte first."""
    import hashlib
    import uuid

    rules = {"domainRules": [{"name": "r", "type": "CEL", "tags": ["b", "a"], "params": {"y": "2", "x": "1"},
                              "expr": "true", "disabled": True}],
             "migrationRules": [{"name": "m", "kind": "CONDITION", "mode": "UPGRADE", "type": "JSONATA"}]}
    r = replay(schema("s", 1, 1, ruleSet=rules))
    digest = hashlib.md5(b"\"string\"" + b"\x01" + b"m" + b"CONDITION" + b"UPGRADE" + b"JSONATA"
                         + b"r" + b"TRANSFORM" + b"WRITEREAD" + b"CEL" + b"ab" + b"x1y2" + b"true" + b"\x01").digest()
    assert r.by_guid(str(uuid.UUID(bytes=digest))).id == 1


def test_a_stored_md5_is_the_guid():
    import base64
    import uuid

    given = bytes(range(16))
    r = replay(schema("s", 1, 1, md5=base64.b64encode(given).decode()))
    assert r.by_guid(str(uuid.UUID(bytes=given))).id == 1
