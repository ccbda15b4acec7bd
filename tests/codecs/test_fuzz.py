"""Mutated real bytes for every generated reader: each input either decodes or raises the
project's DecodeError, nothing else, and quickly. CI runs a fixed budget (derandomized);
FUZZ_EXAMPLES raises it for a longer run."""
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacodec import read_batches, write_batch
from kafkacodec.formatdocs.examples import WRITERS
from kafkacodec.generated.consumer_offsets import ConsumerOffsets
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.transaction_log import TransactionLog
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.dump_log import decoders

from tests.dumplog import test_internal_topics as hand

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def seeds():
    """(reader class, real bytes) pairs: the format pages' examples and the hand-packed
    internal-topic messages of every version."""
    for sid, (write, cls) in sorted(WRITERS.items()):
        yield sid, cls, write()
    for v, body in hand.offset_commit_values():
        yield f"offset_commit_v{v}", ConsumerOffsets.OffsetCommitValue, struct.pack(">h", v) + body
    for v, body in hand.group_metadata_values():
        yield f"group_metadata_v{v}", ConsumerOffsets.GroupMetadataValue, struct.pack(">h", v) + body
    for i, (v, body) in enumerate(hand.transaction_log_values()):
        yield f"transaction_log_v{v}_{i}", TransactionLog.TransactionLogValue, struct.pack(">h", v) + body
    from kafkacodec.codec.internal_topics import CONSUMER_GROUP_VALUES
    for v, _, value in hand.consumer_group_records():
        yield f"consumer_group_record_{v}", CONSUMER_GROUP_VALUES[v], value
    from tests.dumplog import test_group_records as groups
    from tests.dumplog import test_remote_log_metadata as remote
    from tests.dumplog import test_share_group_state as share
    from kafkacodec.generated.remote_log_metadata import RemoteLogMetadata
    from kafkacodec.generated.share_group_state import ShareGroupState
    from kafkacodec.codec.internal_topics import GROUP_RECORD_VALUES, SHARE_STATE_VALUES
    for name, kind, key, _, value, _ in groups.CASES:
        yield f"group_record_{name}", GROUP_RECORD_VALUES[kind], struct.pack(">h", 0) + value
    yield "group_record_key", ConsumerOffsets, struct.pack(">h", 16) + hand.string("g") + hand.string("re")
    for name, kind, value, _ in share.CASES:
        yield f"share_group_state_{name}", SHARE_STATE_VALUES[kind], struct.pack(">h", 0) + value
    yield "share_group_state_key", ShareGroupState, struct.pack(">h", 0) + share.KEY
    for i, (api_key, body, _) in enumerate(remote.CASES):
        yield f"remote_log_metadata_{api_key}_{i}", RemoteLogMetadata, remote.framed(api_key, 0, body)
    leader = struct.pack(">hi", 0, 3) + hand.uvarint(2) + struct.pack(">i", 1) + hand.tags() + hand.uvarint(1) \
        + hand.tags()
    yield "leader_change", ControlRecord.LeaderChangeMessage, leader
    from tests.kraft import test_metadata_records as kraft
    from kafkacodec.generated.metadata_record import MetadataRecord
    latest = {api_key: (version, body) for api_key, version, body, _ in kraft.CASES}  # each type's newest
    for api_key, (version, body) in sorted(latest.items()):
        yield f"metadata_record_{api_key}_v{version}", MetadataRecord, kraft.framed(api_key, version, body)
    records = [{"key": b"k%d" % i, "value": b"v" * (i * 7), "timestamp": 1000 + i, "headers": [("h", b"x")]}
               for i in range(6)]
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        data = write_batch(records, compression=codec)
        yield f"segment_{codec}", None, data


SEEDS = list(seeds())


def mutate(data: bytes, ops) -> bytes:
    b = bytearray(data)
    for kind, at, value in ops:
        if not b:
            break
        i = at % len(b)
        if kind == "flip":
            b[i] ^= 1 << (value % 8)
        elif kind == "set":
            b[i] = value % 256
        elif kind == "cut":
            del b[i:]
        elif kind == "insert":
            b[i:i] = bytes([value % 256]) * (1 + value % 5)
        elif kind == "splice":
            b[i:i + 4] = struct.pack(">i", (-1, 0, 2 ** 31 - 1, 2 ** 24, value)[value % 5])
    return bytes(b)


OPS = st.lists(st.tuples(st.sampled_from(["flip", "set", "cut", "insert", "splice"]), st.integers(0, 1 << 16),
                         st.integers(0, 1 << 31)), min_size=1, max_size=4)


def exercise(cls, data: bytes) -> None:
    if cls is None:  # a segment: every batch and every record, as a reader would touch them; the CRC
        # is not checked, or it would stop nearly every mutation before the records are read
        for batch in read_batches(data, verify=False):
            for record in batch:
                (record.key, record.value, record.offset, record.timestamp)
        return
    obj = cls.from_bytes(data)
    obj.to_dict()
    again = cls.from_bytes(obj.to_bytes())  # what decodes re-encodes to an equal object (NaN floats
    assert again == obj or repr(again) == repr(obj)  # are equal by their text: NaN != NaN)


@pytest.mark.parametrize("name,cls,seed", SEEDS, ids=[s[0] for s in SEEDS])
@FUZZ
@given(ops=OPS)
def test_mutations_decode_or_raise_decode_error(name, cls, seed, ops):
    data = mutate(seed, ops)
    try:
        exercise(cls, data)
    except DecodeError:
        pass


@FUZZ
@given(key=st.binary(max_size=40), value=st.one_of(st.none(), st.binary(max_size=80)))
def test_topic_decoders_never_raise(key, value):
    """The dump tool's decoders print an error line for bytes that do not decode; never raise."""
    class R:
        pass
    r = R()
    r.key, r.value, r.offset = key, value, 7
    for decode in (decoders.offsets, decoders.transaction_log, decoders.share_group_state):
        k, _ = decode(r)
        assert k is not None
    for kind in ("offsets", "share-group-state", "remote-log-metadata"):
        assert decoders.decoded_json(r, kind)
    from kafkacodec.storage.kraft.records import cluster_metadata
    from kafkacodec.storage.dump_log.remote_log_metadata import remote_log_metadata
    assert cluster_metadata(r)[1] is not None and remote_log_metadata(r)[1] is not None
