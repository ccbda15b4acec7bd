"""The facade: batches of any message format from a segment's bytes, and a writer for records.

Format rules that span several messages live here rather than in the schemas: the magic byte
at offset 16 picks the format; legacy compressed wrappers expand into their inner messages with
Kafka's offset rules (relative inner offsets for magic 1, absolute for magic 0) and timestamp
rules (a log-append-time wrapper's timestamp stands for every inner message).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, NamedTuple, Sequence

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from .places import LOG_OVERHEAD, MAGIC_AT, SIZE_AT
from .attribute_bits import COMPRESSION, CONTROL, LOG_APPEND_TIME, TIMESTAMP_TYPE_AT, TRANSACTIONAL
from kafkacodec.runtime.errors import (ChecksumError, DecodeError, InvalidValueError, LimitExceededError,
                                       TruncatedError)
from kafkacodec.runtime.limits import LIMITS

_ENTRY_OFFSET_AT, _ENTRY_OFFSET_WIDTH = LegacyLogEntry.LAYOUT["offset"]
# codec names are the schema's enum members' names (plain ints, as the writer packs them)
CODECS = {codec.name: int(codec) for codec in RecordBatch.CompressionType}
CODEC_NAMES = {v: k for k, v in CODECS.items()}
# Kafka's names of the timestamp types, which its tools and JSON print: the schema's members are
# snake_case, and the one magic 0 has is named by Kafka apart, so each member gets its name here
_KIND = LegacyLogEntry.TimestampType  # the legacy enum holds all three; v2's lacks magic 0's
TIMESTAMP_TYPES = {int(kind): name for kind, name in ((_KIND.no_timestamp, "NoTimestampType"),
                                                      (_KIND.create_time, "CreateTime"),
                                                      (_KIND.log_append_time, "LogAppendTime"))}

Header = RecordBatch.Header
PLAIN_RUN = 256  # plain legacy entries read by one call of the record view (bounds memory)


@dataclass(slots=True)
class Record:
    """A record as users see it, whatever the message format it was stored in."""
    key: bytes | None = None
    value: bytes | None = None
    timestamp: int | None = None
    offset: int | None = None
    headers: Sequence = field(default_factory=list)
    timestamp_type: int = 0


class Batch:
    """One v2 record batch or one legacy log entry, with its byte position in the buffer; `verify`:
    whether the CRCs of a compressed wrapper's inner messages are checked as its records are read."""

    __slots__ = ("_entry", "position", "size", "verify")

    def __init__(self, entry: RecordBatch | LegacyLogEntry, position: int, size: int, verify: bool = True):
        self._entry = entry
        self.position = position
        self.size = size
        self.verify = verify

    @property
    def entry(self) -> RecordBatch | LegacyLogEntry:
        return self._entry

    @property
    def magic(self) -> int:
        e = self._entry
        return e.magic if isinstance(e, RecordBatch) else e.message.magic

    @property
    def is_legacy(self) -> bool:
        return not isinstance(self._entry, RecordBatch)

    @property
    def compression(self) -> str:
        e = self._entry
        return CODEC_NAMES.get(int(e.compression if isinstance(e, RecordBatch) else e.message.compression), "?")

    @property
    def base_offset(self) -> int:
        e = self._entry
        if isinstance(e, RecordBatch):
            return e.base_offset
        return next(iter(self)).offset if e.message.compression else e.offset

    @property
    def last_offset(self) -> int:
        e = self._entry
        return e.last_offset if isinstance(e, RecordBatch) else e.offset

    @property
    def crc(self) -> int:
        e = self.entry
        return e.crc if isinstance(e, RecordBatch) else e.message.crc

    @property
    def crc_valid(self) -> bool:
        e = self.entry
        return e.crc_valid if isinstance(e, RecordBatch) else e.message.crc_valid

    def __iter__(self) -> Iterator:
        e = self._entry
        try:
            if isinstance(e, RecordBatch):
                return iter(e.records.items)
            return iter(legacy_records(e, self.verify))
        except DecodeError as err:
            if err.position is None:  # found in a wrapper's inner messages: the wrapper is at fault
                err.position = self.position
            raise

    def records(self) -> list:
        return list(self)

    def __repr__(self) -> str:
        return f"Batch(position={self.position}, size={self.size}, entry={self.entry!r})"


class PlainLegacyBatch(Batch):
    """A legacy entry holding one uncompressed message, as the reader of runs of them makes it
    (the legacy schema's record view): its record, and its entry objects read only when asked for."""

    # `_at`: where the entry is in `_buffer`; readers of files set `position` to its place in the file
    __slots__ = ("_record", "_buffer", "_at")

    @property
    def entry(self) -> LegacyLogEntry:
        e = self._entry
        if e is None:
            e = self._entry = LegacyLogEntry.read(self._buffer, self._at, self._at + self.size, self.verify)[0]
        return e

    @property
    def magic(self) -> int:
        return self._buffer[self._at + MAGIC_AT]

    @property
    def is_legacy(self) -> bool:
        return True

    @property
    def compression(self) -> str:
        return "none"

    @property
    def base_offset(self) -> int:
        at = self._at + _ENTRY_OFFSET_AT
        return int.from_bytes(self._buffer[at:at + _ENTRY_OFFSET_WIDTH], "big", signed=True)

    last_offset = base_offset

    def __iter__(self) -> Iterator:
        return iter((self._record,))


# plain v0/v1 messages read straight into records by the record view of the legacy schema
# (-record in legacy_log_entry.ksy: Kafka's timestamp rules), each entry of a run a
# PlainLegacyBatch holding its record; v2 records sections and v0/v1 entries written by the
# compiled writers of runs of records (-record-writer), else by the generated Python writer
_PLAIN_INTO = (PlainLegacyBatch, (("_entry", None), ("position", "start"), ("size", "size"), ("verify", "verify"),
                                  ("_record", "record"), ("_buffer", "buffer"), ("_at", "start")), Record)
_MAX_MESSAGE_SIZE = 2 ** 31 - 1  # message_size is an s4
LegacyLogEntry._bind_into(_PLAIN_INTO)
if LegacyLogEntry._held_iter is not None:
    PlainLegacyBatch.__iter__ = LegacyLogEntry._held_iter  # the same, without a Python frame


def _ends(records, base_offset: int):
    """(first offset, last offset, base timestamp) of a list or tuple of Records or dicts of their
    fields, a record without an offset taking the next after base_offset and one without a
    timestamp -1; None for other kinds of records or fields."""
    if type(records) is not list and type(records) is not tuple or not records or type(base_offset) is not int:
        return None
    first, last = _offset_and_timestamp(records[0]), _offset_and_timestamp(records[-1])
    if first is None or last is None:
        return None
    ends = (base_offset if first[0] is None else first[0], base_offset + len(records) - 1 if last[0] is None else last[0],
            -1 if first[1] is None else first[1])
    return ends if all(type(v) is int for v in ends) else None


def _offset_and_timestamp(r):
    if type(r) is Record:
        return r.offset, r.timestamp
    if type(r) is dict:
        return r.get("offset"), r.get("timestamp")
    return None


def _v2_records(records, base_offset: int):
    """The records section of a v2 batch by the compiled writer of runs of records
    (-record-writer in record_batch.ksy): (section, count, first offset, last offset, base
    timestamp, max timestamp), or None for anything it leaves to _v2_records_section."""
    run, ends = RecordBatch.Record._pack_run, _ends(records, base_offset)
    if run is None or ends is None:
        return None
    first, last, base_timestamp = ends
    out = bytearray()
    try:
        count, largest = run(out, records, Record, first, base_timestamp, base_offset)
    except OverflowError:  # a number beyond 64 bits
        return None
    return (out, count, first, last, base_timestamp, largest) if count == len(records) else None


def _legacy_entries(records, base_offset: int, magic: int, attributes: int, fixed_timestamp, relative: bool):
    """The v0/v1 log entries of records, one message each, by the compiled writer of runs of
    records (-record-writer in legacy_log_entry.ksy): (entries, last offset, largest timestamp),
    or None for anything it leaves to _legacy_message_set."""
    run, ends = LegacyLogEntry._pack_run, _ends(records, base_offset)
    if run is None or ends is None or magic not in (0, 1) or not 0 <= attributes <= 255 \
            or fixed_timestamp is not None and type(fixed_timestamp) is not int:
        return None
    first, last, _ = ends
    out = bytearray()
    fixed = fixed_timestamp is not None
    try:
        count, largest = run(out, records, Record, magic, attributes, fixed, fixed_timestamp if fixed else 0,
                             relative, first, base_offset)
    except OverflowError:
        return None
    return (out, last, largest) if count == len(records) else None


def _plain_entries(buffer: bytes, pos: int, end: int, verify: bool, max_batch_bytes: int, max_entries: int):
    """The plain v0/v1 entries from pos, up to max_entries, as batches: (batches, position after
    them). Stops before an entry that is not one, is larger than max_batch_bytes or is damaged,
    which the generated reader then reads or names."""
    return LegacyLogEntry._record_run(buffer, pos, end, verify, max_entries, _PLAIN_INTO, 0, -1,
                                      min(max_batch_bytes, _MAX_MESSAGE_SIZE))


def _wrapped_records(data, wrapper_offset: int, wrapper_magic: int, append_time: int, log_append: bool,
                     verify: bool):
    """The records of a compressed wrapper's decompressed message set, with Kafka's offset rule
    (a magic 1 wrapper's inner offsets count back from its own, the last one's); None for
    anything irregular (no entries, one compressed or damaged, a wrapper offset below the last
    inner one), which the generated reader then names."""
    data = bytes(data)  # (the records' keys and values are bytes)
    end = len(data)
    records, after = LegacyLogEntry._record_run(data, 0, end, verify, end, Record, int(log_append), append_time,
                                                _MAX_MESSAGE_SIZE)
    if not records or after != end:
        return None
    if wrapper_magic >= 1 and wrapper_offset != 0:
        base = wrapper_offset - records[-1].offset
        if base < 0:
            return None
        if base:  # one pass over the bytes, then this: cheaper than reading them twice
            for record in records:
                record.offset += base
    return records


class EncodedRecords(NamedTuple):
    """A v2 batch's records section already written (by a columnar writer), which write_batch
    takes in place of records: the section, its record count, first and last offsets, base and
    max timestamps."""
    body: bytearray
    count: int
    first: int
    last: int
    base_timestamp: int
    max_timestamp: int


def legacy_records(entry: LegacyLogEntry, verify: bool = False) -> list[Record]:
    """The records of a legacy entry, expanding a compressed wrapper as Kafka's deep iterator does;
    with `verify`, an inner message whose CRC does not match is a ChecksumError, as it is for a
    consumer that checks CRCs (the wrapper's CRC covers only the compressed bytes)."""
    m = entry.message
    attributes = m.attributes
    if not attributes & COMPRESSION:  # an ordinary message (the common case, read with plain field access)
        if m.magic == 0:
            return [Record(m.key, m.value, -1, entry.offset, [], -1)]
        return [Record(m.key, m.value, m.timestamp, entry.offset, [], (attributes >> TIMESTAMP_TYPE_AT) & 1)]
    log_append = m.magic >= 1 and (attributes >> TIMESTAMP_TYPE_AT) & 1 == 1
    # a wrapper read from bytes, its value not null (built objects have no value_length until written)
    if CODECS["gzip"] <= attributes & COMPRESSION <= CODECS["lz4"] \
            and (m.value_length or -1) >= 0:
        try:
            data = m.value_bytes()  # decompressed
        except DecodeError:
            data = None  # the Python reader below names it
        if data is not None:
            records = _wrapped_records(data, entry.offset, m.magic, m.timestamp if log_append else -1,
                                       log_append, verify)
            if records is not None:
                return records
    if m.value is None:
        raise InvalidValueError("found invalid compressed record set with null value", None,
                                "legacy_log_entry/message/value")
    inner = m.value.entries
    if not inner:
        raise InvalidValueError("found invalid compressed record set with no inner records", None,
                                "legacy_log_entry/message/value")
    if m.magic >= 1 and entry.offset != 0:
        last_relative = inner[-1].offset
        base = entry.offset - last_relative
        if base < 0:
            raise InvalidValueError(f"found invalid wrapper offset in compressed v1 message set, wrapper "
                                    f"offset '{entry.offset}' is less than the last inner message offset "
                                    f"'{last_relative}'", None, "legacy_log_entry/offset")
    else:
        base = 0  # magic 0 inner offsets are absolute, and so are those of a v1 wrapper at offset 0
    out = []
    # the attribute bits are read as they are: the enum properties would build an object per message
    for i, e in enumerate(inner):
        im = e.message
        if verify and not im.crc_valid:
            raise ChecksumError(f"inner message {i} (offset {e.offset}): stored crc = {im.crc}, computed crc = "
                                f"{im._load_crc_checksum()}", None, "legacy_log_entry/message/value",
                                stored=im.crc, computed=im._load_crc_checksum())
        inner_attributes = im.attributes
        if inner_attributes & COMPRESSION:
            raise InvalidValueError("inner messages must not be compressed", None, "legacy_log_entry/message")
        if log_append:
            ts, tt = m.timestamp, 1
        elif im.magic == 0:
            ts, tt = -1, -1
        else:
            ts, tt = im.timestamp, (inner_attributes >> TIMESTAMP_TYPE_AT) & 1
        out.append(Record(im.key, im.value, ts, base + e.offset, [], tt))
    return out


def read_batches(buffer, pos: int = 0, end: int | None = None, verify: bool = True) -> Iterator[Batch]:
    """Yield the batches (v2) and log entries (v0/v1) of a segment's bytes, in order.

    Raises a DecodeError subclass with the byte position at the first damaged batch; every batch
    before it has been yielded already.
    """
    if not isinstance(buffer, bytes):
        buffer = bytes(buffer)
    end = len(buffer) if end is None else end
    while pos < end:
        if end - pos > MAGIC_AT and buffer[pos + MAGIC_AT] < 2:
            run, pos = _plain_entries(buffer, pos, end, verify, LIMITS.max_batch_bytes, PLAIN_RUN)
            yield from run
            if run:
                continue
        if end - pos < MAGIC_AT + 1:
            raise TruncatedError(f"{end - pos} bytes left, too few for a batch header", pos, "log")
        size = int.from_bytes(buffer[pos + SIZE_AT:pos + LOG_OVERHEAD], "big", signed=True)
        if size > LIMITS.max_batch_bytes:
            raise LimitExceededError(f"batch of {size} bytes is larger than the limit of {LIMITS.max_batch_bytes} "
                                     "(kafkacodec.runtime.limits.LIMITS.max_batch_bytes)", pos + SIZE_AT,
                                     "log/size")
        magic = buffer[pos + MAGIC_AT]
        if magic == 2:
            entry, nxt = RecordBatch.read(buffer, pos, end, verify)
        elif magic in (0, 1):
            entry, nxt = LegacyLogEntry.read(buffer, pos, end, verify)
        else:
            raise InvalidValueError(f"unknown magic byte {magic}", pos + MAGIC_AT, "log")
        yield Batch(entry, pos, nxt - pos, verify)
        pos = nxt


def _as_record(r) -> Record:
    """Accept Record objects, dicts of Record's fields, and any object with key and value."""
    if isinstance(r, Record):
        return r
    if isinstance(r, dict):  # as in a v2 batch, keys that are not Record's are passed over
        get = r.get
        return Record(get("key"), get("value"), get("timestamp"), get("offset"), get("headers") or [])
    return Record(key=r.key, value=r.value, timestamp=getattr(r, "timestamp", None),
                  offset=getattr(r, "offset", None), headers=getattr(r, "headers", []) or [])


def write_batch(records: Iterable, *, magic: int = 2, compression: str = "none", base_offset: int = 0,
                timestamp_type: str = "CreateTime", log_append_time: int | None = None,
                partition_leader_epoch: int = -1, producer_id: int = -1, producer_epoch: int = -1,
                base_sequence: int = -1, is_transactional: bool = False, is_control: bool = False) -> bytes:
    """Encode records as one v2 batch, or as legacy log entries (one compressed wrapper if compressed).

    Records are Record objects, dicts of Record's fields, or objects with key and value (or an
    EncodedRecords section). A record's offset defaults to base_offset + its index, its
    timestamp to -1. Headers are (key, value) pairs or Header objects; magic 0 and 1 cannot carry
    them and refuse them.
    """
    codec = CODECS[compression]
    append_time = timestamp_type == "LogAppendTime"
    if isinstance(records, EncodedRecords):
        if magic != 2:
            raise ValueError("a records section written for a v2 batch cannot make legacy entries")
        encoded = records
    elif magic != 2:
        return _write_legacy(records, base_offset, magic, codec, append_time, log_append_time)
    else:
        encoded = _v2_records(records, base_offset)
    if encoded is not None:  # given, or by the compiled writer for lists of Records or dicts
        body, count, first, last, base_ts, max_ts = encoded
    else:
        body, count, first, last, base_ts, max_ts = _v2_records_section(records, base_offset)
    if not count:
        raise ValueError("a v2 batch written by a producer holds at least one record")
    if append_time and log_append_time is not None:
        max_ts = log_append_time
    attrs = (codec | (LOG_APPEND_TIME if append_time else 0) | (TRANSACTIONAL if is_transactional else 0)
             | (CONTROL if is_control else 0))
    batch = RecordBatch(
        base_offset=first, partition_leader_epoch=partition_leader_epoch, attributes=attrs,
        last_offset_delta=last - first, base_timestamp=base_ts, max_timestamp=max_ts,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        records_count=count, records=body)
    return batch.to_bytes()


def _v2_records_section(records: Iterable, base_offset: int):
    """(records section, count, first offset, last offset, base timestamp, max timestamp): the
    records go straight into the section through the generated _pack."""
    pack = RecordBatch.Record._pack
    body = bytearray()
    count = 0
    base_ts = first = last = max_ts = None
    for count, r in enumerate(records, 1):
        if r.__class__ is Record:
            key, value, ts, off, headers = r.key, r.value, r.timestamp, r.offset, r.headers
        elif r.__class__ is dict:
            get = r.get
            key, value, ts, off, headers = get("key"), get("value"), get("timestamp"), get("offset"), get("headers")
        else:
            key, value = r.key, r.value
            ts, off, headers = getattr(r, "timestamp", None), getattr(r, "offset", None), getattr(r, "headers", None)
        if ts is None:
            ts = -1
        last = base_offset + count - 1 if off is None else off
        if first is None:
            base_ts = max_ts = ts
            first = last
        elif ts > max_ts:
            max_ts = ts
        # headers pass through: the writer takes (key, value) tuples and Header objects alike
        pack(body, 0, ts - base_ts, last - first, key, value, headers or ())
    return body, count, first, last, base_ts, max_ts


def _write_legacy(records, base_offset, magic, codec, append_time, log_append_time) -> bytes:
    """Entry after entry, or one compressed wrapper around them."""
    ts_attr = LOG_APPEND_TIME if (append_time and magic == 1) else 0
    fixed_ts = log_append_time if (ts_attr and log_append_time is not None) else None
    found = None
    if codec != CODECS["zstd"]:
        # by the compiled writer; None for the records it leaves to the generated Python one
        found = _legacy_entries(records, base_offset, magic, ts_attr, None if codec else fixed_ts,
                                codec != 0 and magic == 1)
    if found is None:
        found = _legacy_message_set(records, base_offset, magic, codec, ts_attr, fixed_ts)
    entries, last, max_ts = found
    if codec == 0:
        return bytes(entries)
    wrapper_ts = max_ts if fixed_ts is None else fixed_ts
    return LegacyLogEntry(offset=last, message=LegacyLogEntry.LegacyMessage(
        magic=magic, attributes=codec | ts_attr, key=None, value=entries,
        timestamp=wrapper_ts if magic == 1 else None)).to_bytes()


def _legacy_message_set(records, base_offset, magic, codec, ts_attr, fixed_ts):
    """(entries, last offset, largest timestamp) by the generated writer: packed from field values
    (all stamped `fixed_ts` when given) when uncompressed, else the entries of a wrapper, with
    inner offsets relative to the first for magic 1."""
    recs = [_as_record(r) for r in records]
    offsets = [base_offset + i if r.offset is None else r.offset for i, r in enumerate(recs)]
    stamps = [-1 if r.timestamp is None else r.timestamp for r in recs]
    if magic not in (0, 1):
        raise ValueError(f"unknown magic {magic}")
    if codec == CODECS["zstd"]:
        raise ValueError(f"zstd compression is not supported for magic {magic}")
    if any(r.headers for r in recs):
        raise ValueError(f"magic {magic} cannot carry record headers")
    if codec == 0:
        out = bytearray()
        pack = LegacyLogEntry._pack
        for r, off, ts in zip(recs, offsets, stamps):
            ts = ts if fixed_ts is None else fixed_ts
            pack(out, off, (magic, ts_attr, ts if magic == 1 else None, r.key, r.value))
        return out, None, None
    inner = [LegacyLogEntry(offset=(off - offsets[0] if magic == 1 else off), message=LegacyLogEntry.LegacyMessage(
        magic=magic, attributes=ts_attr, key=r.key, value=r.value, timestamp=(ts if magic == 1 else None)))
        for r, off, ts in zip(recs, offsets, stamps)]
    # with no records, max() fails here, or offsets[-1] just below when the stamp is fixed, as before
    largest = None if fixed_ts is not None else max(stamps)
    return LegacyLogEntry.MessageSet(entries=inner), offsets[-1], largest


def write_batches(batches: Iterable[Iterable], **options) -> bytes:
    """Encode several batches (each a list of records) one after another, as in a segment."""
    return b"".join(write_batch(b, **options) for b in batches)
