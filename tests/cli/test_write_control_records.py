"""`write` and control records, judged by what a broker's recovery does with the segment.

`kafka_recovery` below is Kafka's LogSegment.recover as far as transactions go, written from its
source (storage LogSegment.recover/updateProducerState, ProducerAppendInfo.append,
ProducerStateManager.lastStableOffset, clients ControlRecordType.parseTypeId and
EndTransactionMarker.deserializeValue): the first record of a producer's control batch is read
as an end-transaction marker; a key shorter than 4 bytes or of a negative version, a value
shorter than 6 bytes or of a negative version are InvalidRecordExceptions, which end recovery's
reading after that batch (its bytes were already counted valid): the marker's batch stays without
ending its transaction, and the rest of the segment is cut; a null key (NullPointerException) or a record of another type (IllegalArgumentException)
are exceptions recovery does not catch, which stop the broker. An aborted transaction that a
marker ends goes to the transaction index with the last stable offset of that moment.

`write` used to take all of these (a `control` object alone was written with a null key), and
`write --index` wrote no `.txnindex`: a broker that finds the offset index does not recover the
segment, so read_committed consumers were handed the aborted records."""
import base64
import json
import subprocess
import sys

import pytest

from kafkacodec import read_batches, write_batch
from kafkacodec.storage.indexes.txnindex import read_txn_index


class BrokerStops(Exception):
    """An exception LogSegment.recover does not catch."""


def kafka_recovery(data: bytes, open_txns=None, refused=None):
    """(valid bytes, aborted transactions as (producer, first offset, marker offset, last stable
    offset)) of a segment recovered from the producer state `open_txns` ({producer: first offset});
    `refused` gets the producers whose marker recovery refused, their transactions left open."""
    ongoing = dict(open_txns or {})
    aborted, valid = [], 0
    for batch in read_batches(data):
        e = batch.entry
        if batch.magic >= 2 and e.producer_id >= 0:
            if e.is_control:
                records = list(batch)
                if records:
                    try:
                        kind = _marker_type(records[0])
                    except ValueError:  # InvalidRecordException: this batch counted, the rest cut
                        if refused is not None:
                            refused[e.producer_id] = ongoing.get(e.producer_id)
                        return batch.position + batch.size, aborted
                    first = ongoing.pop(e.producer_id, None)
                    if first is not None and kind == 0:
                        others = [f for p, f in ongoing.items() if p != e.producer_id]
                        aborted.append((e.producer_id, first, e.base_offset, min(others, default=e.base_offset + 1)))
            elif e.is_transactional:
                ongoing.setdefault(e.producer_id, e.base_offset)
        valid = batch.position + batch.size
    return valid, aborted


def _marker_type(record) -> int:
    key, value = record.key, record.value
    if key is None:
        raise BrokerStops("NullPointerException: a null control record key")
    if len(key) < 4 or int.from_bytes(key[:2], "big", signed=True) < 0:
        raise ValueError("invalid control record key")
    kind = int.from_bytes(key[2:4], "big", signed=True)
    if kind not in (0, 1):  # 0 ABORT, 1 COMMIT
        raise BrokerStops(f"IllegalArgumentException: control type {kind} is no transaction marker")
    if value is None or len(value) < 6 or int.from_bytes(value[:2], "big", signed=True) < 0:
        raise ValueError("invalid end transaction marker value")
    return kind


def kc(*args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, input=stdin)


def b64(data):
    return None if data is None else base64.b64encode(data).decode()


PRODUCER = {"producerId": 7, "producerEpoch": 2}
DATA = {**PRODUCER, "isTransactional": True, "baseSequence": 0, "records": [{"value": b64(b"in a transaction")}]}


def marker(record, **batch):
    return {**PRODUCER, "isTransactional": True, "isControl": True, "records": [record], **batch}


def lines(*objs):
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


ABORT_KEY, MARKER_VALUE = b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x04"
REFUSED = [  # (the control record, the field named, what Kafka's recovery does with it)
    ({"key": b64(b"\x00\x00"), "value": b64(MARKER_VALUE)}, "records[0].key", "cut"),
    ({"key": b64(b"\xff\xff\x00\x00"), "value": b64(MARKER_VALUE)}, "records[0].key", "cut"),
    ({"key": b64(ABORT_KEY), "value": b64(b"\x00\x00\x00")}, "records[0].value", "cut"),
    ({"key": b64(ABORT_KEY), "value": b64(b"\xff\xff\x00\x00\x00\x04")}, "records[0].value", "cut"),
    ({"key": b64(ABORT_KEY), "value": None}, "records[0].value", "cut"),
    ({"key": None, "value": b64(MARKER_VALUE)}, "records[0].key", "stops"),
    ({"key": b64(b"\x00\x00\x00\x02"), "value": b64(b"\x00\x00")}, "records[0].key", "stops"),  # LEADER_CHANGE
    # written with a null key before; now its key is built, but no coordinator epoch gives its value
    ({"control": {"type": "ABORT"}}, "records[0].value", "stops"),
]


@pytest.mark.parametrize("record, field, kafka", REFUSED)
def test_a_control_record_kafkas_recovery_rejects_is_refused_by_line_and_field(tmp_path, record, field, kafka):
    # what the bytes would do to a broker, written as they are by the codec
    raw = dict(record)
    key = raw.get("key") if "key" in raw else None
    value = raw.get("value") if "value" in raw else None
    data = write_batch([{"value": b"in a transaction"}], producer_id=7, producer_epoch=2, base_sequence=0,
                       is_transactional=True) + \
        write_batch([{"key": key and base64.b64decode(key), "value": value and base64.b64decode(value)}],
                    base_offset=1, producer_id=7, producer_epoch=2, is_transactional=True, is_control=True)
    if kafka == "stops":
        with pytest.raises(BrokerStops):
            kafka_recovery(data)
    else:  # the marker's batch stays, but its transaction is never ended and what follows is cut
        refused = {}
        assert kafka_recovery(data + write_batch([{"value": b"after"}], base_offset=2), refused=refused)[0] == len(data)
        assert refused == {7: 0}
    out = tmp_path / "00000000000000000000.log"
    run = kc("write", "--index", out, stdin=lines(DATA, marker(record)))
    assert run.returncode == 2 and not out.exists(), run.stderr
    assert run.stderr.decode().startswith(f"error: line 2: {field}: "), run.stderr


def test_a_marker_given_as_dump_describes_it_is_built_as_kafka_writes_it(tmp_path):
    out = tmp_path / "00000000000000000000.log"
    given = marker({"control": {"type": "ABORT", "coordinatorEpoch": 4}})
    run = kc("write", "--index", out, stdin=lines(DATA, given))
    assert run.returncode == 0, run.stderr
    data = out.read_bytes()
    assert kafka_recovery(data) == (len(data), [(7, 0, 1, 2)])
    (_, control) = read_batches(data)
    (record,) = list(control)
    assert (record.key, record.value) == (ABORT_KEY, MARKER_VALUE)  # version 0, ABORT; version 0, epoch 4
    dumped = json.loads(kc("dump", "--json", out).stdout.splitlines()[1])
    assert dumped["records"][0]["control"] == {"type": "ABORT", "version": 0, "coordinatorEpoch": 4}
    # the control object and the bytes it describes agree, or the line is refused
    assert kc("write", "--force", out, stdin=lines(DATA, {**dumped, "file": None})).returncode == 0
    contradicted = marker({"control": {"type": "COMMIT", "coordinatorEpoch": 4}, "key": b64(ABORT_KEY),
                           "value": b64(MARKER_VALUE)})
    run = kc("write", "--force", out, stdin=lines(DATA, contradicted))
    assert run.returncode == 2 and b"records[0].control.type: COMMIT, but the key's type is 0 (ABORT)" in run.stderr


def test_control_outside_a_control_batch_is_refused(tmp_path):
    out = tmp_path / "00000000000000000000.log"
    run = kc("write", out, stdin=lines({"isControl": False, "records": [{"control": {"type": "COMMIT"}}]}))
    assert run.returncode == 2 and b"records[0].control: given, but the batch is not a control batch" in run.stderr
    # a control object alone makes a control batch
    run = kc("write", out, stdin=lines({"records": [{"control": {"type": "COMMIT", "coordinatorEpoch": 1}}]}))
    assert run.returncode == 0, run.stderr
    assert next(read_batches(out.read_bytes())).entry.is_control


def test_write_index_writes_the_txnindex_kafkas_recovery_builds(tmp_path):
    """Producer 7 aborts while producer 9's transaction, begun before, is open: the entry's last
    stable offset is 9's first offset."""
    other = {"producerId": 9, "producerEpoch": 0, "isTransactional": True, "baseSequence": 0,
             "records": [{"value": b64(b"open")}]}
    objs = [other, DATA, marker({"control": {"type": "ABORT", "coordinatorEpoch": 4}}),
            {"records": [{"value": b64(b"after")}]}]
    out = tmp_path / "t-0" / "00000000000000000000.log"
    out.parent.mkdir()
    run = kc("write", "--index", out, stdin=lines(*objs))
    assert run.returncode == 0, run.stderr
    data = out.read_bytes()
    _, expected = kafka_recovery(data)
    assert expected == [(7, 1, 2, 0)]
    txn = out.with_suffix(".txnindex")
    assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
            for t in read_txn_index(txn.read_bytes())] == expected
    check = kc("reindex", "--check", out.parent)
    assert check.returncode == 0, check.stderr
    # a commit leaves no entry, and no file, as Kafka creates it at the first abort
    commit = tmp_path / "c-0" / "00000000000000000000.log"
    commit.parent.mkdir()
    assert kc("write", "--index", commit,
              stdin=lines(DATA, marker({"control": {"type": "COMMIT", "coordinatorEpoch": 4}}))).returncode == 0
    assert not commit.with_suffix(".txnindex").exists()


def test_a_transaction_begun_in_the_segment_before_is_found_there(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    first = part / "00000000000000000000.log"
    assert kc("write", "--index", first, stdin=lines({"records": [{}]}, DATA)).returncode == 0
    second = part / "00000000000000000002.log"
    run = kc("write", "--index", second, stdin=lines(marker({"control": {"type": "ABORT", "coordinatorEpoch": 4}},
                                                             baseOffset=2)))
    assert run.returncode == 0, run.stderr
    _, expected = kafka_recovery(second.read_bytes(), open_txns={7: 1})
    assert expected == [(7, 1, 2, 3)]
    assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
            for t in read_txn_index(second.with_suffix(".txnindex").read_bytes())] == expected
    verify = kc("verify", part)
    assert verify.returncode == 0, verify.stdout + verify.stderr
