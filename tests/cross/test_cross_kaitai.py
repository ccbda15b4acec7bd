"""The official Kaitai Struct compiler (npm kaitai-struct-compiler, run with node) accepts every
schema, and the Python parsers it generates (kaitaistruct runtime) read the same field and
instance values as ours from the same bytes. Its custom processor for compressed data is
kafka-python's codec module, so nothing of ours sits in its read path."""
import importlib
import io
import struct
import sys
from enum import Enum

import pytest
from kaitaistruct import KaitaiStream

from tests.support import TESTS
from kafkacodec import read_batches, write_batch
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.producer_snapshot import ProducerSnapshot
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.storage.samples.broker import write_sample
from tests.support.peers import official as official_compiler

SHIM = '''
from kafka import codec


class KafkaCompression:
    """Kaitai custom processor: decompress with kafka-python's codecs."""

    def __init__(self, codec_id, magic):
        self.codec_id, self.magic = codec_id, magic

    def decode(self, data):
        if self.codec_id == 0:
            return data
        if self.codec_id == 1:
            return codec.gzip_decode(data)
        if self.codec_id == 2:
            return codec.snappy_decode(data)
        if self.codec_id == 3:
            return codec.lz4_decode_old_kafka(data) if self.magic == 0 else codec.lz4_decode(data)
        return codec.zstd_decode(data)
'''


@pytest.fixture(scope="session")
def official(tmp_path_factory):
    if not official_compiler.available():
        pytest.fail("node and the npm package kaitai-struct-compiler are needed (make test installs them)")
    out = official_compiler.compile_schemas(tmp_path_factory.mktemp("ksc"))
    (out / "kafka_compression.py").write_text(SHIM)
    sys.path.insert(0, str(out))
    try:
        yield {name: importlib.import_module(name) for name in
               ("record_batch", "legacy_log_entry", "offset_index", "time_index", "transaction_index",
                "producer_snapshot", "consumer_offsets", "transaction_log", "control_record",
                "consumer_protocol", "metadata_record", "group_records", "share_group_state",
                "remote_log_metadata", "kraft_snapshot", "quorum_state")}
    finally:
        sys.path.remove(str(out))


def theirs_plain(value):
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, list):
        return [theirs_plain(v) for v in value]
    if hasattr(value, "_io") and hasattr(value, "value") and type(value).__name__ in ("Varint", "Varlong", "Uvarint"):
        return value.value
    return value


def compare(ours: dict, theirs, path="") -> int:
    """Assert every field and instance of ours equals the official parser's; return the count."""
    n = 0
    for key, mine in ours.items():
        other = theirs_plain(getattr(theirs, key, None))
        where = f"{path}/{key}"
        if isinstance(mine, dict):
            n += compare(mine, other, where)
        elif isinstance(mine, list) and mine and isinstance(mine[0], dict):
            assert len(mine) == len(other), where
            for i, (a, b) in enumerate(zip(mine, other)):
                n += compare(a, b, f"{where}/{i}")
        else:
            if isinstance(other, list):
                other = [theirs_plain(o) for o in other]
            assert mine == other, f"{where}: ours {mine!r}, official {other!r}"
            n += 1
    return n


def segments():
    yield "sample.log", (TESTS / "fixtures" / "sample.log").read_bytes()
    for f in sorted((TESTS / "fixtures" / "librdkafka").glob("*.bin")):
        yield f.name, f.read_bytes()
    recs = [{"key": b"k%d" % i, "value": b"value %d " % i * 20, "timestamp": 10_000 + i,
             "headers": [("h", b"x")]} for i in range(30)]
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        yield f"ours-v2-{codec}", write_batch(recs, magic=2, compression=codec)
    legacy = [dict(r, headers=[]) for r in recs]
    for magic in (0, 1):
        for codec in ("gzip", "snappy", "lz4"):
            yield f"ours-v{magic}-{codec}", write_batch(legacy, magic=magic, compression=codec)


@pytest.mark.parametrize("name,data", list(segments()), ids=lambda v: v if isinstance(v, str) else "")
def test_official_parser_reads_the_same_values(official, name, data):
    checked = 0
    for batch in read_batches(data):
        raw = data[batch.position:batch.position + batch.size]
        if batch.is_legacy:
            theirs = official["legacy_log_entry"].LegacyLogEntry(KaitaiStream(io.BytesIO(raw)))
        else:
            theirs = official["record_batch"].RecordBatch(KaitaiStream(io.BytesIO(raw)))
        checked += compare(batch.entry.to_dict(), theirs)
    assert checked > 20


def test_official_parser_reads_indexes(official):
    offsets = b"".join(struct.pack(">ii", i * 3, i * 4096) for i in range(50))
    times = b"".join(struct.pack(">qi", 1_700_000_000_000 + i, i * 3) for i in range(50))
    for ours, module, cls, data in ((OffsetIndex, "offset_index", "OffsetIndex", offsets),
                                    (TimeIndex, "time_index", "TimeIndex", times)):
        theirs = getattr(official[module], cls)(KaitaiStream(io.BytesIO(data)))
        assert compare(ours.from_bytes(data).to_dict(), theirs) == 100


def test_official_parser_reads_transaction_indexes_and_snapshots(official, tmp_path):
    write_sample(tmp_path)
    part = tmp_path / "payments-0"
    files = sorted(part.glob("*.txnindex")) + sorted(part.glob("*.snapshot"))
    checked = 0
    for f in files:
        data = f.read_bytes()
        ours, module, cls = ((TransactionIndex, "transaction_index", "TransactionIndex") if f.suffix == ".txnindex"
                             else (ProducerSnapshot, "producer_snapshot", "ProducerSnapshot"))
        theirs = getattr(official[module], cls)(KaitaiStream(io.BytesIO(data)))
        checked += compare(ours.from_bytes(data).to_dict(), theirs)
    assert checked > 40


def test_official_parser_reads_internal_topic_records(official):
    """The hand-packed messages of test_internal_topics, every version, through both parsers."""
    from tests.dumplog import test_internal_topics as t
    from kafkacodec.generated.consumer_offsets import ConsumerOffsets
    from kafkacodec.generated.control_record import ControlRecord
    from kafkacodec.generated.transaction_log import TransactionLog
    cases = [(ConsumerOffsets.OffsetCommitValue, "consumer_offsets", ("ConsumerOffsets", "OffsetCommitValue"),
              struct.pack(">h", v) + body) for v, body in t.offset_commit_values()]
    cases += [(ConsumerOffsets.GroupMetadataValue, "consumer_offsets", ("ConsumerOffsets", "GroupMetadataValue"),
               struct.pack(">h", v) + body) for v, body in t.group_metadata_values()]
    cases += [(TransactionLog.TransactionLogValue, "transaction_log", ("TransactionLog", "TransactionLogValue"),
               struct.pack(">h", v) + body) for v, body in t.transaction_log_values()]
    cases += [(ConsumerOffsets, "consumer_offsets", ("ConsumerOffsets",),
               struct.pack(">h", 1) + t.string("g") + t.string("t") + struct.pack(">i", 4)),
              (ControlRecord, "control_record", ("ControlRecord",), struct.pack(">hh", 0, 1))]
    from kafkacodec.generated.consumer_protocol import ConsumerProtocol
    cases += [(ConsumerProtocol, "consumer_protocol", ("ConsumerProtocol",), struct.pack(">h", v) + body)
              for v, body in t.subscriptions()]
    checked = 0
    for ours, module, names, data in cases:
        cls = official[module]
        for name in names:
            cls = getattr(cls, name)
        checked += compare(ours.from_bytes(data).to_dict(), cls(KaitaiStream(io.BytesIO(data))))
    assert checked > 100


def test_official_parser_reads_metadata_records(official):
    """The hand-packed KRaft metadata records of test_metadata_records, every type and version."""
    from tests.kraft import test_metadata_records as t
    from kafkacodec.generated.metadata_record import MetadataRecord
    checked = 0
    for api_key, version, body, _ in t.CASES:
        data = t.framed(api_key, version, body)
        theirs = official["metadata_record"].MetadataRecord(KaitaiStream(io.BytesIO(data)))
        assert not isinstance(theirs.body, bytes), (api_key, version)
        checked += compare(MetadataRecord.from_bytes(data).to_dict(), theirs)
    assert checked > 300


def test_official_parser_reads_a_kraft_snapshot_and_the_quorum_state(official, tmp_path):
    """The controller sample's `.checkpoint` (header, metadata records, footer) and its
    `quorum-state`, read by the official compiler's parsers and by ours."""
    from kafkacodec.generated.kraft_snapshot import KraftSnapshot
    from kafkacodec.generated.quorum_state import QuorumState
    from kafkacodec.storage.samples.controller import write_metadata_sample
    part = write_metadata_sample(tmp_path)
    data = next(part.glob("*.checkpoint")).read_bytes()
    theirs = official["kraft_snapshot"].KraftSnapshot(KaitaiStream(io.BytesIO(data)))
    assert len(theirs.batches) >= 3
    assert compare(KraftSnapshot.from_bytes(data).to_dict(), theirs) > 20
    state = (part / "quorum-state").read_bytes()
    assert official["quorum_state"].QuorumState(KaitaiStream(io.BytesIO(state))).state == \
        QuorumState.from_bytes(state).state == state.decode()


def test_official_parser_reads_kafka4_internal_records(official):
    """The hand-packed records of test_group_records, test_share_group_state and
    test_remote_log_metadata: keys, values and framed records of every type."""
    from tests.dumplog import test_group_records as groups
    from tests.dumplog import test_remote_log_metadata as remote
    from tests.dumplog import test_share_group_state as share
    from kafkacodec.generated.consumer_offsets import ConsumerOffsets
    from kafkacodec.generated.remote_log_metadata import RemoteLogMetadata
    from kafkacodec.generated.share_group_state import ShareGroupState
    from kafkacodec.codec.internal_topics import GROUP_RECORD_VALUES, SHARE_STATE_VALUES
    theirs_offsets = official["consumer_offsets"].ConsumerOffsets
    cases = []
    for _, kind, key, _, value, _ in groups.CASES:
        cls = GROUP_RECORD_VALUES[kind]
        cases += [(ConsumerOffsets, theirs_offsets, struct.pack(">h", kind) + key),
                  (cls, getattr(official["group_records"].GroupRecords, cls.__name__.split("_", 1)[1]),
                   struct.pack(">h", 0) + value)]
    for _, kind, value, _ in share.CASES:
        cls = SHARE_STATE_VALUES[kind]
        cases += [(ShareGroupState, official["share_group_state"].ShareGroupState, struct.pack(">h", kind) + share.KEY),
                  (cls, getattr(official["share_group_state"].ShareGroupState, cls.__name__.split("_", 1)[1]),
                   struct.pack(">h", 0) + value)]
    cases += [(RemoteLogMetadata, official["remote_log_metadata"].RemoteLogMetadata, remote.framed(api_key, 0, body))
              for api_key, body, _ in remote.CASES]
    checked = 0
    for ours, theirs, data in cases:
        parsed = theirs(KaitaiStream(io.BytesIO(data)))
        assert not isinstance(getattr(parsed, "body", getattr(parsed, "key", None)), bytes), data
        checked += compare(ours.from_bytes(data).to_dict(), parsed)
    assert checked > 300
