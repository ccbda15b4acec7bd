"""The metadata replay against Kafka 4.1's loader rules where a log departs from the happy path:
snapshots without their footer, records Kafka's reader cannot decode, metadata transactions
out of order, offsets that go back, legacy entries, points past the log's end. Each case built
here on real bytes; the expected outcomes are Kafka's (RecordsIterator, RecordsSnapshotReader,
MetadataBatchLoader), worked out by hand."""
import json
import shutil
import struct
import subprocess
import sys

import pytest

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.storage.kraft.records import pack
from kafkacodec.storage.kraft.replay import MetadataLogProblem, Point, open_metadata_log, replay
from kafkacodec.storage.kraft.view import history, replay_json, subject
from kafkacodec.storage.samples.controller import (MINUTE, T0, partition, rec, register, uuid,
                                                   write_metadata_sample)
from kafkacodec.storage.segments.scan import batch_positions

PART = "__cluster_metadata-0"
SNAPSHOT = f"{43:020d}-{1:010d}.checkpoint"
HOW = ("snapshot", "logRecords", "quorum", "notes")  # where a replay started from, not what it found


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    root = tmp_path_factory.mktemp("controller")
    write_metadata_sample(root)
    return root


def copy_of(controller, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(controller, copy)
    return copy


def same_state(a, b) -> bool:
    return {k: v for k, v in replay_json(a).items() if k not in HOW} == \
        {k: v for k, v in replay_json(b).items() if k not in HOW}


def topic_names(state) -> list[str]:
    return sorted(t["name"] for t in state.image.topics.values())


def created(name: str, n: int) -> list[dict]:
    return [rec("TOPIC_RECORD", name=name, topicId=uuid(n)), partition(n, 0, [1])]


def write_log(root, batches):
    """`__cluster_metadata-0/0.log`: each item a batch, a list of records (JSON records packed, or
    Record objects written as they are), a minute apart."""
    part = root / PART
    part.mkdir(parents=True)
    out, offset = [], 0
    for i, records in enumerate(batches):
        made = [r if isinstance(r, Record) else Record(value=pack(r)) for r in records]
        for r in made:
            r.timestamp = T0 + i * MINUTE if r.timestamp is None else r.timestamp
        out.append(write_batch(made, base_offset=offset, partition_leader_epoch=3))
        offset += len(made)
    (part / f"{0:020d}.log").write_bytes(b"".join(out))
    return open_metadata_log(root)


# item 10: a magic 0/1 entry in the metadata log

def test_a_legacy_entry_in_the_metadata_log_stops_the_replay_there_saying_so(controller, tmp_path):
    copy = copy_of(controller, tmp_path)
    seg = copy / PART / f"{43:020d}.log"
    at = seg.stat().st_size
    with open(seg, "ab") as f:
        f.write(write_batch([Record(value=b"x", timestamp=T0)], magic=1, base_offset=54))
    state, stopped = replay(open_metadata_log(copy))
    assert state.offset == 53 and f"{seg}: byte {at}" in stopped and "magic 1" in stopped
    assert same_state(state, replay(open_metadata_log(controller))[0])
    for args in ([], ["--history", "orders-0"], ["--json"]):
        run = cli("metadata", str(copy), *args)
        assert run.returncode == 1 and f"byte {at}" in run.stderr and "Traceback" not in run.stderr, args


def test_the_records_table_reads_past_a_legacy_entry_as_an_error_row(controller, tmp_path):
    from pyspark.sql.datasource import InputPartition

    from kafkacodec.pipeline.cluster_metadata import RecordsReader

    copy = copy_of(controller, tmp_path)
    seg = copy / PART / f"{43:020d}.log"
    data = seg.read_bytes()
    legacy = write_batch([Record(value=b"x", timestamp=T0)], magic=0, base_offset=53)
    seg.write_bytes(data + legacy)
    read = RecordsReader(str(copy)).read(InputPartition((str(seg), None)))
    rows = [row for batch in read for row in batch.to_pylist()]
    errors = [r for r in rows if r["error"] is not None]
    assert len(errors) == 1 and f"byte {len(data)}" in errors[0]["error"] and "magic 0" in errors[0]["error"]
    assert [r["offset"] for r in rows if r["error"] is None] == list(range(43, 54))


# item 2: a .checkpoint without its footer

def header_batch_only(path):
    data = path.read_bytes()
    return data[:batch_positions(data)[1]]


@pytest.mark.parametrize("cut", ["empty", "after the header batch", "before the footer batch"])
def test_a_snapshot_without_its_footer_is_passed_over_for_the_log(controller, tmp_path, cut):
    copy = copy_of(controller, tmp_path)
    snap = copy / PART / SNAPSHOT
    data = snap.read_bytes()
    snap.write_bytes({"empty": b"", "after the header batch": header_batch_only(snap),
                      "before the footer batch": data[:batch_positions(data)[-1]]}[cut])
    state, stopped = replay(open_metadata_log(copy))
    assert stopped is None and state.snapshot is None
    assert len(state.image.brokers) == 4 and topic_names(state) == ["orders", "payments"]
    assert same_state(state, replay(open_metadata_log(controller))[0])
    assert any(str(snap) in n and "SnapshotFooter" in n for n in state.notes)
    run = cli("metadata", str(copy))
    assert run.returncode == 0 and "brokers: 4" in run.stdout and "topics: 2" in run.stdout
    assert str(snap) in run.stderr and "SnapshotFooter" in run.stderr


def test_a_snapshot_without_its_footer_is_no_start_for_a_history_either(controller, tmp_path):
    copy = copy_of(controller, tmp_path)
    snap = copy / PART / SNAPSHOT
    snap.write_bytes(header_batch_only(snap))
    for f in (copy / PART).glob(f"{0:020d}.*"):
        f.unlink()  # the snapshot was the only way to the state before offset 43
    with pytest.raises(MetadataLogProblem, match="SnapshotFooter"):
        list(history(open_metadata_log(copy), subject("orders-0")))
    with pytest.raises(MetadataLogProblem, match="SnapshotFooter.*offsets 0 to 42 are missing"):
        replay(open_metadata_log(copy))


def test_a_snapshot_whose_first_record_is_not_its_header_is_passed_over(controller, tmp_path):
    copy = copy_of(controller, tmp_path)
    snap = copy / PART / SNAPSHOT
    data = snap.read_bytes()
    snap.write_bytes(data[batch_positions(data)[1]:])  # the header batch gone, the rest whole
    state, stopped = replay(open_metadata_log(copy))
    assert stopped is None and state.snapshot is None
    assert any("not a control batch" in n or "snapshot header" in n for n in state.notes)


# item 4: records Kafka's reader cannot decode

UNKNOWN_TYPE = bytes([1, 99, 0])  # frame version 1, record type 99, version 0


@pytest.mark.parametrize("bad,message", [
    (Record(value=UNKNOWN_TYPE), "Unknown metadata id 99"),
    (Record(value=None), "Missing value in the record when a value was expected"),
    (Record(value=b""), "Got an unexpected empty value in the record"),
    (Record(key=b"k", value=pack(rec("NO_OP_RECORD"))), "Got key in the record when no key was expected"),
    (Record(value=pack(rec("NO_OP_RECORD")), headers=[("h", b"v")]), "Got numHeaders of 1"),
    (Record(value=pack(rec("NO_OP_RECORD")), timestamp=T0 + 7 * MINUTE), "Got timestamp delta of"),
])
def test_a_record_kafka_cannot_decode_stops_the_replay_before_its_batch(tmp_path, bad, message):
    steps = [created("before", 1), [*created("same-batch", 2), bad], created("after", 3)]
    log = write_log(tmp_path, steps)
    state, stopped = replay(log)
    assert topic_names(state) == ["before"] and state.offset == 1  # the state before the bad batch
    seg = log.partition.segments[0].log
    second = batch_positions(seg.read_bytes())[1]
    assert f"{seg}: byte {second}" in stopped and "offset 4" in stopped and message in stopped
    run = cli("metadata", str(tmp_path))
    assert run.returncode == 1 and message in run.stderr and "after offset 1" in run.stderr
    assert "same-batch" not in run.stdout and "after" not in run.stdout.split("topics:")[1]


def test_skipping_undecodable_records_goes_on_and_lists_each(tmp_path):
    steps = [created("before", 1), [*created("same-batch", 2), Record(value=UNKNOWN_TYPE)], created("after", 3)]
    log = write_log(tmp_path, steps)
    state, stopped = replay(log, skip_undecodable=True)
    assert stopped is None and topic_names(state) == ["after", "before", "same-batch"]
    assert [offset for offset, _ in state.skipped] == [4] and "Unknown metadata id 99" in state.skipped[0][1]
    run = cli("metadata", str(tmp_path), "--skip-undecodable")
    assert run.returncode == 0 and f"offset 4: {state.skipped[0][1]}" in run.stdout
    assert "skipped" in run.stderr
    shown = json.loads(cli("metadata", str(tmp_path), "--skip-undecodable", "--json").stdout)
    assert shown["skipped"] == [{"offset": 4, "problem": state.skipped[0][1]}]


def test_a_history_stops_at_an_undecodable_batch_unless_told_to_skip_it(tmp_path):
    steps = [created("t", 1), [Record(value=UNKNOWN_TYPE)], [rec("PARTITION_CHANGE_RECORD", partitionId=0,
                                                                  topicId=uuid(1), isr=[])]]
    write_log(tmp_path, steps)
    run = cli("metadata", str(tmp_path), "--history", "t-0")
    assert run.returncode == 1 and "Unknown metadata id 99" in run.stderr and "created" in run.stdout
    run = cli("metadata", str(tmp_path), "--history", "t-0", "--skip-undecodable")
    assert run.returncode == 0 and "isr [1] -> []" in run.stdout


# item 4: metadata transactions as MetadataBatchLoader takes them

BEGIN, END = rec("BEGIN_TRANSACTION_RECORD", name="t"), rec("END_TRANSACTION_RECORD")
ABORT = rec("ABORT_TRANSACTION_RECORD", reason="x")


def test_a_nested_begin_is_a_fault_and_both_transactions_take_effect_at_the_end(tmp_path):
    steps = [[BEGIN, *created("first", 1)], [BEGIN, *created("second", 2)], [END]]
    state, stopped = replay(write_log(tmp_path, steps))
    assert stopped is None and topic_names(state) == ["first", "second"]
    assert state.problems == [(3, "Encountered BeginTransactionRecord while already in a transaction")]
    inside = replay(open_metadata_log(tmp_path), Point(offset=5))[0]
    assert topic_names(inside) == []


@pytest.mark.parametrize("marker,message", [
    (END, "Encountered EndTransactionRecord without having seen a BeginTransactionRecord"),
    (ABORT, "Encountered AbortTransactionRecord without having seen a BeginTransactionRecord"),
])
def test_an_end_or_abort_without_begin_is_listed_as_refused(tmp_path, marker, message):
    state, stopped = replay(write_log(tmp_path, [created("t", 1), [marker], created("u", 2)]))
    assert stopped is None and state.problems == [(2, message)] and topic_names(state) == ["t", "u"]
    run = cli("metadata", str(tmp_path))
    assert f"offset 2: {message}" in run.stdout


def test_a_transaction_open_at_the_end_is_said_to_be_left_out(tmp_path):
    state, stopped = replay(write_log(tmp_path, [created("t", 1), [BEGIN, *created("open", 2)]]))
    assert stopped is None and topic_names(state) == ["t"]
    said = state.open_transaction()
    assert "offset 2" in said and "2 record(s)" in said and "open" in said
    run = cli("metadata", str(tmp_path))
    assert run.returncode == 0 and "transaction begun at offset 2" in run.stderr
    assert json.loads(cli("metadata", str(tmp_path), "--json").stdout)["openTransaction"] == \
        {"beganAt": 2, "records": 2}


# item 4: offsets that go back, points past the end

def test_a_batch_whose_offsets_go_back_stops_the_replay_as_verify_fails(controller, tmp_path):
    from tests.support.damage import with_valid_crc

    copy = copy_of(controller, tmp_path)
    seg = copy / PART / f"{43:020d}.log"
    data = seg.read_bytes()
    last = batch_positions(data)[-1]
    batch = bytearray(data[last:])
    batch[0:8] = (44).to_bytes(8, "big")
    seg.write_bytes(data[:last] + with_valid_crc(bytes(batch)))
    state, stopped = replay(open_metadata_log(copy))
    assert state.offset == 52 and f"{seg}: byte {last}" in stopped and "offset 44" in stopped
    run = cli("metadata", str(copy))
    assert run.returncode == 1 and f"byte {last}" in run.stderr
    assert cli("verify", str(copy / PART)).returncode == 1


def test_an_offset_past_the_logs_end_is_said(controller):
    state, stopped = replay(open_metadata_log(controller), Point(offset=999))
    assert state.offset == 53 and "999" in stopped and "53" in stopped
    run = cli("metadata", str(controller), "--at-offset", "999")
    assert run.returncode == 1 and "__cluster_metadata at offset 53" in run.stdout and "999" in run.stderr
    assert cli("metadata", str(controller), "--at-offset", "53").returncode == 0
