"""Transaction indexes and producer snapshots: what the writer records for the sample's
interleaved transactions equals a reference computed here from the records alone, the files
read back as Kafka reads them, and damage to them is caught and repaired."""
import struct
import subprocess
import sys

import crc32c
import pytest

from kafkacodec.runtime.errors import ChecksumError, InvalidValueError
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.state.producers import ProducerState
from kafkacodec.storage.segments.reader import partition_batches
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.indexes.txnindex import AbortedTxn, encode_txn_index, read_txn_index
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter


@pytest.fixture(scope="module")
def payments(tmp_path_factory):
    root = tmp_path_factory.mktemp("sample")
    write_sample(root)
    return logdir.open_partition(root / "payments-0")


def reference_walk(part):
    """Replay the partition from its records: per producer the open transaction's first offset,
    and at each ABORT marker the entry Kafka's index should hold, keyed by the marker's segment.
    Also the producers' state before every offset a snapshot names."""
    open_txn, aborted, states = {}, {}, {}
    last = {}
    wanted = set(part.snapshots)
    for seg, batch in partition_batches(part):
        e = batch.entry
        if batch.base_offset in wanted:
            states[batch.base_offset] = {pid: dict(s, txn=open_txn.get(pid)) for pid, s in last.items()}
        if batch.is_legacy or e.producer_id < 0:
            continue
        pid = e.producer_id
        s = last.setdefault(pid, {"epoch": e.producer_epoch, "seq": -1, "offset": -1, "delta": 0})
        if s["epoch"] != e.producer_epoch:
            s.update(epoch=e.producer_epoch, seq=-1, offset=-1, delta=0)
        records = list(batch)
        if e.is_control:
            key, value = records[0].key, records[0].value
            if key[3] == 0 and pid in open_txn:
                others = [f for p, f in open_txn.items() if p != pid]
                aborted.setdefault(seg.base_offset, []).append(
                    (pid, open_txn[pid], e.base_offset, min(others, default=e.base_offset + 1)))
            open_txn.pop(pid, None)
            s.update(ts=records[0].timestamp, coord=struct.unpack(">i", value[2:6])[0])
        else:
            s.update(seq=e.base_sequence + len(records) - 1, offset=records[-1].offset,
                     delta=records[-1].offset - e.base_offset, ts=max(r.timestamp for r in records))
            if e.is_transactional:
                open_txn.setdefault(pid, e.base_offset)
    end = max(part.snapshots)
    states.setdefault(end, {pid: dict(s, txn=open_txn.get(pid)) for pid, s in last.items()})
    return aborted, states


def test_txn_indexes_hold_every_abort_in_the_marker_segment(payments):
    aborted, _ = reference_walk(payments)
    assert sum(len(v) for v in aborted.values()) == 2
    for seg in payments.segments:
        on_disk = read_txn_index(seg.txn_index.read_bytes()) if seg.txn_index else []
        assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in on_disk] \
            == aborted.get(seg.base_offset, [])
    # one abort happened while another producer's transaction was open: its LSO lags behind it
    assert any(lso < first for v in aborted.values() for _, first, _, lso in v)


def test_snapshots_hold_the_producer_state_at_their_offsets(payments):
    _, states = reference_walk(payments)
    assert set(states) == set(payments.snapshots)
    for offset, path in payments.snapshots.items():
        got = ProducerState.from_snapshot(path.read_bytes(), offset).producers
        expected = states[offset]
        assert set(got) == set(expected), offset
        for pid, p in got.items():
            x = expected[pid]
            assert (p.epoch, p.last_sequence, p.last_offset, p.offset_delta, p.last_timestamp, p.txn_first_offset) \
                == (x["epoch"], x["seq"], x["offset"], x["delta"], x["ts"], x["txn"]), (offset, pid)
            assert p.coordinator_epoch == x.get("coord", -1)
    final = ProducerState.from_snapshot(payments.snapshots[max(payments.snapshots)].read_bytes(), 0)
    assert any(p.txn_first_offset is not None for p in final.producers.values())  # a transaction left open


def test_snapshot_bytes_follow_kafkas_layout(payments):
    data = payments.snapshots[max(payments.snapshots)].read_bytes()
    version, crc, count = struct.unpack(">hIi", data[:10])
    assert version == 1 and crc == crc32c.crc32c(data[6:]) and len(data) == 10 + 46 * count
    with pytest.raises(ChecksumError):
        ProducerState.from_snapshot(data[:20] + bytes([data[20] ^ 1]) + data[21:], 0)
    with pytest.raises(InvalidValueError):
        ProducerState.from_snapshot(b"\x00\x02" + data[2:], 0)


def test_txn_index_reads_as_kafka_reads_it():
    entries = [AbortedTxn(7, 10, 20, 21), AbortedTxn(8, 15, 30, 16)]
    data = encode_txn_index(entries)
    assert len(data) == 68 and data[:2] == b"\x00\x00"
    assert struct.unpack(">hqqqq", data[34:]) == (0, 8, 15, 30, 16)
    assert read_txn_index(data + data[:20]) == entries  # a torn last entry is ignored
    with pytest.raises(InvalidValueError, match="version 1"):
        read_txn_index(data[:34] + b"\x01" + data[35:])


def test_dump_prints_kafkas_lines(payments):
    txn = next(s.txn_index for s in payments.segments if s.txn_index)
    snap = payments.snapshots[max(payments.snapshots)]
    out = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", str(txn), str(snap)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == f"Dumping {txn}"
    t = read_txn_index(txn.read_bytes())[0]
    assert out[1] == (f"version: 0 producerId: {t.producer_id} firstOffset: {t.first_offset} "
                      f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}")
    lines = out[out.index(f"Dumping {snap}") + 1:]
    assert any("currentTxnFirstOffset: OptionalLong[" in line for line in lines)
    assert all(line.startswith("producerId: ") and " lastTimestamp: " in line for line in lines)


def test_dump_of_a_producer_without_batch_metadata_ends_with_a_space(tmp_path):
    # a marker of a new epoch forgets the batches of the old one, as Kafka's entry does
    path = tmp_path / "00000000000000000005.snapshot"
    state = ProducerState()
    with PartitionWriter(tmp_path / "t-0") as w:
        w.append([{"key": b"k", "value": b"v", "timestamp": 1}], producer_id=9, producer_epoch=0,
                 base_sequence=0, is_transactional=True)
        w.append([{"key": b"\0\0\0\0", "value": b"\0\0\0\0\0\3", "timestamp": 2}], producer_id=9,
                 producer_epoch=1, is_transactional=True, is_control=True)
        state = w.producers
    path.write_bytes(state.to_snapshot())
    out = subprocess.run([sys.executable, "-m", "kafkacodec", "dump", str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[1] == ("producerId: 9 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: "
                      "OptionalLong.empty lastTimestamp: 2 ")
    # the aborted transaction of epoch 0 is indexed; LSO is the offset after the marker
    assert read_txn_index((tmp_path / "t-0" / "00000000000000000000.txnindex").read_bytes()) \
        == [AbortedTxn(9, 0, 1, 2)]


def test_reopened_writer_resumes_from_its_snapshot(tmp_path, payments):
    """Writing the payments partition in two sittings gives the same log and transaction index
    as one: the second writer takes the open transactions from the snapshot written at close."""
    from kafkacodec.storage.samples import broker

    class Split:
        def __init__(self, path):
            self.path, self.calls, self.w = path, 0, PartitionWriter(path, segment_bytes=2048)

        def append(self, *a, **k):
            self.calls += 1
            if self.calls == 11:  # inside two open transactions
                self.w.close()
                self.w = PartitionWriter(self.path, segment_bytes=2048)
            return self.w.append(*a, **k)

    split = Split(tmp_path / "payments-0")
    broker._payments_0(split)
    split.w.close()
    again = logdir.open_partition(tmp_path / "payments-0")
    for a, b in zip(again.segments, payments.segments, strict=True):
        assert a.log.read_bytes() == b.log.read_bytes()
        assert (a.txn_index and a.txn_index.read_bytes()) == (b.txn_index and b.txn_index.read_bytes())


def test_verify_and_reindex_catch_and_mend_a_lost_abort(tmp_path, payments):
    import shutil
    part = tmp_path / "payments-0"
    shutil.copytree(payments.path, part)
    seg = next(s for s in logdir.open_partition(part).segments if s.txn_index)
    good = seg.txn_index.read_bytes()
    seg.txn_index.write_bytes(good[34:])  # the first abort forgotten: aborted records would show
    problems = [p for r in verify_partition(logdir.open_partition(part)) for p in r.problems]
    assert len(problems) == 1 and "lacks the aborted transaction" in problems[0]
    run = [sys.executable, "-m", "kafkacodec", "reindex"]
    assert subprocess.run(run + ["--check", str(seg.log)], capture_output=True).returncode == 1
    subprocess.run(run + [str(seg.log)], check=True, capture_output=True)
    assert seg.txn_index.read_bytes() == good
    # without the snapshot before the segment, the state comes from replaying the whole log
    for p in part.glob("*.snapshot"):
        p.unlink()
    seg.txn_index.write_bytes(b"")
    subprocess.run(run + [str(seg.log)], check=True, capture_output=True)
    assert seg.txn_index.read_bytes() == good


def test_writer_refuses_a_malformed_marker(tmp_path):
    with PartitionWriter(tmp_path / "t-0") as w:
        with pytest.raises(InvalidValueError, match="at least 4"):
            w.append([{"key": b"\0", "value": b"", "timestamp": 1}], producer_id=1, producer_epoch=0,
                     is_transactional=True, is_control=True)
        assert w.next_offset == 0
    assert (tmp_path / "t-0" / "00000000000000000000.log").stat().st_size == 0
