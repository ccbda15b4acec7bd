"""The framing of Confluent's serializers as our reader takes it apart, on bytes spelled out by
the registry's documented rules: magic 0 and a big-endian id, magic 1 and a GUID, Protobuf's
message indexes as zig-zag varints with [0] as one zero byte, and the id in a header."""
import uuid

import pytest

from kafkacodec.codec.records import Header
from kafkacodec.codec.values import framing
from kafkacodec.codec.values.problems import NOT_FRAMED, TRUNCATED, UndecodableValue


def test_magic_zero_and_a_big_endian_id():
    framed = framing.unframe(b"\x00\x00\x00\x01\x02payload")
    assert framed.ref == framing.SchemaRef(id=258) and framed.body_at == 5 and framed.header is None


def test_magic_one_and_a_guid():
    guid = uuid.uuid4()
    framed = framing.unframe(b"\x01" + guid.bytes + b"rest")
    assert framed.ref == framing.SchemaRef(guid=str(guid)) and framed.body_at == 17


@pytest.mark.parametrize("data,kind", [(b"", NOT_FRAMED), (b"\x00\x00\x01", TRUNCATED), (b"\x01" + b"\x00" * 5, TRUNCATED),
                                       (b"{\"a\":1}", NOT_FRAMED)])
def test_what_is_not_framed_says_so(data, kind):
    with pytest.raises(UndecodableValue) as err:
        framing.unframe(data)
    assert err.value.kind == kind


def test_the_header_names_the_schema_and_the_payload_stays_bare():
    guid = uuid.uuid4()
    headers = [Header(key="__value_schema_id", value=b"\x01" + guid.bytes + b"\x02\x02")]
    framed = framing.unframe(b"bare payload", headers)
    assert framed.in_header and framed.ref.guid == str(guid)
    assert framing.message_indexes(framed.header, framed.body_at) == ([1], len(framed.header))
    # the key's header is another header
    with pytest.raises(UndecodableValue):
        framing.unframe(b"bare", headers, is_key=True)


@pytest.mark.parametrize("data,indexes", [(b"\x00", [0]), (b"\x02\x02", [1]), (b"\x04\x00\x04", [0, 2]),
                                          (b"\x02\x96\x01", [75])])
def test_message_indexes(data, indexes):
    assert framing.message_indexes(data + b"tail", 0) == (indexes, len(data))


@pytest.mark.parametrize("data", [b"", b"\x02", b"\x03\x02", b"\x02\xff\xff\xff\xff\xff\x01"])
def test_bad_message_indexes_are_refused(data):
    with pytest.raises(UndecodableValue):
        framing.message_indexes(data, 0)


def test_the_command_lines_formats_are_the_decoders():
    """The command line restates them (it loads no layer below it at start-up): they must agree."""
    from kafkacodec.cli.commands import spark, value_options
    from kafkacodec.codec.values.decoding import FORMATS, SCHEMA_FORMATS

    assert value_options.FORMATS == list(FORMATS)
    assert value_options.NEEDS_SCHEMAS == {"registry", *SCHEMA_FORMATS}
    export_formats = next(p for p in spark.export.params if p.name == "value_format").type.choices
    assert list(export_formats) == list(SCHEMA_FORMATS)
