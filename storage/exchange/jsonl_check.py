"""What a batch object given to `write` may hold, and what it may leave out.

Each field must have the right JSON type and lie within what Kafka writes; every problem of an
object is found and named (field, why, the type expected) before anything is encoded, instead of
being cut to fit, passed over, or failing deep inside the encoder.

Keys a batch's records determine are derived when absent and checked when given: `baseOffset`,
`lastOffset` and `count` from the records' offsets, `maxTimestamp` from their timestamps (a
CreateTime batch's is the largest; a LogAppendTime batch's records all report it), a record's
`offset` from the one before it. Keys with a neutral value default to it: magic 2, no
compression, CreateTime, -1 ("none") for the producer fields and leader epoch, no key, value or
headers. Only `records` is required. What depends on the bytes written (`size`, `crc`, `crcValid`,
`position`) is checked after encoding, by `jsonl.segment_from_json`.

The rules are Kafka's (MemoryRecordsBuilder, LogValidator): offsets are 0 to 2^63-1 and rise
within a batch; a v2 batch spans at most 2^31-1 offsets; timestamps are -1 (none) or 0 to 2^63-1;
producer id, epoch and sequence are -1 for none, and a producer's batch has an epoch and (unless
it is a control batch) a sequence; a transactional batch has a producer; v0/v1 entries have no
producer, no leader epoch, no headers and no zstd, and v0 no timestamps.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from kafkacodec.codec.records import CODECS
from kafkacodec.runtime.errors import KafkaCodecError
from kafkacodec.runtime.limits import LIMITS

from .jsonl_control import check_control_records, has_control, refuse_control_outside

INT16_MAX, INT32_MAX, INT64_MAX = 2 ** 15 - 1, 2 ** 31 - 1, 2 ** 63 - 1
OFFSETS = "offsets are 0 to 2^63-1"
TIMESTAMPS = "timestamps are -1 (none) or 0 to 2^63-1"
LEGACY_ABSENT = ("partitionLeaderEpoch", "producerId", "producerEpoch", "baseSequence", "firstTimestamp")
BAD = object()  # a value found wrong (and reported): checks that depend on it are passed over
REQUIRED = object()  # the default of a key that must be given


class JsonInputError(KafkaCodecError):
    """A line of `write`'s input that does not describe a batch Kafka could have written: every
    problem found in it, as (field, why) pairs, the first one also as `field` and `why`."""

    def __init__(self, field: str | None, why: str, line: int | None = None,
                 problems: list[tuple[str | None, str]] | None = None):
        super().__init__(why)
        self.problems = problems or [(field, why)]
        self.field, self.why = self.problems[0]
        self.line = line

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else None
        return "\n".join(": ".join(p for p in (where, field, why) if p) for field, why in self.problems)


def show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Batch:
    """The checks of one object; `problems` collects what they find."""

    def __init__(self, obj: dict):
        self.obj = obj
        self.problems: list[tuple[str | None, str]] = []

    def bad(self, field: str | None, why: str) -> object:
        self.problems.append((field, why))
        return BAD

    def int(self, obj: dict, key: str, low: int, high: int, rule: str, where: str = "",
            default: Any = REQUIRED) -> Any:
        if key not in obj:  # a default that is BAD stays unreported: what it came from was reported
            return default if default is not REQUIRED else self.bad(where + key, f"missing (an integer: {rule})")
        value = obj[key]
        if type(value) is not int:  # bool is an int to Python, not to JSON
            return self.bad(where + key, f"{show(value)} is not an integer ({rule})")
        if not low <= value <= high:
            return self.bad(where + key, f"{show(value)} is out of range ({rule})")
        return value

    def none_or(self, key: str, high: int, high_text: str) -> Any:
        return self.int(self.obj, key, -1, high, f"-1 for none, else 0 to {high_text}", default=-1)

    def timestamp(self, obj: dict, key: str, where: str = "", default: Any = REQUIRED) -> Any:
        return self.int(obj, key, -1, INT64_MAX, TIMESTAMPS, where, default)

    def absent(self, key: str, magic: int, absent: Any) -> None:
        value = self.obj.get(key, absent)
        if value != absent or type(value) is not type(absent):
            self.bad(key, f"{show(value)}, but magic {magic} has no such field ({show(absent)} expected)")

    def bool(self, key: str) -> Any:
        value = self.obj.get(key, False)
        return value if type(value) is bool else self.bad(key, f"{show(value)} is not true or false")

    def choice(self, key: str, allowed, default: Any) -> Any:
        value = self.obj.get(key, default)
        if type(value) not in (int, str) or value not in allowed:
            return self.bad(key, f"{show(value)} is not one of {', '.join(map(str, allowed))}")
        return value

    def bytes(self, value: Any, field: str) -> None:
        if value is None:
            return
        if type(value) is not str:
            self.bad(field, f"{show(value)} is not base64 text or null")
            return
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as err:
            self.bad(field, f"not standard base64 ({err})")

    def list(self, obj: dict, key: str, where: str = "", default: Any = REQUIRED) -> Any:
        if key not in obj:
            return default if default is not REQUIRED else self.bad(where + key, "missing (a list)")
        value = obj[key]
        return value if type(value) is list else self.bad(where + key, f"{show(value)} is not a list")


def complete_batch(obj: Any, next_offset: int = 0) -> dict:
    """`obj` with every absent key derived or defaulted, after checking every key given; a
    JsonInputError lists all that is wrong. `next_offset`: the offset after the previous batch's
    last, where a batch that gives no offsets starts."""
    if type(obj) is not dict:
        raise JsonInputError(None, f"{show(obj)} is not a JSON object (one batch per line)")
    _within_item_limit(obj)
    c = _Batch(obj)
    out = _complete(c, obj, next_offset)
    if c.problems:
        raise JsonInputError(None, "", problems=c.problems)
    return out


def _within_item_limit(obj: dict) -> None:
    """Records per batch and headers per record within LIMITS.max_items, which every reader here
    applies: a batch over it would be written only for `verify` to refuse it. Checked before any
    record is looked at, so that a line of millions of records costs no more than its parsing."""
    limit = LIMITS.max_items
    records = obj.get("records")
    if type(records) is not list:
        return
    if len(records) > limit:
        raise JsonInputError("records", f"{len(records):,} records, over the limit of {limit:,} per batch that "
                                        "reading them back applies (kafkacodec --max-items N write ...)")
    for i, r in enumerate(records):
        headers = r.get("headers") if type(r) is dict else None
        if type(headers) is list and len(headers) > limit:
            raise JsonInputError(f"records[{i}].headers", f"{len(headers):,} headers, over the limit of {limit:,} "
                                                          "per record that reading them back applies (kafkacodec "
                                                          "--max-items N write ...)")


def _complete(c: _Batch, obj: dict, next_offset: int) -> dict:
    magic = c.choice("magic", (0, 1, 2), 2)
    if magic is BAD:  # reported; the other fields are checked as v2's, the format whose rules admit most
        magic = 2
    compression = c.choice("compression", tuple(CODECS), "none")
    if magic in (0, 1) and compression == "zstd":
        c.bad("compression", f"zstd needs magic 2, not {magic}")
    ts_type = c.choice("timestampType", ("NoTimestampType",) if magic == 0 else ("CreateTime", "LogAppendTime"),
                       "NoTimestampType" if magic == 0 else "CreateTime")
    out: dict[str, Any] = {"magic": magic, "compression": compression, "timestampType": ts_type}
    records = c.list(obj, "records")
    if records is BAD:
        records = []
    elif magic in (0, 1) and not records:
        c.bad("records", f"empty, but a magic {magic} entry holds at least one message")
    first_given = records[0].get("offset") if records and type(records[0]) is dict else None
    base = c.int(obj, "baseOffset", 0, INT64_MAX, OFFSETS,
                 default=first_given if type(first_given) is int and first_given >= 0 else next_offset)
    max_ts = c.timestamp(obj, "maxTimestamp", default=None) if magic != 0 else -1
    if magic == 0:
        c.absent("maxTimestamp", magic, -1)
    append_time = ts_type == "LogAppendTime"
    if append_time and max_ts is None:  # the append time, from the records that report it
        given = [r["timestamp"] for r in records if type(r) is dict and type(r.get("timestamp")) is int]
        max_ts = given[0] if given else c.bad(
            "maxTimestamp", "missing: a LogAppendTime batch's maxTimestamp is its append time (an integer)")
    out["records"] = []
    expected = base  # a record that gives no offset follows the one before it
    for i, r in enumerate(records):
        out["records"].append(_record(c, r, i, expected, magic, append_time, max_ts))
        given = out["records"][-1]["offset"] if out["records"][-1] is not BAD else BAD
        expected = given + 1 if given is not BAD else BAD
    offsets = [r["offset"] for r in out["records"] if r is not BAD and r["offset"] is not BAD]
    previous = None
    for i, r in enumerate(out["records"]):
        if r is BAD or r["offset"] is BAD:
            previous = None
            continue
        if previous is not None and r["offset"] <= previous:
            c.bad(f"records[{i}].offset", f"{r['offset']} does not rise above the previous record's {previous}")
        previous = r["offset"]
    last = c.int(obj, "lastOffset", 0, INT64_MAX, OFFSETS,
                 default=offsets[-1] if offsets and len(offsets) == len(records) else base)
    out.update(baseOffset=base, lastOffset=last)
    if base is not BAD and last is not BAD:
        if last < base:
            c.bad("lastOffset", f"{last} is below baseOffset {base}")
        elif magic == 2 and last - base > INT32_MAX:
            c.bad("lastOffset", f"{last} is more than 2^31-1 above baseOffset {base}")
        for i, r in enumerate(out["records"]):
            if r is not BAD and r["offset"] is not BAD and not base <= r["offset"] <= last:
                c.bad(f"records[{i}].offset", f"{r['offset']} is outside the batch's offsets {base} to {last}")
        if magic in (0, 1) and offsets and len(offsets) == len(records) and (base, last) != (offsets[0], offsets[-1]):
            c.bad("baseOffset", f"{base} to {last}, but the messages' offsets are {offsets[0]} to {offsets[-1]}")
    if "count" in obj and type(obj["count"]) is not int:
        c.bad("count", f"{show(obj['count'])} is not an integer")
    elif "count" in obj and obj["count"] != len(records):
        c.bad("count", f"{show(obj['count'])}, but {len(records)} records are listed")
    timestamps = [r["timestamp"] for r in out["records"] if r is not BAD and r["timestamp"] is not BAD]
    complete = len(timestamps) == len(records)
    if magic == 0:
        out["maxTimestamp"] = -1
    elif append_time:
        out["maxTimestamp"] = max_ts
    else:
        largest = max(timestamps, default=-1)
        if max_ts is not None and max_ts is not BAD and records and complete and max_ts != largest:
            c.bad("maxTimestamp", f"{max_ts}, but the largest of the records' timestamps is {largest} "
                                  "(leave it out to have it derived)")
        out["maxTimestamp"] = largest if max_ts is None else max_ts
    if magic == 2:
        _v2_fields(c, obj, out, timestamps[0] if timestamps and complete else -1)
    else:
        for key in LEGACY_ABSENT:
            c.absent(key, magic, -1)
        for key in ("isTransactional", "isControl"):
            c.absent(key, magic, False)
        c.absent("deleteHorizonMs", magic, None)
        refuse_control_outside(obj["records"] if type(obj.get("records")) is list else [],
                               f"magic {magic} has no control records", c.bad)
        out.update(partitionLeaderEpoch=-1, producerId=-1, producerEpoch=-1, baseSequence=-1, firstTimestamp=-1,
                   isTransactional=False, isControl=False, deleteHorizonMs=None)
    return out


def _v2_fields(c: _Batch, obj: dict, out: dict, first_record_timestamp: int) -> None:
    producer = c.none_or("producerId", INT64_MAX, "2^63-1")
    epoch = c.none_or("producerEpoch", INT16_MAX, "32767")
    sequence = c.none_or("baseSequence", INT32_MAX, "2^31-1")
    given = obj["records"] if type(obj.get("records")) is list else []
    # records that carry `control` make a control batch unless it says otherwise
    transactional, control = c.bool("isTransactional"), c.bool("isControl") if "isControl" in obj else has_control(given)
    if transactional is True and producer == -1:
        c.bad("isTransactional", "a transactional batch needs a producerId")
    if producer not in (-1, BAD) and epoch == -1:
        c.bad("producerEpoch", f"-1, but producer {producer}'s batch needs an epoch")
    if producer not in (-1, BAD) and sequence == -1 and control is False:
        c.bad("baseSequence", f"-1, but producer {producer}'s data batch needs a sequence")
    # a batch's first timestamp is stored, not derived (the cleaner may keep it, or put a delete
    # horizon there), so any given is taken; Kafka's builders write the first record's
    horizon = obj.get("deleteHorizonMs")
    if horizon is not None:
        horizon = c.int(obj, "deleteHorizonMs", 0, INT64_MAX, "null, or a time 0 to 2^63-1")
    first = c.timestamp(obj, "firstTimestamp", default=horizon if horizon is not None else
                        out["maxTimestamp"] if out["timestampType"] == "LogAppendTime" else first_record_timestamp)
    if horizon not in (None, BAD) and first not in (BAD, horizon):
        c.bad("firstTimestamp", f"{first}, but a batch with a delete horizon keeps it there ({horizon} expected)")
    if first is not BAD and out["timestampType"] == "CreateTime":
        for i, r in enumerate(out["records"]):
            if r is not BAD and r["timestamp"] is not BAD and r["timestamp"] - first > INT64_MAX:
                c.bad(f"records[{i}].timestamp", f"{r['timestamp']} is more than 2^63-1 after firstTimestamp {first}")
    out.update(partitionLeaderEpoch=c.none_or("partitionLeaderEpoch", INT32_MAX, "2^31-1"), producerId=producer,
               producerEpoch=epoch, baseSequence=sequence, isTransactional=transactional, isControl=control,
               firstTimestamp=first, deleteHorizonMs=horizon)
    if control is True:
        check_control_records(given, out["records"], producer, c.bad)
    elif control is False:
        refuse_control_outside(given, "the batch is not a control batch (isControl false)", c.bad)


def _record(c: _Batch, record: Any, i: int, expected_offset: Any, magic: int, append_time: bool, max_ts: Any) -> Any:
    where = f"records[{i}]."
    if type(record) is not dict:
        return c.bad(where[:-1], f"{show(record)} is not a JSON object")
    out: dict[str, Any] = {}
    if "offset" in record:
        out["offset"] = c.int(record, "offset", 0, INT64_MAX, OFFSETS, where)
    elif expected_offset is not BAD and expected_offset > INT64_MAX:
        out["offset"] = c.bad(where + "offset", f"left out, and the offset after the one before it, {expected_offset}, "
                                                f"is beyond 2^63-1")
    else:  # BAD, unreported, after a bad offset before it: one problem, not two
        out["offset"] = expected_offset
    if magic == 0:
        out["timestamp"] = record.get("timestamp", -1)
        if out["timestamp"] != -1 or type(out["timestamp"]) is not int:
            out["timestamp"] = c.bad(where + "timestamp", f"{show(record['timestamp'])}, but magic 0 has no "
                                                          "timestamps (-1 expected)")
    else:
        ts = c.timestamp(record, "timestamp", where, default=max_ts if append_time else -1)
        if append_time and max_ts is not BAD and ts not in (BAD, max_ts):
            ts = c.bad(where + "timestamp", f"{ts}, but a LogAppendTime batch's records all report its "
                                            f"maxTimestamp {max_ts}")
        out["timestamp"] = ts
    for key in ("key", "value"):
        out[key] = record.get(key)
        c.bytes(out[key], where + key)
    headers = c.list(record, "headers", where, default=[])
    out["headers"] = [] if headers is BAD else headers
    if headers and headers is not BAD and magic < 2:
        c.bad(where + "headers", f"magic {magic} messages cannot carry headers")
    for j, header in enumerate(out["headers"]):
        _header(c, header, f"{where}headers[{j}]")
    return out


def _header(c: _Batch, header: Any, field: str) -> None:
    if type(header) is not list or len(header) != 2:
        c.bad(field, f"{show(header)} is not a [key, value] pair")
        return
    key, value = header
    if type(key) is not str:
        c.bad(field, f"key {show(key)} is not a string")
    else:
        try:  # bytes that were not UTF-8 come as \udc80-\udcff, as dump --json shows them
            key.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            c.bad(field, f"key {show(key)} is not valid Unicode")
    c.bytes(value, field)
