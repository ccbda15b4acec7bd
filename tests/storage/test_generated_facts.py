"""The hand-written log layer takes header places, codec and timestamp-type numbers from the
generated classes (LAYOUT, enums) instead of stating them again: the constants it derives equal
the schemas' facts, no module listed here reads a header field at an offset of its own, and the
readers that use the derived places read real batches as the generated readers do."""
import ast
import zlib
from pathlib import Path

import crc32c
import pytest
from kafka.record.default_records import DefaultRecordBase
from kafka.record.legacy_records import LegacyRecordBase

from kafkacodec.codec import attribute_bits as bits
from kafkacodec.codec import records
from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.offset_index import OffsetIndex
from kafkacodec.generated.time_index import TimeIndex
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.generated.transaction_index import TransactionIndex
from kafkacodec.generated.transaction_log import TransactionLog
from kafkacodec.storage.dump_log import decoders, index_listing, tool
from kafkacodec.storage.dump_log.common import Options, Reports
from kafkacodec.storage.indexes import index
from kafkacodec.codec import places
from kafkacodec.storage.segments import bigbatch, columnar, resync, scan
from tests.support import ROOT

V2_LAYOUT = RecordBatch.LAYOUT
ENTRY_LAYOUT = LegacyLogEntry.LAYOUT
MESSAGE_LAYOUT = LegacyLogEntry.LegacyMessage.LAYOUT
# the modules that read raw header bytes with places derived from the LAYOUTs
MODULES = ["codec/records.py", "codec/attribute_bits.py", "codec/places.py",
           *(f"storage/{layer}/{p.name}" for layer in ("segments", "dump_log")
             for p in sorted((ROOT / "storage" / layer).glob("*.py"))),
           "storage/audit/verify.py", "storage/indexes/index.py",
           *(f"pipeline/{name}.py" for name in ("decode", "headers", "tables", "files", "sink_offsets",
                                                 "cluster_metadata")),
           "storage/exchange/jsonl.py", "storage/change/compaction.py", "storage/change/retention.py"]


def _end(layout):
    return max(at + width for at, width in layout.values())


def test_places_are_the_layouts():
    entry_end = _end(ENTRY_LAYOUT)
    assert places.SIZE_AT == V2_LAYOUT["batch_length"][0] == ENTRY_LAYOUT["message_size"][0]
    assert places.LOG_OVERHEAD == sum(V2_LAYOUT["batch_length"]) == entry_end
    assert places.MAGIC_AT == V2_LAYOUT["magic"][0] == entry_end + MESSAGE_LAYOUT["magic"][0]
    assert places.HEADER_SIZE_UP_TO_MAGIC == sum(V2_LAYOUT["magic"])
    assert (places.V2_CRC_AT, places.V2_CRC_FROM) == (V2_LAYOUT["crc"][0], V2_LAYOUT["attributes"][0])
    assert places.V2_HEADER == _end(V2_LAYOUT) == sum(V2_LAYOUT["records_count"])
    assert places.V2_MIN_SIZE == _end(V2_LAYOUT) - sum(V2_LAYOUT["batch_length"])
    assert places.LEGACY_CRC_AT == entry_end + MESSAGE_LAYOUT["crc"][0]
    assert places.LEGACY_CRC_FROM == entry_end + MESSAGE_LAYOUT["magic"][0]
    assert places.LEGACY_HEADER == entry_end + _end(MESSAGE_LAYOUT)
    assert places.LEGACY_TIMESTAMP == {"timestamp": (places.LEGACY_HEADER, 8)}  # magic 1's s8, after the LAYOUT
    # the smallest message of each magic, as kafka-python's record code states them
    from kafka.record.legacy_records import LegacyRecordBase
    assert places.LEGACY_MIN_MESSAGE == LegacyRecordBase.RECORD_OVERHEAD_V0
    assert places.LEGACY_MIN_MESSAGE + places.LEGACY_TIMESTAMP["timestamp"][1] == LegacyRecordBase.RECORD_OVERHEAD_V1
    # the modules that name these places hold the same values, not copies of their own
    assert records.MAGIC_AT == columnar.MAGIC_AT == places.MAGIC_AT
    assert columnar.V2_HEADER == tool.V2_HEADER == places.V2_HEADER
    assert scan.LOG_OVERHEAD == columnar.LOG_OVERHEAD == resync.LOG_OVERHEAD == places.LOG_OVERHEAD
    assert scan.HEADER_SIZE_UP_TO_MAGIC == places.HEADER_SIZE_UP_TO_MAGIC
    assert (resync.V2_MIN_SIZE, resync.V2_CRC_FROM, resync.LEGACY_CRC_FROM) == (
        places.V2_MIN_SIZE, places.V2_CRC_FROM, places.LEGACY_CRC_FROM)
    assert tool.TXN_ENTRY == _end(TransactionIndex.AbortedTxn.LAYOUT)
    assert (index.OFFSET_ENTRY, index.TIME_ENTRY) == (_end(OffsetIndex.Entry.LAYOUT), _end(TimeIndex.Entry.LAYOUT))
    assert index.OFFSET_ENTRY == len(OffsetIndex.Entry(relative_offset=0, position=0).to_bytes())
    assert index.TIME_ENTRY == len(TimeIndex.Entry(timestamp=0, relative_offset=0).to_bytes())


def test_layout_struct_reads_fields_at_their_places():
    s = places.layout_struct(V2_LAYOUT, {"max_timestamp": "q", "magic": "b", "base_offset": "q"})
    assert s.format == ">q" + "x" * 8 + "b" + "x" * 18 + "q"  # by offset, whatever order they are named in
    assert s.size == sum(V2_LAYOUT["max_timestamp"])
    with pytest.raises(ValueError, match="magic"):  # a code wider than its field
        places.layout_struct(V2_LAYOUT, {"magic": "h"})


def test_codec_and_timestamp_type_numbers_are_the_enums():
    assert records.CODECS == {m.name: m.value for m in RecordBatch.CompressionType}
    assert list(records.CODECS) == ["none", "gzip", "snappy", "lz4", "zstd"]  # the names users give
    assert all(type(v) is int for v in records.CODECS.values())
    assert {m.name: m.value for m in LegacyLogEntry.CompressionType}.items() <= records.CODECS.items()
    assert records.CODEC_NAMES == {m.value: m.name for m in RecordBatch.CompressionType}
    kinds = LegacyLogEntry.TimestampType
    assert records.TIMESTAMP_TYPES == {kinds.no_timestamp.value: "NoTimestampType",
                                       kinds.create_time.value: "CreateTime",
                                       kinds.log_append_time.value: "LogAppendTime"}
    assert all(type(k) is int for k in records.TIMESTAMP_TYPES)
    assert {m.value for m in RecordBatch.TimestampType} <= set(records.TIMESTAMP_TYPES)


def test_attribute_bits_are_kafkas():
    """The masks found by asking the generated classes are Kafka's: kafka-python's for v2 batches
    and legacy messages, and RecordBatch.java's DELETE_HORIZON_FLAG_MASK, which kafka-python lacks."""
    v2, legacy = DefaultRecordBase, LegacyRecordBase
    assert (bits.COMPRESSION, bits.LOG_APPEND_TIME, bits.TRANSACTIONAL, bits.CONTROL) == (
        v2.CODEC_MASK, v2.TIMESTAMP_TYPE_MASK, v2.TRANSACTIONAL_MASK, v2.CONTROL_MASK)
    assert (bits.COMPRESSION, bits.LOG_APPEND_TIME) == (legacy.CODEC_MASK, legacy.TIMESTAMP_TYPE_MASK)
    assert (bits.COMPRESSION, bits.LOG_APPEND_TIME, bits.TRANSACTIONAL, bits.CONTROL, bits.DELETE_HORIZON) == (
        0x07, 0x08, 0x10, 0x20, 0x40)
    assert 1 << bits.TIMESTAMP_TYPE_AT == bits.LOG_APPEND_TIME


def test_attribute_bits_read_real_batches_as_the_generated_readers(sample):
    """On every batch of the sample, the masks applied to the raw attributes give what the
    generated instances give (codec, timestamp type, transactional, control, delete horizon)."""
    seen = set()
    for path in _segments(sample):
        for batch in records.read_batches(path.read_bytes()):
            e = batch.entry.message if batch.is_legacy else batch.entry
            a = e.attributes
            assert a & bits.COMPRESSION == int(e.compression)
            if not batch.is_legacy:
                assert (a >> bits.TIMESTAMP_TYPE_AT) & 1 == int(e.timestamp_type)
                assert (bool(a & bits.TRANSACTIONAL), bool(a & bits.CONTROL), bool(a & bits.DELETE_HORIZON)) == (
                    e.is_transactional, e.is_control, e.has_delete_horizon)
                seen.update(name for name, on in (("transactional", e.is_transactional), ("control", e.is_control),
                                                  ("append", int(e.timestamp_type) == 1)) if on)
            elif e.magic == 1:
                assert (a >> bits.TIMESTAMP_TYPE_AT) & 1 == int(e.timestamp_type)
            seen.add(int(e.compression))
    assert {"transactional", "control", 1, 2, 3, 4} <= seen


def test_kraft_control_types_are_the_enum():
    types = ControlRecord.ControlType
    assert set(decoders.KRAFT_CONTROL_LABELS) == {types.leader_change, types.snapshot_header, types.snapshot_footer,
                                                  types.kraft_version, types.kraft_voters}


def test_transaction_json_has_kafkas_order_from_the_schema():
    """The transaction-log decoder states no fields: Kafka's order of the value's fields, the
    tagged ones among them, is the generated class's."""
    assert not hasattr(decoders, "TXN_FIELDS") and not hasattr(decoders, "TXN_TAGS")
    body = TransactionLog.TransactionLogValueBody
    assert body._field_order[:5] == ("producer_id", "previous_producer_id", "next_producer_id", "producer_epoch",
                                     "next_producer_epoch")
    assert body._tagged == {"previous_producer_id": (0, -1), "next_producer_id": (1, -1), "next_producer_epoch": (3, -1),
                            "client_transaction_version": (2, 0)}


# offsets and ends of the header fields that no hand-written module should spell out; 0, 1, 2
# and 4 are too common to be told apart from other numbers, and 8 too, except in positions
DISTINCTIVE = ({at for at, _ in V2_LAYOUT.values()} | {at + w for at, w in V2_LAYOUT.values()}
               | {_end(ENTRY_LAYOUT) + at for at, _ in MESSAGE_LAYOUT.values()}
               | {_end(ENTRY_LAYOUT) + _end(MESSAGE_LAYOUT)}) - {0, 1, 2, 4, 8}
# each field's (start, end), the slice that reads it from a header's first byte
SPANS = {(at, at + width) for layout in (V2_LAYOUT, ENTRY_LAYOUT) for at, width in layout.values()} | {
    (_end(ENTRY_LAYOUT) + at, _end(ENTRY_LAYOUT) + at + width) for at, width in MESSAGE_LAYOUT.values()}
UNPACKERS = {"unpack_from", "pack_into"}


def _number(node):
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _terms(node):
    """The numbers a position is made of: the node itself, or the terms of a sum or difference."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _terms(node.left) + _terms(node.right)
    return [node] if _number(node) is not None else []


def restated_offsets(source: str) -> list[tuple[int, int]]:
    """(line, number) of each header offset written out: as a position in a subscript (alone, or
    a constant slice that is some field's span), added to or taken from a position, as the offset
    of struct's unpack_from/pack_into, or given alone to a module-level name."""
    found = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            s = node.slice
            if isinstance(s, ast.Slice):
                lo, hi = _number(s.lower), _number(s.upper)
                if lo is not None and (hi is not None or s.upper is None) and \
                        ((lo, hi) in SPANS or (hi is None and lo in DISTINCTIVE)):
                    found.add((s.lower.lineno, lo))
                positions = [b for b in (s.lower, s.upper) if isinstance(b, ast.BinOp)]
            else:
                positions = [s]
            for p in positions:
                found.update((c.lineno, c.value) for c in _terms(p) if c.value in DISTINCTIVE)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _number(side) in DISTINCTIVE | {8} and _number(other) is None:
                    found.add((side.lineno, side.value))
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in UNPACKERS and len(node.args) >= 3:
                found.update((c.lineno, c.value) for c in _terms(node.args[2]) if c.value in DISTINCTIVE | {8})
    for node in tree.body:
        if isinstance(node, ast.Assign):
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found.update((v.lineno, v.value) for v in values if _number(v) in DISTINCTIVE)
    return sorted(found)


def test_the_scan_finds_restated_offsets():
    """The scan below flags the forms these modules once used."""
    old = ("MAGIC_OFFSET = 16\nV2_HEADER = 61\n"
           "def f(buf, pos, b):\n"
           "    size = int.from_bytes(buf[pos + 8:pos + 12], 'big')\n"
           "    crc = struct.unpack_from('>I', b, 17)\n"
           "    raise E('bad', pos + 16)\n")
    assert restated_offsets(old) == [(1, 16), (2, 61), (4, 8), (4, 12), (5, 17), (6, 16)]
    assert restated_offsets("x = y << 8\nz = w[3] + 2\nt = (at >> 12) & 7\nu = v[(v >> 16) & 255]\n"
                            "n = name[21:31]\nm = 16 + 1\n") == []


@pytest.mark.parametrize("module", MODULES)
def test_no_module_restates_a_header_offset(module):
    assert restated_offsets((ROOT / module).read_text()) == []


# the attribute masks, and the words a name given one would hold
MASKS = {bits.COMPRESSION, bits.LOG_APPEND_TIME, bits.TRANSACTIONAL, bits.CONTROL, bits.DELETE_HORIZON}
MASK_WORDS = ("ATTR", "CODEC", "COMPRESSION", "TIMESTAMP", "APPEND", "TRANSACTIONAL", "CONTROL", "HORIZON", "MASK")


def restated_attribute_bits(source: str) -> list[tuple[int, int]]:
    """(line, number) of each attribute bit written out: a mask tested or set (`a & 0x20`,
    `codec | 0x10`, `0x08 if t else 0`), the timestamp type's bit shifted down
    (`(a >> 3) & 1`), or a mask given to a module-level name that says what it is."""
    found = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _number(side) in MASKS:
                    found.add((side.lineno, side.value))
                elif _number(side) == 1 and isinstance(other, ast.BinOp) and isinstance(other.op, ast.RShift) \
                        and _number(other.right) == bits.TIMESTAMP_TYPE_AT:
                    found.add((other.right.lineno, other.right.value))
        elif isinstance(node, ast.IfExp) and _number(node.body) in MASKS and _number(node.orelse) == 0:
            found.add((node.body.lineno, node.body.value))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names = [t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found.update((v.lineno, v.value) for n, v in zip(names, values) if isinstance(n, ast.Name)
                         and _number(v) in MASKS and any(w in n.id.upper() for w in MASK_WORDS))
    return sorted(found)


def test_the_scan_finds_restated_attribute_bits():
    """The scan below flags the forms these modules once used, and leaves other bit arithmetic alone."""
    old = ("COMPRESSION = 0x07\nLOG_APPEND_TIME = 0x08\n"
           "def f(attrs, codec, t, m):\n"
           "    control = bool(attrs & 0x20)\n"
           "    a = codec | (0x08 if t else 0) | (0x10 if m else 0)\n"
           "    return (attrs >> 3) & 1, 0x40 & attrs\n")
    assert restated_attribute_bits(old) == [(1, 7), (2, 8), (4, 32), (5, 8), (5, 16), (6, 3), (6, 64)]
    assert restated_attribute_bits("x = (b & 0x7f) | (c << 7)\ny = (v >> 1) ^ -(v & 1)\nCHUNK = 16\n"
                                   "z = (n >> 4) & 0x0f\nw = 8 if s else 1\n") == []


@pytest.mark.parametrize("module", MODULES)
def test_no_module_restates_an_attribute_bit(module):
    assert restated_attribute_bits((ROOT / module).read_text()) == []


def _segments(root: Path):
    return sorted(root.rglob("*.log"))


def test_large_batch_check_reads_headers_as_the_generated_readers(sample):
    """check_large_batch reads the header fields at the derived places: on every batch of the
    sample (every magic and codec) it finds what the generated readers find."""
    seen = set()
    for path in _segments(sample):
        data = path.read_bytes()
        for info in scan.iter_file_batches(path):
            assert not isinstance(info, Exception), info
            found = bigbatch.check_large_batch(lambda pos, n: data[pos:pos + n], info.position, info.size, True, 1000)
            assert found == (info.magic, info.last_offset, info.max_timestamp)
            seen.add(info.magic)
    assert seen == {0, 1, 2}


def test_batch_lines_show_the_generated_fields(sample):
    """kafka-dump-log's batch line, read from header bytes at the derived places, names the
    values the generated readers read."""
    lines = 0
    for path in _segments(sample):
        data = path.read_bytes()
        for batch in records.read_batches(data):
            b = data[batch.position:batch.position + batch.size]
            line = tool.batch_line(b, batch.position, str(path), batch.position)
            e = batch.entry
            if batch.is_legacy:
                m = e.message
                ts = f"{records.TIMESTAMP_TYPES[int(m.timestamp_type)]}: {-1 if m.magic == 0 else m.timestamp}"
                assert line == (f"offset: {e.offset} position: {batch.position} {ts} size: {batch.size} "
                                f"magic: {m.magic} compresscodec: {batch.compression} crc: {m.crc} isvalid: true")
                assert zlib.crc32(b[places.LEGACY_CRC_FROM:]) == m.crc
            else:
                assert line.startswith(f"baseOffset: {e.base_offset} lastOffset: {e.last_offset} "
                                       f"count: {e.records_count} baseSequence: {e.base_sequence} ")
                assert (f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
                        f"partitionLeaderEpoch: {e.partition_leader_epoch} ") in line
                assert line.endswith(f"{records.TIMESTAMP_TYPES[int(e.timestamp_type)]}: {e.max_timestamp} "
                                     f"size: {batch.size} magic: 2 compresscodec: {batch.compression} crc: {e.crc} "
                                     "isvalid: true")
                assert crc32c.crc32c(b[places.V2_CRC_FROM:]) == e.crc
            lines += 1
    assert lines > 50


def test_transaction_index_and_markers_as_the_generated_readers(sample):
    """The .txnindex listing and the transaction markers' suffix read the fields the generated
    TransactionIndex and ControlRecord readers read."""
    (txn,) = sample.rglob("*.txnindex")
    entries = TransactionIndex.from_bytes(txn.read_bytes()).entries
    assert entries
    assert [text for _, text in tool.dump_txn_index(txn, str(txn))] == [
        f"version: {a.version} producerId: {a.producer_id} firstOffset: {a.first_offset} lastOffset: {a.last_offset} "
        f"lastStableOffset: {a.last_stable_offset}" for a in entries]
    markers = 0
    for path in _segments(sample):
        for batch in records.read_batches(path.read_bytes()):
            if batch.is_legacy or not batch.entry.is_control:
                continue
            for r in batch:
                key = ControlRecord.from_bytes(bytes(r.key))
                if key.type in (ControlRecord.ControlType.abort, ControlRecord.ControlType.commit):
                    marker = ControlRecord.EndTransactionMarker.from_bytes(bytes(r.value))
                    assert tool.control_suffix(r, str(path)) == (
                        f" endTxnMarker: {key.type.name.upper()} coordinatorEpoch: {marker.coordinator_epoch}")
                    markers += 1
    assert markers


def test_index_entries_read_at_their_places(sample):
    """An index listing checks each entry against the batch it names, its last offset read from
    the header at the derived places: the mismatches it reports are those the generated readers
    find (Kafka indexes an append's largest offset at its first batch, so some are expected), and
    every time index entry is found where it says."""
    reports = Reports()
    expected, entries, listed = {}, 0, 0
    for path in sorted(sample.rglob("*.index")):
        data = path.with_suffix(".log").read_bytes()
        base = int(path.name.split(".")[0])
        for e in OffsetIndex.from_bytes(path.read_bytes()).entries:
            last = next(records.read_batches(data, e.position)).last_offset
            if last != base + e.relative_offset:
                expected.setdefault(str(path), []).append((base + e.relative_offset, last))
            entries += 1
        listed += sum(1 for _, line in index_listing.dump_offset_index(path, str(path), Options(), reports)
                      if line.startswith("offset:"))
    assert listed == entries > 0
    assert reports.offset_mismatches == expected
    times = 0
    for path in sorted(sample.rglob("*.timeindex")):
        times += sum(1 for _, line in index_listing.dump_time_index(path, str(path), Options(), reports)
                     if line.startswith("timestamp:"))
    assert times > 0
    assert not (reports.time_mismatches or reports.not_found or reports.out_of_order)
