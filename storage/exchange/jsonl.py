"""Batches as JSON objects (one per line) and back: the exchange format of `dump --json` and `write`.

Keys follow Kafka's RecordBatch API; values a magic does not have are -1 or false, as that API
reports them. Keys and values are standard base64. A v2 record's timestamp delta is rebuilt from
its timestamp and the batch's firstTimestamp, so a log-append-time batch (whose records all report
the batch's max timestamp) is written back with zero deltas.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Iterable

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.codec import attribute_bits as bits
from kafkacodec.codec.records import CODECS, TIMESTAMP_TYPES, Batch, read_batches
from kafkacodec.runtime.errors import DecodeError, KafkaCodecError, LimitExceededError

from kafkacodec.codec.kafka_json import CONTROL_TYPE_NAMES
from ..state.control_rules import MARKER_TYPES, read_key, read_marker_value
from .jsonl_check import INT32_MAX, JsonInputError, show, complete_batch
from ..segments.records_check import Decoded, decoded_records
from ..segments.scan import scan_bytes

TIMESTAMP_TYPE_IDS = {name: i for i, name in TIMESTAMP_TYPES.items()}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)


def _control(key: bytes | None, value: bytes | None) -> dict | None:
    """The control record key (version, type) and, for transaction markers, the coordinator epoch."""
    fields = None if key is None else read_key(bytes(key))[0]
    if fields is None:
        return None
    version, kind = fields
    out: dict[str, Any] = {"type": CONTROL_TYPE_NAMES.get(kind, "UNKNOWN"), "version": version}
    marker = read_marker_value(bytes(value))[0] if kind in MARKER_TYPES and value is not None else None
    if marker is not None:
        out["coordinatorEpoch"] = marker[1]
    return out


@dataclass
class Listed:
    """A batch as `dump --json` lists it: its object, the records in it, and the DecodeError where
    they stopped reading (None when every record reads, and the object's `recordsValid` is true)."""
    obj: dict
    records: list
    error: DecodeError | None


def to_json(batch: Batch, file: str | None = None) -> dict:
    """The object of a batch whose records all read; a DecodeError where one does not."""
    listed = listed_json(batch, file)
    if listed.error is not None:
        raise listed.error
    return listed.obj


def listed_json(batch: Batch, file: str | None = None) -> Listed:
    """The object of a batch with the records that read, up to the first that does not: the
    batch's framing and header are intact, so it is listed, its damage named by the caller."""
    e = batch.entry
    records, read, error = [], [], None
    try:
        for r in batch:  # a record's fields may decode lazily: each is read before it is listed
            rec = {"offset": r.offset, "timestamp": r.timestamp, "key": _b64(r.key), "value": _b64(r.value),
                   "headers": [[h.key, _b64(h.value)] for h in r.headers]}
            if not batch.is_legacy and e.is_control:
                rec["control"] = _control(r.key, r.value)
            records.append(rec)
            read.append(r)
    except DecodeError as err:
        error = err
    if not batch.is_legacy:
        obj = {"file": file, "position": batch.position, "size": batch.size, "magic": e.magic,
               "baseOffset": e.base_offset, "lastOffset": e.last_offset, "count": e.records_count,
               "partitionLeaderEpoch": e.partition_leader_epoch, "crc": e.crc, "crcValid": e.crc_valid,
               "recordsValid": error is None,
               "compression": batch.compression, "timestampType": TIMESTAMP_TYPES[int(e.timestamp_type)],
               "isTransactional": e.is_transactional, "isControl": e.is_control, "producerId": e.producer_id,
               "producerEpoch": e.producer_epoch, "baseSequence": e.base_sequence,
               "firstTimestamp": e.base_timestamp, "maxTimestamp": e.max_timestamp,
               "deleteHorizonMs": e.base_timestamp if e.has_delete_horizon else None, "records": records}
        return Listed(obj, read, error)
    m = e.message
    obj = {"file": file, "position": batch.position, "size": batch.size, "magic": m.magic,
           "baseOffset": records[0]["offset"] if records else e.offset, "lastOffset": e.offset,
           "count": len(records), "partitionLeaderEpoch": -1, "crc": m.crc, "crcValid": m.crc_valid,
           "recordsValid": error is None,
           "compression": batch.compression, "timestampType": TIMESTAMP_TYPES[int(m.timestamp_type)],
           "isTransactional": False, "isControl": False, "producerId": -1, "producerEpoch": -1,
           "baseSequence": -1, "firstTimestamp": -1, "maxTimestamp": -1 if m.magic == 0 else m.timestamp,
           "deleteHorizonMs": None, "records": records}
    return Listed(obj, read, error)


def from_json(obj: dict) -> bytes:
    """The bytes of the batch (v2) or log entries (v0/v1) an object of `to_json` describes, keys
    left out derived (jsonl_check); a JsonInputError lists what Kafka could not have written."""
    return _encode(complete_batch(obj))


def _encode(obj: dict) -> bytes:
    magic = obj["magic"]
    codec = CODECS[obj["compression"]]
    ts_type = TIMESTAMP_TYPE_IDS[obj["timestampType"]]
    if magic >= 2:
        base, first_ts = obj["baseOffset"], obj["firstTimestamp"]
        attrs = codec | (bits.LOG_APPEND_TIME if ts_type == 1 else 0) | \
            (bits.TRANSACTIONAL if obj["isTransactional"] else 0) | (bits.CONTROL if obj["isControl"] else 0) | \
            (bits.DELETE_HORIZON if obj["deleteHorizonMs"] is not None else 0)
        items = [RecordBatch.Record(
            offset_delta=r["offset"] - base, timestamp_delta=0 if ts_type == 1 else r["timestamp"] - first_ts,
            key=_unb64(r["key"]), value=_unb64(r["value"]),
            headers=[RecordBatch.Header(key=k, value=_unb64(v)) for k, v in r["headers"]]) for r in obj["records"]]
        return RecordBatch(
            base_offset=base, partition_leader_epoch=obj["partitionLeaderEpoch"], magic=magic, attributes=attrs,
            last_offset_delta=obj["lastOffset"] - base, base_timestamp=first_ts, max_timestamp=obj["maxTimestamp"],
            producer_id=obj["producerId"], producer_epoch=obj["producerEpoch"], base_sequence=obj["baseSequence"],
            records=RecordBatch.Records(items=items)).to_bytes()
    attrs = (bits.LOG_APPEND_TIME if (ts_type == 1 and magic == 1) else 0)

    def message(r, attributes, value):
        return LegacyLogEntry.LegacyMessage(magic=magic, attributes=attributes, key=_unb64(r["key"]), value=value,
                                            timestamp=r["timestamp"] if magic == 1 else None)

    if codec == 0:
        return b"".join(LegacyLogEntry(offset=r["offset"], message=message(r, attrs, _unb64(r["value"]))).to_bytes()
                        for r in obj["records"])
    first = obj["baseOffset"]
    inner = [LegacyLogEntry(offset=r["offset"] - first if magic == 1 else r["offset"],
                            message=message(r, attrs, _unb64(r["value"]))) for r in obj["records"]]
    wrapper = {"key": None, "timestamp": obj["maxTimestamp"]}
    return LegacyLogEntry(offset=obj["lastOffset"], message=message(
        wrapper, codec | attrs, LegacyLogEntry.MessageSet(entries=inner))).to_bytes()



WRITTEN = ("size", "crc", "crcValid", "position")  # keys that describe the bytes written, not the records


@dataclass
class Segment:
    data: bytes
    spans: list[tuple[int, int, int]]  # (line, first offset, last offset) of each batch


def segment_from_json(lines: Iterable[bytes], recompute: bool = False, accept_damaged: bool = False) -> Segment:
    """The bytes of a segment from JSON Lines (blank lines passed over): each batch checked, and
    offsets rising from batch to batch, as in a log. A JsonInputError names the line and lists
    its problems. Keys that describe the bytes (WRITTEN) are checked against the bytes written,
    unless `recompute` (after an edit, or for compressed batches, whose compressor may differ).

    A batch marked `"crcValid": false` was read from bytes that are not the ones written (its CRC
    does not match them): written again, it would get a CRC of its own and pass for intact data.
    It is refused, with or without `recompute`, unless `accept_damaged`. One marked
    `"recordsValid": false` lists only the records read before its damage: it is always refused."""
    data = bytearray()
    spans: list[tuple[int, int, int]] = []
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeated_keys)
        except UnicodeDecodeError as err:
            raise JsonInputError(None, f"not UTF-8 text (byte {err.start} of the line)", n) from None
        except JsonInputError as err:
            err.line = n
            raise
        except (ValueError, RecursionError) as err:  # json's errors, numbers too long to convert, deep nesting
            raise JsonInputError(None, f"not JSON: {err}", n) from None
        try:
            if type(obj) is dict and obj.get("recordsValid") is False:  # refused even with accept_damaged
                raise JsonInputError("recordsValid", "false: the batch's records did not all read from the bytes "
                                                     "it was listed from, so only those before the damage are "
                                                     "listed; leave it out (to put intact batches back: "
                                                     "kafkacodec recover --salvage)")
            damaged = type(obj) is dict and obj.get("crcValid") is False
            if damaged and not accept_damaged:
                raise JsonInputError("crcValid", "false: the batch was read from damaged bytes (its CRC does not match "
                                                 "them), so its records may not be the ones written; leave it out (to "
                                                 "put intact batches back: kafkacodec recover --salvage), or pass "
                                                 "--accept-damaged to write it with a new CRC")
            full = complete_batch(obj, spans[-1][2] + 1 if spans else 0)
            if spans and full["baseOffset"] <= spans[-1][2]:
                raise JsonInputError("baseOffset", f"{full['baseOffset']} does not rise above the previous batch's "
                                                   f"last offset {spans[-1][2]}")
            written = _encode(full)
            _check_reads_back(written)
            if not recompute:  # an accepted damaged batch gets a CRC of its own
                _check_written({k: v for k, v in obj.items() if k not in ("crc", "crcValid")} if damaged else obj,
                               written, len(data))
            data += written
        except JsonInputError as err:
            err.line = n
            raise
        except (KafkaCodecError, ValueError, OverflowError) as err:  # anything the checks above let through
            raise JsonInputError(None, f"cannot be written: {err}", n) from None
        spans.append((n, full["baseOffset"], full["lastOffset"]))
    return Segment(bytes(data), spans)


def _no_repeated_keys(pairs: list) -> dict:
    """A JSON object; a key given twice is an error (json would keep the last silently)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise JsonInputError(key, "given twice in one object")
        out[key] = value
    return out


def _check_reads_back(written: bytes) -> None:
    """The batch written must read back within this run's limits (LIMITS: batch size, items,
    decompressed size), as `verify` reads it; one that would not is refused, not written."""
    try:
        batches = list(read_batches(written))  # the batch size limit
        # the records an uncompressed batch holds were counted before encoding; a compressed one
        # is decompressed as readers decompress it
        found = decoded_records(scan_bytes(written).batches) if any(b.compression != "none" for b in batches) \
            else Decoded()
    except LimitExceededError as err:
        found = Decoded(over_limit=[(None, err)])
    if found.over_limit:
        err = found.over_limit[0][1]
        raise JsonInputError(None, f"the batch written would not read back: {err.message} (raise the limit: "
                                   "kafkacodec --max-batch-bytes N --max-decompressed-bytes N --max-items N write ...)")
    if found.bad is not None:
        raise JsonInputError(None, f"the batch written would not read back: {found.error.message}")


def _check_written(obj: dict, written: bytes, position: int) -> None:
    """Each of `size`, `crc`, `crcValid`, `position` given must be what the batch written has."""
    batches = list(read_batches(written))
    actual = {"size": len(written), "crcValid": True, "position": position}
    if len(batches) == 1:  # plain v0/v1 messages listed together are written as entries of their own
        actual["crc"] = batches[0].crc
    problems = []
    for key in WRITTEN:
        if key not in obj:
            continue
        if key not in actual:
            problems.append((key, f"given, but the {len(batches)} messages are written as entries, each with "
                                  "its own CRC (leave it out)"))
        elif obj[key] != actual[key] or type(obj[key]) is not type(actual[key]):
            problems.append((key, f"{show(obj[key])}, but the batch written has {show(actual[key])} (leave it "
                                  "out, or pass --recompute, to have it derived)"))
    if problems:
        raise JsonInputError(None, "", problems=problems)


def check_index_range(segment: Segment, base: int) -> None:
    """An index holds offsets relative to the segment's base, in 32 bits: every batch's last offset
    must lie 0 to 2^31-1 above it, as Kafka requires of a segment it indexes."""
    for line, _, last in segment.spans:
        if not 0 <= last - base <= INT32_MAX:
            raise JsonInputError("lastOffset", f"{last} is not within 0 to 2^31-1 above the segment's base offset "
                                               f"{base}, which an index needs", line)
