"""The records of a control batch given to `write`: built from their `control` object when their
key and value are left out, and refused when Kafka could not read them.

Kafka reads a control record's key as two int16s, version and type (ControlRecordType.parse): a
key shorter than 4 bytes, or with a negative version, is an InvalidRecordException, and a null
key a NullPointerException. A transaction marker's value (ABORT, COMMIT) is two fields, an int16
version and the int32 coordinator epoch (EndTransactionMarker.deserialize): shorter than 6
bytes, or a negative version, is refused the same way. When a broker recovers a segment, the
first record of each control batch of a producer is read as a transaction marker
(ProducerAppendInfo.append): an InvalidRecordException cuts the segment there, and a record
that is no marker (another type, or a null key) is an exception recovery does not catch, which
stops the broker. So every such record is refused here, by line and field.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Callable

from ..state.control_rules import (MARKER_TYPES, MARKER_VALUE_SIZE, key_bytes, marker_value_bytes, read_key,
                                   read_marker_value)
from kafkacodec.codec.kafka_json import CONTROL_TYPE_NAMES

TYPE_IDS = {name: kind for kind, name in CONTROL_TYPE_NAMES.items()}
INT16_MAX, INT32_MIN, INT32_MAX = 2 ** 15 - 1, -2 ** 31, 2 ** 31 - 1

Bad = Callable[[str, str], Any]  # (field, why): reports a problem


def has_control(records: Any) -> bool:
    """Whether any record of a batch object carries a `control` object (then it is a control batch
    unless it says otherwise)."""
    return type(records) is list and any(type(r) is dict and "control" in r for r in records)


def check_control_records(given: list, records: list, producer: Any, bad: Bad) -> None:
    """The records of a control batch (`given` as in the line, `records` as completed, whose key
    and value are filled in from `control` when left out), each refused when Kafka could not read
    it; with a producer, the first must be a transaction marker, as recovery reads it."""
    for i, (src, out) in enumerate(zip(given, records)):
        if type(src) is not dict or type(out) is not dict:
            continue  # reported already
        kind = _record(src, out, f"records[{i}].", bad)
        if i == 0 and type(producer) is int and producer >= 0 and kind is not None and kind not in MARKER_TYPES:
            bad(f"records[{i}].key", f"type {kind} ({CONTROL_TYPE_NAMES.get(kind, 'UNKNOWN')}), but the first record "
                                     f"of producer {producer}'s control batch is read as a transaction marker (ABORT "
                                     "or COMMIT) by a broker's recovery, which any other type stops")


def refuse_control_outside(given: list, why: str, bad: Bad) -> None:
    """`control` on records of a batch that is not a control batch."""
    for i, r in enumerate(given):
        if type(r) is dict and "control" in r:
            bad(f"records[{i}].control", f"given, but {why}")


def _record(src: dict, out: dict, where: str, bad: Bad) -> int | None:
    """One control record; its type as its key gives it, None when unknown."""
    control = src.get("control")
    if control is not None and type(control) is not dict:
        bad(where + "control", "not a JSON object ({\"type\": ..., \"version\": ...})")
        control = None
    wanted = _wanted(control, src.get("key") is not None, where, bad) if control is not None else None
    if src.get("key") is None and wanted is not None and wanted[0] is not None:
        out["key"] = _b64(key_bytes(wanted[0], wanted[1]))
    if out.get("key") is not None and _bytes(out["key"]) is None:
        return None  # not base64: reported as such
    key = _bytes(out.get("key"))
    if key is None:
        bad(where + "key", "null, but a control record's key is its version and type (4 bytes; Kafka's reader fails "
                           "on a null one): give the key, or control with its type")
        return None
    fields, why = read_key(key)
    if why is not None:
        bad(where + "key", why)
    if fields is None:
        return None
    version, kind = fields
    if wanted is not None and src.get("key") is not None:
        if (wanted[0] if wanted[0] is not None else "UNKNOWN") != (kind if kind in CONTROL_TYPE_NAMES else "UNKNOWN"):
            bad(where + "control.type", f"{control.get('type')}, but the key's type is {kind} "
                                        f"({CONTROL_TYPE_NAMES.get(kind, 'UNKNOWN')})")
        if "version" in control and wanted[1] != version:
            bad(where + "control.version", f"{wanted[1]}, but the key's version is {version}")
    if kind in MARKER_TYPES:
        _marker_value(src, out, control, where, bad)
    return kind


def _wanted(control: dict, key_given: bool, where: str, bad: Bad) -> tuple[int | None, int] | None:
    """(type id, key version) a `control` object asks for; the type None when it names none known
    (`dump --json` shows a type it does not know as UNKNOWN, with the key's bytes)."""
    kind = control.get("type")
    kind_id = TYPE_IDS.get(kind) if type(kind) is str else None
    if kind_id is None and not (kind == "UNKNOWN" and key_given):
        bad(where + "control.type", f"{_show(kind)} is not one of {', '.join(TYPE_IDS)} (for another type, give the "
                                    "key's bytes)")
    version = control.get("version", 0)
    if type(version) is not int or not 0 <= version <= INT16_MAX:
        bad(where + "control.version", f"{_show(version)} is not 0 to 32767 (Kafka refuses a negative key version)")
        return None
    return kind_id, version


def _marker_value(src: dict, out: dict, control: dict | None, where: str, bad: Bad) -> None:
    """A transaction marker's value: built from control's coordinatorEpoch when left out; checked."""
    epoch = control.get("coordinatorEpoch") if control is not None else None
    if epoch is not None and (type(epoch) is not int or not INT32_MIN <= epoch <= INT32_MAX):
        bad(where + "control.coordinatorEpoch", f"{_show(epoch)} is not a 32-bit integer")
        return
    if src.get("value") is None and epoch is not None:
        out["value"] = _b64(marker_value_bytes(epoch))
    if out.get("value") is not None and _bytes(out["value"]) is None:
        return  # not base64: reported as such
    value = _bytes(out.get("value"))
    if value is None:
        bad(where + "value", "null, but a transaction marker's value holds its version and coordinator epoch "
                             f"({MARKER_VALUE_SIZE} bytes): give the value, or control.coordinatorEpoch")
        return
    fields, why = read_marker_value(value)
    if why is not None:
        bad(where + "value", why)
    if fields is None:
        return
    given_epoch = fields[1]
    if epoch is not None and src.get("value") is not None and epoch != given_epoch:
        bad(where + "control.coordinatorEpoch", f"{epoch}, but the value's coordinator epoch is {given_epoch}")


def _bytes(text: Any) -> bytes | None:
    if type(text) is not str:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
