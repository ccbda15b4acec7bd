"""`__remote_log_metadata` records (tiered storage), every type at every version Kafka 4.1.1
defines, packed here by hand from the message specs' rules (framed as KRaft frames its records:
frame version, api key and version as unsigned varints; flexible bodies). Each decodes,
re-encodes byte for byte, unknown tags included, and prints as Kafka 4.1's
remote-log-metadata decoder prints it: the metadata object's toString (written out by hand
from RemoteLogSegmentMetadata.java and its siblings), or Kafka's error line."""
import json
import struct
from types import SimpleNamespace

import pytest

from kafkacodec.generated.remote_log_metadata import RemoteLogMetadata
from kafkacodec.storage.dump_log.decoders import decoded_json
from kafkacodec.storage.dump_log.remote_log_metadata import TYPES, read_record, remote_log_metadata
from tests.dumplog.test_internal_topics import cstring, tags, uvarint

U1, U2 = bytes(range(16)), bytes(range(16, 32))
J1, J2 = "AAECAwQFBgcICQoLDA0ODw", "EBESExQVFhcYGRobHB0eHw"
UNKNOWN = (9, b"\x01\x02\x03")  # a tag Kafka 4.1 does not define: kept and re-encoded
PARTITION = cstring("orders") + U1 + struct.pack(">i", 2) + tags()
SEGMENT = PARTITION + U2 + tags()
SEGMENT_TEXT = f"RemoteLogSegmentId{{topicIdPartition={J1}:orders-2, id={J2}}}"


def framed(api_key: int, version: int, body: bytes) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(version) + body


def epochs(*pairs) -> bytes:
    return uvarint(len(pairs) + 1) + b"".join(struct.pack(">iq", e, o) + tags() for e, o in pairs)


def nbytes(data: bytes | None) -> bytes:
    return uvarint(0) if data is None else uvarint(len(data) + 1) + data


def segment(start=100, end=199, pairs=((3, 150), (2, 100), (3, 160)), state=0, custom=None, *fields) -> bytes:
    return SEGMENT + struct.pack(">qqiqq", start, end, 1, 1700000000500, 1700000001000) + epochs(*pairs) \
        + struct.pack(">i", 4096) + nbytes(custom) + struct.pack(">b", state) + tags(*fields)


def update(state=1, custom=b"abc") -> bytes:
    return SEGMENT + struct.pack(">iq", 2, 1700000002000) + nbytes(custom) + struct.pack(">b", state) + tags(UNKNOWN)


def delete(state=0) -> bytes:
    return PARTITION + struct.pack(">iqb", 3000, 1700000003000, state) + tags()


def snapshot(state=1, pairs=((0, 0),), *fields) -> bytes:
    return U2 + struct.pack(">qqiqq", 0, 99, 1, 1700000000500, 1700000001000) + epochs(*pairs) \
        + struct.pack(">i", 512) + nbytes(b"") + struct.pack(">b", state) + tags(*fields)


# the later entry for epoch 3 replaces the earlier one, and the map prints by epoch, as Java's
CASES = [
    (0, segment(), f"RemoteLogSegmentMetadata{{remoteLogSegmentId={SEGMENT_TEXT}, startOffset=100, endOffset=199, "
                   "brokerId=1, maxTimestampMs=1700000000500, eventTimestampMs=1700000001000, "
                   "segmentLeaderEpochs={2=100, 3=160}, segmentSizeInBytes=4096, customMetadata=Optional.empty, "
                   "state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}"),
    (0, segment(0, 0, ((0, 0),), 0, b"\x00\x01", (0, b"\x01"), UNKNOWN),
     f"RemoteLogSegmentMetadata{{remoteLogSegmentId={SEGMENT_TEXT}, startOffset=0, endOffset=0, brokerId=1, "
     "maxTimestampMs=1700000000500, eventTimestampMs=1700000001000, segmentLeaderEpochs={0=0}, "
     "segmentSizeInBytes=4096, customMetadata=Optional[CustomMetadata{2 bytes}], state=COPY_SEGMENT_STARTED, "
     "txnIdxEmpty=true}"),
    (1, update(), f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={SEGMENT_TEXT}, "
                  "customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, "
                  "eventTimestampMs=1700000002000, brokerId=2}"),
    (2, delete(2), f"RemotePartitionDeleteMetadata{{topicPartition={J1}:orders-2, state=DELETE_PARTITION_FINISHED, "
                   "eventTimestampMs=1700000003000, brokerId=3000}"),
    (3, snapshot(3, ((0, 0),), (0, b"\x00")),
     f"RemoteLogSegmentMetadataSnapshot{{segmentId={J2}, startOffset=0, endOffset=99, maxTimestampMs=1700000000500, "
     "segmentLeaderEpochs={0=0}, segmentSizeInBytes=512, customMetadata=Optional[CustomMetadata{0 bytes}], "
     "state=DELETE_SEGMENT_FINISHED, txnIdxEmpty=false}"),
]


def test_every_record_type_is_covered():
    assert sorted({c[0] for c in CASES}) == sorted(TYPES) == [0, 1, 2, 3]


@pytest.mark.parametrize("api_key,body,line", CASES, ids=[f"{TYPES[c[0]][0]}-{i}" for i, c in enumerate(CASES)])
def test_record_reads_reencodes_and_prints_as_kafka(api_key, body, line):
    value = framed(api_key, 0, body)
    r = RemoteLogMetadata.from_bytes(value)
    assert not isinstance(r.body, (bytes, bytearray)) and r.to_bytes() == value
    assert read_record(value)[:2] == (api_key, 0)
    assert remote_log_metadata(SimpleNamespace(offset=4, key=None, value=value)) == (None, line)


def test_unknown_tags_are_kept_raw_and_the_known_one_decoded():
    r = RemoteLogMetadata.from_bytes(framed(0, 0, CASES[1][1]))
    assert [(f.tag, getattr(f.data, "value", f.data)) for f in r.body.tagged_fields.fields] == [(0, 1), UNKNOWN]
    r = RemoteLogMetadata.from_bytes(framed(1, 0, update()))
    assert [(f.tag, f.data) for f in r.body.tagged_fields.fields] == [UNKNOWN]


def test_a_later_version_reads_with_version_0s_layout_as_kafka_reads_it():
    """Kafka's reader of a message with one version does not look at the version it is given."""
    value = framed(2, 5, delete())
    assert isinstance(RemoteLogMetadata.from_bytes(value).body, bytes)  # the schema keeps it raw
    assert remote_log_metadata(SimpleNamespace(offset=4, value=value))[1].startswith("RemotePartitionDeleteMetadata{")


ERRORS = [
    (framed(4, 0, b""), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 4"),
    (uvarint(0), "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview "
                 "release of KRaft in 2.8 to newer versions are not supported."),
    (uvarint(1) + uvarint(1), "Error while reading version"),
    (framed(2, 0, delete()[:-1]), "Failed to deserialize record with type 2"),
    (framed(2, 0, delete() + b"xy"), "Found 2 byte(s) of garbage after 2"),
    # what the metadata objects' constructors refuse
    (framed(0, 0, segment(start=-1)), "Unexpected start offset = -1. StartOffset for a remote segment cannot be "
                                      "negative"),
    (framed(0, 0, segment(start=10, end=9)), "Unexpected end offset = 9. EndOffset for a remote segment cannot be "
                                             "less than startOffset = 10"),
    (framed(0, 0, segment(pairs=())), "segmentLeaderEpochs can not be null or empty"),
    (framed(0, 0, segment(state=4)), "state can not be null"),
    (framed(1, 0, update(state=-1)), "state can not be null"),
    (framed(2, 0, delete(state=3)), "null"),  # a null check without a message
    (framed(3, 0, snapshot(state=9, pairs=())), "state can not be null"),  # checked before the epochs
    (framed(3, 0, snapshot(pairs=())), "segmentLeaderEpochs can not be null or empty"),
]


@pytest.mark.parametrize("value,message", ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_what_kafka_cannot_read_is_said_in_its_words(value, message):
    got = remote_log_metadata(SimpleNamespace(offset=4, key=None, value=value))
    assert got == (None, f"Error at offset 4, skipping. {message}")
    assert decoded_json(SimpleNamespace(offset=4, key=None, value=value), "remote-log-metadata") == {"error": got[1]}


def test_dump_log_and_dump_print_the_decoded_records(tmp_path):
    """Kafka 4.1 (DumpLogSegments.scala, RemoteMetadataLogMessageParser): no key; the payload
    is the object's text or the error line. --json adds the record's JSON."""
    from click.testing import CliRunner

    from kafkacodec.cli import main
    from kafkacodec.storage.change.writer import PartitionWriter
    part = tmp_path / "__remote_log_metadata-0"
    with PartitionWriter(part) as w:
        w.append([{"key": None, "value": framed(1, 0, update()), "timestamp": 5},
                  {"key": None, "value": framed(7, 0, b""), "timestamp": 5}])
    log = str(part / "00000000000000000000.log")
    run = CliRunner().invoke(main, ["dump-log", "--remote-log-metadata-decoder", "--files", log])
    assert run.exit_code == 0, run.output
    lines = run.stdout.splitlines()
    assert lines[-2].endswith(" payload: " + CASES[2][2]) and " key: " not in lines[-2]
    assert lines[-1].endswith(" payload: Error at offset 1, skipping. org.apache.kafka.common.errors."
                              "UnsupportedVersionException: Unknown metadata id 7")
    run = CliRunner().invoke(main, ["dump", "--remote-log-metadata-decoder", log])
    assert run.exit_code == 0 and run.stdout.splitlines()[-2:] == lines[-2:]
    run = CliRunner().invoke(main, ["dump", "--json", "--remote-log-metadata-decoder", log])
    (batch,) = map(json.loads, run.stdout.splitlines())
    assert batch["records"][0]["decoded"] == {
        "type": "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD", "version": 0,
        "data": {"remoteLogSegmentId": {"topicIdPartition": {"name": "orders", "id": J1, "partition": 2}, "id": J2},
                 "brokerId": 2, "eventTimestampMs": 1700000002000, "customMetadata": "YWJj", "remoteLogSegmentState": 1},
        "text": CASES[2][2]}
    assert batch["records"][1]["decoded"] == {"error": lines[-1].split(" payload: ")[1]}
