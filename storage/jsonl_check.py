"""What a batch object given to `write` may hold: each field of the right JSON type and within
what Kafka writes, checked before anything is encoded, so that a bad value is named (field and
why) instead of being cut to fit, passed over, or failing deep inside the encoder.

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

from kafkacodec.records import CODECS
from kafkacodec.runtime.errors import KafkaCodecError

INT16_MAX, INT32_MAX, INT64_MAX = 2 ** 15 - 1, 2 ** 31 - 1, 2 ** 63 - 1
OFFSETS = "offsets are 0 to 2^63-1"
TIMESTAMPS = "timestamps are -1 (none) or 0 to 2^63-1"
LEGACY_ABSENT = ("partitionLeaderEpoch", "producerId", "producerEpoch", "baseSequence", "firstTimestamp")


class JsonInputError(KafkaCodecError):
    """A line of `write`'s input that does not describe a batch Kafka could have written."""

    def __init__(self, field: str | None, why: str, line: int | None = None):
        super().__init__(why)
        self.field, self.why, self.line = field, why, line

    def __str__(self) -> str:
        return ": ".join(p for p in (f"line {self.line}" if self.line else None, self.field, self.why) if p)


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _get(obj: dict, key: str, where: str) -> Any:
    if key not in obj:
        raise JsonInputError(where + key, "missing")
    return obj[key]


def _int(obj: dict, key: str, low: int, high: int, rule: str, where: str = "") -> int:
    value = _get(obj, key, where)
    if type(value) is not int:  # bool is an int to Python, not to JSON
        raise JsonInputError(where + key, f"{_show(value)} is not an integer")
    if not low <= value <= high:
        raise JsonInputError(where + key, f"{_show(value)} is out of range ({rule})")
    return value


def _none_or(obj: dict, key: str, high: int, high_text: str, where: str = "") -> int:
    return _int(obj, key, -1, high, f"-1 for none, else 0 to {high_text}", where)


def _timestamp(obj: dict, key: str, where: str = "") -> int:
    return _int(obj, key, -1, INT64_MAX, TIMESTAMPS, where)


def _absent(obj: dict, key: str, magic: int, absent: Any) -> None:
    value = _get(obj, key, "")
    if value != absent or type(value) is not type(absent):
        raise JsonInputError(key, f"{_show(value)}, but magic {magic} has no such field ({_show(absent)} expected)")


def _bool(obj: dict, key: str) -> bool:
    value = _get(obj, key, "")
    if type(value) is not bool:
        raise JsonInputError(key, f"{_show(value)} is not true or false")
    return value


def _choice(obj: dict, key: str, allowed, where: str = "") -> Any:
    value = _get(obj, key, where)
    if type(value) not in (int, str) or value not in allowed:
        raise JsonInputError(where + key, f"{_show(value)} is not one of {', '.join(map(str, allowed))}")
    return value


def _bytes(value: Any, field: str) -> None:
    if value is None:
        return
    if type(value) is not str:
        raise JsonInputError(field, f"{_show(value)} is not base64 text or null")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as err:
        raise JsonInputError(field, f"not standard base64 ({err})") from None


def _list(obj: dict, key: str, where: str = "") -> list:
    value = _get(obj, key, where)
    if type(value) is not list:
        raise JsonInputError(where + key, f"{_show(value)} is not a list")
    return value


def check_batch(obj: Any) -> None:
    """Raise a JsonInputError naming the first field of `obj` that `from_json` cannot write as
    Kafka would have written it."""
    if type(obj) is not dict:
        raise JsonInputError(None, f"{_show(obj)} is not a JSON object (one batch per line)")
    magic = _choice(obj, "magic", (0, 1, 2))
    compression = _choice(obj, "compression", tuple(CODECS))
    if magic < 2 and compression == "zstd":
        raise JsonInputError("compression", f"zstd needs magic 2, not {magic}")
    ts_type = _choice(obj, "timestampType", ("NoTimestampType",) if magic == 0 else ("CreateTime", "LogAppendTime"))
    base = _int(obj, "baseOffset", 0, INT64_MAX, OFFSETS)
    last = _int(obj, "lastOffset", 0, INT64_MAX, OFFSETS)
    if last < base:
        raise JsonInputError("lastOffset", f"{last} is below baseOffset {base}")
    records = _list(obj, "records")
    if magic == 2:
        if last - base > INT32_MAX:
            raise JsonInputError("lastOffset", f"{last} is more than 2^31-1 above baseOffset {base}")
        _none_or(obj, "partitionLeaderEpoch", INT32_MAX, "2^31-1")
        producer = _none_or(obj, "producerId", INT64_MAX, "2^63-1")
        epoch = _none_or(obj, "producerEpoch", INT16_MAX, "32767")
        sequence = _none_or(obj, "baseSequence", INT32_MAX, "2^31-1")
        transactional, control = _bool(obj, "isTransactional"), _bool(obj, "isControl")
        if transactional and producer == -1:
            raise JsonInputError("isTransactional", "a transactional batch needs a producerId")
        if producer != -1 and epoch == -1:
            raise JsonInputError("producerEpoch", f"-1, but producer {producer}'s batch needs an epoch")
        if producer != -1 and sequence == -1 and not control:
            raise JsonInputError("baseSequence", f"-1, but producer {producer}'s data batch needs a sequence")
        first_ts = _timestamp(obj, "firstTimestamp")
        _timestamp(obj, "maxTimestamp")
    else:
        for key in LEGACY_ABSENT:
            _absent(obj, key, magic, -1)
        for key in ("isTransactional", "isControl"):
            _absent(obj, key, magic, False)
        if magic == 0:
            _absent(obj, "maxTimestamp", magic, -1)
        else:
            _timestamp(obj, "maxTimestamp")
        if not records:
            raise JsonInputError("records", f"empty, but a magic {magic} entry holds at least one message")
    if "count" in obj and (type(obj["count"]) is not int or obj["count"] != len(records)):
        raise JsonInputError("count", f"{_show(obj['count'])}, but {len(records)} records are listed")
    previous = None
    for i, record in enumerate(records):
        where = f"records[{i}]."
        if type(record) is not dict:
            raise JsonInputError(where[:-1], f"{_show(record)} is not a JSON object")
        offset = _int(record, "offset", 0, INT64_MAX, OFFSETS, where)
        if not base <= offset <= last:
            raise JsonInputError(where + "offset", f"{offset} is outside the batch's offsets {base} to {last}")
        if previous is not None and offset <= previous:
            raise JsonInputError(where + "offset", f"{offset} does not rise above the previous record's {previous}")
        previous = offset
        if magic == 0:
            if _get(record, "timestamp", where) != -1:
                raise JsonInputError(where + "timestamp", f"{_show(record['timestamp'])}, but magic 0 has no "
                                                          "timestamps (-1 expected)")
        else:
            timestamp = _timestamp(record, "timestamp", where)
            if magic == 2 and ts_type == "CreateTime" and timestamp - first_ts > INT64_MAX:
                raise JsonInputError(where + "timestamp", f"{timestamp} is more than 2^63-1 after firstTimestamp "
                                                          f"{first_ts}")
        _bytes(_get(record, "key", where), where + "key")
        _bytes(_get(record, "value", where), where + "value")
        headers = _list(record, "headers", where)
        if headers and magic < 2:
            raise JsonInputError(where + "headers", f"magic {magic} messages cannot carry headers")
        for j, header in enumerate(headers):
            field = f"{where}headers[{j}]"
            if type(header) is not list or len(header) != 2:
                raise JsonInputError(field, f"{_show(header)} is not a [key, value] pair")
            key, value = header
            if type(key) is not str:
                raise JsonInputError(field, f"key {_show(key)} is not a string")
            try:  # bytes that were not UTF-8 come as \udc80-\udcff, as dump --json shows them
                key.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raise JsonInputError(field, f"key {_show(key)} is not valid Unicode") from None
            _bytes(value, field)
    if magic < 2 and (base, last) != (records[0]["offset"], records[-1]["offset"]):
        raise JsonInputError("baseOffset", f"{base} to {last}, but the messages' offsets are "
                                           f"{records[0]['offset']} to {records[-1]['offset']}")
