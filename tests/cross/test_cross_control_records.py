"""The log layer reads and builds control records through the classes generated from
schemas/control_record.ksy, and writes the bytes Kafka writes.

Each builder's bytes are compared with the generated classes' and with bytes from outside the
package: the hand-packed fixtures of tests/fixtures/dump_log (make.py packs them from Kafka's
format rules, not with kafkacodec), kafka-python's and aiokafka's control record readers, and,
for LeaderChangeMessage, which no fixture holds, its version 0 fields packed here from Kafka's
LeaderChangeMessage.json. Readers refuse what Kafka refuses, with the words they used before
(they name the negative version Kafka names). An AST check finds no control-record key or value
packed or unpacked by hand, and no control type number restated, in the modules of the log layer
that read or build them."""
import ast
import base64
import struct

import pytest
from aiokafka.record.control_record import ABORT_MARKER, COMMIT_MARKER
from aiokafka.record.control_record import ControlRecord as AioControlRecord
from kafka.record.default_records import DefaultRecordBatch

from kafkacodec import read_batches, write_batch
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.kafka_types import KafkaTypes
from kafkacodec.storage.change.cleaned_txns import CleanedTransactions
from kafkacodec.storage.dump_log.common import Crash
from kafkacodec.storage.dump_log.tool import control_suffix
from kafkacodec.storage.exchange.jsonl import to_json
from kafkacodec.storage.exchange.jsonl_control import check_control_records
from kafkacodec.storage.kraft.reader import event_of
from kafkacodec.storage.kraft.snapshot import snapshot_bytes
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.samples.controller import write_metadata_sample
from kafkacodec.storage.state.producers import MarkerRefused, marker_of
from tests.conftest import ROOT, TESTS

Type = ControlRecord.ControlType
FIXTURES = TESTS / "fixtures" / "dump_log"
NO_TAGS = b"\x00"  # an empty tagged-field section: count 0


def generated_key(kind) -> bytes:
    return ControlRecord(version=0, type=kind).to_bytes()


def generated_marker(epoch: int) -> bytes:
    return ControlRecord.EndTransactionMarker(version=0, coordinator_epoch=epoch).to_bytes()


def tags():
    return KafkaTypes.TaggedFields(fields=[])


def records_of(data: bytes) -> list:
    return [(b.entry, r) for b in read_batches(data) for r in b]


def control_batch(key, value, producer_id=7) -> bytes:
    return write_batch([{"key": key, "value": value}], base_offset=1, producer_id=producer_id, producer_epoch=2,
                       is_transactional=producer_id >= 0, is_control=True)


# --- transaction markers -------------------------------------------------------------------------

def test_the_samples_markers_are_the_generated_bytes_and_read_as_kafka_python_and_aiokafka_read_them(tmp_path):
    write_sample(tmp_path)
    kinds = []
    for log in sorted((tmp_path / "payments-0").glob("*.log")):
        data = log.read_bytes()
        for batch in read_batches(data):
            if batch.is_legacy or not batch.entry.is_control:
                continue
            (r,) = list(batch)
            kind = ControlRecord.from_bytes(r.key).type
            kinds.append(kind)
            assert (r.key, r.value) == (generated_key(kind), generated_marker(2))
            # an independent reader of the batch's bytes: kafka-python's
            (theirs,) = list(DefaultRecordBatch(data[batch.position:batch.position + batch.size]))
            assert (theirs.version, theirs.type, theirs.abort, theirs.commit) == (0, kind, kind == 0, kind == 1)
            assert AioControlRecord.parse(r.key) == (ABORT_MARKER if kind == Type.abort else COMMIT_MARKER)
    assert kinds == [Type.commit, Type.abort, Type.commit, Type.abort]  # each marker its own batch


def test_a_marker_write_builds_from_its_control_object_is_kafkas_abort_with_epoch_5():
    """tests/fixtures/dump_log/control holds an ABORT marker of coordinator epoch 5, packed from
    Kafka's EndTransactionMarker; `write` builds the same bytes from `control` alone."""
    (entry, theirs), _ = records_of((FIXTURES / "control" / "00000000000000000011.log").read_bytes())
    given = [{"control": {"type": "ABORT", "coordinatorEpoch": 5}}]
    built, bad = [{}], []
    check_control_records(given, built, 7, lambda field, why: bad.append((field, why)))
    assert bad == []
    key, value = (base64.b64decode(built[0][f]) for f in ("key", "value"))
    assert (key, value) == (theirs.key, theirs.value) == (generated_key(Type.abort), generated_marker(5))
    # and a commit, at the largest key version and the lowest epoch `write` takes
    given = [{"control": {"type": "COMMIT", "version": 32767, "coordinatorEpoch": -2 ** 31}}]
    built = [{}]
    check_control_records(given, built, 7, lambda field, why: bad.append((field, why)))
    assert bad == []
    assert base64.b64decode(built[0]["key"]) == ControlRecord(version=32767, type=Type.commit).to_bytes() \
        == struct.pack(">hh", 32767, 1)
    assert base64.b64decode(built[0]["value"]) == generated_marker(-2 ** 31) == struct.pack(">hi", 0, -2 ** 31)


def test_dump_json_names_a_markers_fields_kafka_refuses_as_before():
    """A key or marker value of a negative version, which the generated reader refuses, is still
    shown with its fields, as `dump --json` showed them; a longer key or value is read as Kafka reads it."""
    cases = [(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x05",
              {"type": "ABORT", "version": 0, "coordinatorEpoch": 5}),
             (b"\xff\xff\x00\x01", b"\xff\xfe\xff\xff\xff\xfb",
              {"type": "COMMIT", "version": -1, "coordinatorEpoch": -5}),
             (b"\x00\x03\x00\x01\x09", b"\x00\x01\x00\x00\x00\x07\x09", {"type": "COMMIT", "version": 3,
                                                                          "coordinatorEpoch": 7}),
             (b"\x00\x00\x00\x00", b"\x00\x00\x00", {"type": "ABORT", "version": 0}),
             (b"\x00\x00\x00\x09", b"", {"type": "UNKNOWN", "version": 0}),
             (b"\x00\x00\x00", b"\x00\x00\x00\x00\x00\x05", None)]
    for key, value, control in cases:
        (batch,) = read_batches(control_batch(key, value))
        assert to_json(batch)["records"][0]["control"] == control, key


def test_kafka_dump_log_reads_a_control_records_key_and_marker_as_the_generated_classes():
    """kafka-dump-log's suffix of a control record names the marker the generated classes read, a
    key or marker value of a later version or with bytes after its fields as Kafka reads them, and
    ends its run on one it cannot read, in the words it used before."""
    shown = {(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05"): " endTxnMarker: COMMIT coordinatorEpoch: 5",
             (b"\x00\x03\x00\x00\x09", b"\x00\x01\xff\xff\xff\xfb\x09"): " endTxnMarker: ABORT coordinatorEpoch: -5",
             (b"\x00\x00\x00\x63", b""): " controlType: UNKNOWN(99)",
             (b"\x00\x00\xff\xfe", None): " controlType: UNKNOWN(-2)"}
    crashes = {(None, None): "its key has 0 bytes, fewer than 4",
               (b"\x00\x00\x00", b""): "its key has 3 bytes, fewer than 4",
               (b"\xff\xfe\x00\x01", b""): "invalid key version -2",
               (b"\x00\x00\x00\x00", None): "a transaction marker's value needs 6 bytes, it has 0",
               (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00"): "a transaction marker's value needs 6 bytes, it has 5",
               (b"\x00\x00\x00\x01", b"\x80\x00\x00\x00\x00\x04"): "invalid transaction marker version -32768"}
    for (key, value), suffix in shown.items():
        (batch,) = read_batches(control_batch(key, value))
        assert control_suffix(next(iter(batch)), "f") == suffix, key
    for (key, value), why in crashes.items():
        (batch,) = read_batches(control_batch(key, value))
        with pytest.raises(Crash) as err:
            control_suffix(next(iter(batch)), "f")
        assert str(err.value) == f"f: control record at offset 1: {why}", key


REFUSED = [  # (key, value, what `write` says of the line's field, what a recovery's producer state says)
    (b"\x00\x00", b"\x00\x00\x00\x00\x00\x04", "key", "control record key: 2 bytes, but a control record's key "
     "holds its version and type in at least 4 (Kafka refuses a shorter one)"),
    (b"\xff\xfe\x00\x00", b"\x00\x00\x00\x00\x00\x04", "key", "control record key: version -2: Kafka refuses a "
     "negative control record key version"),
    (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00", "value", "end transaction marker value: 5 bytes, but a "
     "transaction marker's value holds its version and coordinator epoch in at least 6 (Kafka refuses a shorter one)"),
    (b"\x00\x00\x00\x01", b"\x80\x00\x00\x00\x00\x04", "value", "end transaction marker value: version -32768: "
     "Kafka refuses a negative transaction marker version"),
]


@pytest.mark.parametrize("key, value, field, why", REFUSED)
def test_a_marker_kafka_refuses_is_refused_in_the_same_words(key, value, field, why):
    (batch,) = read_batches(control_batch(key, value))
    with pytest.raises(MarkerRefused) as err:
        marker_of(batch.entry)
    assert err.value.message.startswith(why + "; a broker's recovery keeps this batch")
    assert err.value.path == f"record_batch/records/{field}"
    bad = []
    check_control_records([{"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()}],
                          [{"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()}], 7,
                          lambda f, w: bad.append((f, w)))
    assert bad == [(f"records[0].{field}", why.split(": ", 1)[1])]


def test_the_cleaner_reads_a_markers_type_from_the_key_and_keeps_one_it_cannot_read():
    """A commit whose transaction had a batch walked stays (False); a marker Kafka cannot read
    ends nothing and stays too; an abort with nothing walked may go (True)."""
    def walked_then(key):
        txns = CleanedTransactions([])
        (data,) = [b.entry for b in read_batches(write_batch([{"value": b"v"}], producer_id=7, producer_epoch=2,
                                                             base_sequence=0, is_transactional=True))]
        txns.data_batch(data)
        (marker,) = [b.entry for b in read_batches(control_batch(key, generated_marker(0)))]
        return txns.marker_batch(marker)
    assert walked_then(generated_key(Type.commit)) is False
    assert walked_then(generated_key(Type.abort)) is True  # not in `aborted`: none of it walked
    assert walked_then(b"\xff\xff\x00\x00") is False  # refused: no marker, the batch stays
    assert walked_then(b"\x00\x00\x00") is False


# --- KRaft control records -----------------------------------------------------------------------

def test_a_snapshots_header_and_footer_are_kafkas_bytes():
    """The fixture's checkpoint opens with a SnapshotHeader of last contained time 1700000000000
    and closes with a SnapshotFooter, packed from Kafka's SnapshotHeaderRecord/SnapshotFooterRecord."""
    time = 1_700_000_000_000
    theirs = [r for _, r in records_of((FIXTURES / "kraft" / "00000000000000000100-0000000001.checkpoint")
                                       .read_bytes())]
    ours = records_of(snapshot_bytes([], epoch=1, time=time))
    assert [e.is_control for e, _ in ours] == [True, True]
    assert [(r.key, r.value) for _, r in ours] == [(r.key, r.value) for r in theirs]
    assert [(r.key, r.value) for _, r in ours] == [
        (generated_key(Type.snapshot_header), ControlRecord.SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=time, tagged_fields=tags()).to_bytes()),
        (generated_key(Type.snapshot_footer), ControlRecord.SnapshotFooterRecord(version=0, tagged_fields=tags())
         .to_bytes())]
    assert [r.key for _, r in ours] == [struct.pack(">hh", 0, 3), struct.pack(">hh", 0, 4)]


def test_the_metadata_samples_leader_change_is_kafkas_bytes(tmp_path):
    part = write_metadata_sample(tmp_path)
    first = sorted(part.glob("*.log"))[0].read_bytes()
    (entry, record), *_ = records_of(first)
    assert entry.is_control and record.key == generated_key(Type.leader_change) == struct.pack(">hh", 0, 2)
    voter = [ControlRecord.Voter(voter_id=3000, tagged_fields=tags())]
    assert record.value == ControlRecord.LeaderChangeMessage(version=0, leader_id=3000, voters=voter,
                                                             granting_voters=voter, tagged_fields=tags()).to_bytes()
    # LeaderChangeMessage v0: version, leaderId, voters and grantingVoters (compact arrays of
    # {voterId, tags}), tags
    voters = bytes([1 + 1]) + struct.pack(">i", 3000) + NO_TAGS
    assert record.value == struct.pack(">hi", 0, 3000) + voters + voters + NO_TAGS
    # and the snapshot beside it opens and closes as Kafka's do
    (checkpoint,) = part.glob("*.checkpoint")
    control = [r for e, r in records_of(checkpoint.read_bytes()) if e.is_control]
    assert [ControlRecord.from_bytes(r.key).type for r in control] == [Type.snapshot_header, Type.snapshot_footer]
    assert control[1].value == struct.pack(">h", 0) + NO_TAGS


def test_the_kraft_reader_refuses_a_control_key_in_kafkas_words():
    def problem(key):
        (batch,) = read_batches(control_batch(key, b"\x00\x00\x00", producer_id=-1))
        return event_of(next(iter(batch)), 0, True).problem
    assert problem(b"\x00\x00\x00") == ("Invalid value size found for end control record key. Must have at least 4 "
                                        "bytes, but found only 3")
    assert problem(b"\xff\xf6\x00\x04") == ("Invalid version found for control record: -10. May indicate data "
                                            "corruption")
    assert problem(b"\x00\x00\x00\x01") == "Unknown control record type COMMIT"
    assert problem(b"\x00\x00\x00\x63") == "Unknown control record type UNKNOWN"
    (batch,) = read_batches(control_batch(generated_key(Type.snapshot_footer), b"\x00\x00\x00", producer_id=-1))
    event = event_of(next(iter(batch)), 0, True)
    assert (event.problem, event.control) == (None, (Type.snapshot_footer, {"version": 0}))


# --- nothing packed by hand ----------------------------------------------------------------------

CHANGED = ["storage/state/control_rules.py", "storage/state/producers.py", "storage/exchange/jsonl.py",
           "storage/exchange/jsonl_control.py", "storage/kraft/reader.py", "storage/kraft/snapshot.py",
           "storage/samples/broker.py", "storage/samples/controller.py", "storage/change/cleaned_txns.py",
           "storage/dump_log/tool.py", "pipeline/cluster_metadata.py"]
# modules of the log layer that handle control records without reading or building their bytes
NEIGHBOURS = ["storage/exchange/jsonl_check.py", "storage/state/transactions.py", "storage/kraft/replay.py",
              "storage/kraft/view.py", "storage/kraft/image.py", "storage/change/writer.py",
              "storage/change/compaction.py", "storage/change/convert.py"]
# (module, function) allowed an integer's bytes by hand, and why
ALLOWED = {
    ("storage/state/control_rules.py", "_refused_fields"):
        "a negative version the generated reader refuses without handing back; read at its LAYOUT place",
    ("storage/kraft/image.py", "_uuid_order"): "a UUID's halves as Kafka's Uuid.compareTo orders them",
}
TYPE_NAMES = {t.name.upper(): t.value for t in Type} | {"VOTERS": Type.kraft_voters.value}
TYPE_WORDS = {"kind", "type", "control_type", "kind_id"}


def hand_written_control_bytes(source: str, module: str = "") -> list[str]:
    """Where `source` packs or unpacks bytes by hand, or restates a control type's number."""
    found = []
    tree = ast.parse(source)
    owner = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                owner.setdefault(id(node), getattr(fn, "name", "<lambda>"))
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import) and any(a.name == "struct" for a in node.names) or \
                isinstance(node, ast.ImportFrom) and node.module == "struct":
            found.append(f"{line}: imports struct")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                ((node.func.attr == "from_bytes" and isinstance(node.func.value, ast.Name)
                  and node.func.value.id == "int") or (node.func.attr == "to_bytes" and node.args)):
            if (module, owner.get(id(node))) not in ALLOWED:
                found.append(f"{line}: an integer's bytes by hand ({node.func.attr})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, bytes) and len(node.value) >= 2 \
                and not node.value.strip(b"\x00"):
            found.append(f"{line}: zero bytes {node.value!r} packed by hand")
        elif isinstance(node, ast.Assign):
            names = [t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for name, value in zip(names, values):
                if isinstance(name, ast.Name) and name.id in TYPE_NAMES and isinstance(value, ast.Constant) \
                        and value.value == TYPE_NAMES[name.id]:
                    found.append(f"{line}: {name.id} = {value.value} restates a control type")
        elif isinstance(node, ast.Dict) and any(isinstance(v, ast.Constant) and v.value in TYPE_NAMES
                                                for v in node.values) \
                and any(isinstance(k, ast.Constant) and type(k.value) is int for k in node.keys):
            found.append(f"{line}: a table of control type numbers and names")
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in TYPE_WORDS:
            for right in node.comparators:
                items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                if items and all(isinstance(i, ast.Constant) and type(i.value) is int for i in items):
                    found.append(f"{line}: {node.left.id} compared with control type numbers")
    return found


@pytest.mark.parametrize("module", CHANGED + NEIGHBOURS)
def test_no_control_record_bytes_or_type_numbers_by_hand(module):
    assert hand_written_control_bytes((ROOT / module).read_text(), module) == []


OLD_WAYS = [  # how these modules read and built control records before, each found
    'import struct\nversion, kind = struct.unpack_from(">hh", key)\n',
    'def f(key):\n    return int.from_bytes(key[:2], "big", signed=True), int.from_bytes(key[2:4], "big")\n',
    'def f(epoch):\n    return (0).to_bytes(2, "big") + epoch.to_bytes(4, "big", signed=True)\n',
    'def f(kind):\n    return {"key": b"\\x00\\x00" + kind.to_bytes(2, "big")}\n',
    'ABORT, COMMIT = 0, 1\n',
    'LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, VOTERS = 2, 3, 4, 5, 6\n',
    'CONTROL_NAMES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE"}\n',
    'def f(kind, value):\n    return kind in (0, 1) and len(value) >= 6\n',
]


@pytest.mark.parametrize("source", OLD_WAYS)
def test_the_check_finds_each_way_control_records_were_packed_by_hand(source):
    assert hand_written_control_bytes(source, "storage/kraft/image.py"), source


def test_the_check_leaves_what_is_no_control_record_alone():
    """The producer snapshot's header size shares a name with a control type, not its number; a
    generated object's to_bytes() takes no arguments."""
    assert hand_written_control_bytes('SNAPSHOT_HEADER, SNAPSHOT_ENTRY = 10, 46\nx = obj.to_bytes()\n'
                                      'y = b"\\x00\\x09"\n') == []


def test_every_module_checked_exists_and_the_allowed_places_are_there():
    for module in CHANGED + NEIGHBOURS:
        assert (ROOT / module).is_file(), module
    for module, function in ALLOWED:
        assert f"def {function}(" in (ROOT / module).read_text(), (module, function)
