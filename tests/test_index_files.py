"""Index files are read in bounded chunks up to their zero-filled tail, and refused (a typed error
naming the file and the byte) when they hold more entries than their segment can explain or a
size that is not a whole number of entries. Producer snapshots and .txnindex files are
size-checked before they are read."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkacodec.runtime.errors import DecodeError, InvalidValueError, LimitExceededError
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.storage import index, producers, txnindex

slots = st.lists(st.tuples(st.integers(0, 2 ** 31 - 1), st.integers(0, 2 ** 31 - 1)), max_size=40)


@given(slots, st.integers(0, 30), st.integers(0, 2 ** 40))
def test_streaming_readers_give_what_the_whole_bytes_give(tmp_path_factory, entries, tail, base):
    path = tmp_path_factory.mktemp("i") / "x.index"
    data = b"".join(r.to_bytes(4, "big") + p.to_bytes(4, "big") for r, p in entries) + bytes(8 * tail)
    path.write_bytes(data)
    want = index.read_offset_index(data, base)
    assert list(index.iter_offset_index(path, base, len(want))) == want
    times = b"".join((p * 7).to_bytes(8, "big") + r.to_bytes(4, "big") for r, p in entries) + bytes(12 * tail)
    path.write_bytes(times)
    want = index.read_time_index(times, base)
    assert list(index.iter_time_index(path, base, len(want))) == want


def test_chunks_end_where_the_entries_do(tmp_path, monkeypatch):
    monkeypatch.setattr(index, "CHUNK_ENTRIES", 3)
    entries = [index.OffsetEntry(100 + i, 4096 * (i + 1)) for i in range(10)]
    path = tmp_path / "00000000000000000100.index"
    for tail in (0, 1, 2, 3, 7):
        path.write_bytes(index.encode_offset_index(entries, 100) + bytes(8 * tail))
        assert list(index.iter_offset_index(path, 100, 10)) == entries
        with pytest.raises(InvalidValueError) as err:  # one live entry more than the segment explains
            list(index.iter_offset_index(path, 100, 9))
        assert err.value.file == str(path) and err.value.position == 9 * 8
        assert f"{path}: byte 72: " in str(err.value)


def test_sizes_that_are_not_whole_entries_name_the_file_and_byte(tmp_path):
    path = tmp_path / "00000000000000000000.timeindex"
    path.write_bytes(bytes(12 * 3 + 5))
    with pytest.raises(InvalidValueError) as err:
        list(index.iter_time_index(path, 0, 100))
    assert err.value.file == str(path) and err.value.position == 36 and "not a multiple of 12" in str(err.value)


def test_max_entries_is_one_per_smallest_batch():
    assert index.max_entries(0) == 1 and index.max_entries(25) == 1 and index.max_entries(26) == 2
    assert index.max_entries(26 * 1000 + 25) == 1001


def test_txnindex_and_snapshot_sizes_are_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "00000000000000000000.txnindex"
    entries = [txnindex.AbortedTxn(7, i, i + 1, i + 2) for i in range(0, 40, 2)]
    path.write_bytes(txnindex.encode_txn_index(entries) + b"\x00" * 5)  # and a torn final entry
    assert txnindex.read_txn_index_file(path, 26 * 19) == entries
    with pytest.raises(InvalidValueError) as err:
        txnindex.read_txn_index_file(path, 26 * 18)  # a segment of 19 batches at most
    assert err.value.file == str(path) and "more than 19 entries" in str(err.value)
    monkeypatch.setattr(txnindex, "CHUNK_ENTRIES", 3)
    assert list(txnindex.iter_txn_index(path, None)) == entries
    bad = bytearray(path.read_bytes())
    bad[34 * 7] = 1  # the eighth entry's version
    path.write_bytes(bytes(bad))
    with pytest.raises(DecodeError) as err:
        list(txnindex.iter_txn_index(path, None))
    assert err.value.file == str(path) and err.value.position == 34 * 7
    snap = tmp_path / "00000000000000000005.snapshot"
    state = producers.ProducerState({i: producers.ProducerEntry(i, 0, 1, 2) for i in range(4)}, 5)
    snap.write_bytes(state.to_snapshot())
    assert producers.read_snapshot(snap) == snap.read_bytes()
    monkeypatch.setattr(LIMITS, "max_items", 3)
    with pytest.raises(LimitExceededError) as err:  # larger than 3 producers can take: not read
        producers.read_snapshot(snap)
    assert err.value.file == str(snap)
