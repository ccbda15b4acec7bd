"""Generated messages as Kafka's JSON converters write them (camelCase names, UUIDs and bytes as
Kafka prints them), and JSON as Jackson writes it."""
from __future__ import annotations

import base64
import json
import re
from enum import IntEnum

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.node import is_node

SKIPPED = {"tagged_fields"}
# control record type id -> Kafka's name for it, from the schema's enum
CONTROL_TYPE_NAMES = {t.value: t.name.upper() for t in ControlRecord.ControlType}


# Kafka's JSON names that lower-camel-casing our snake_case names does not give back
KAFKA_NAMES = {"kraftVersion": "kRaftVersion", "kraftVersionFeature": "kRaftVersionFeature"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    camel = head + "".join(p.title() for p in rest)
    return KAFKA_NAMES.get(camel, camel)


def message_json(obj) -> object:
    """A generated message as Kafka's JSON converters write it: camelCase names in the
    message's order of fields, strings and byte arrays unwrapped (bytes in base64), UUIDs as
    Kafka prints them; left out are the fields the schema derives (lengths, counts), a nullable
    struct's null marker, the fields the message's version does not have, and named tagged
    fields that hold their default."""
    return _plain(obj)


def _shown_fields(node) -> list[str]:
    """The fields of a generated message its JSON shows, in order (see message_json)."""
    present_when = getattr(node, "_present_when", {})
    tagged = getattr(node, "_tagged", {})
    params = [getattr(node, p) for p in node._params]
    names = []
    for n in getattr(node, "_field_order", node._eq_fields):
        if n in SKIPPED or n in node._params or _null_marker(n, node._eq_fields):
            continue
        if n in present_when and not present_when[n](*params):
            continue
        if n in tagged and getattr(node, n) == tagged[n]:
            continue
        names.append(n)
    return names


def _plain(value) -> object:
    if is_node(value):  # its own fields, not the derived ones (a field Kafka names DeliveryCount stays)
        names = _shown_fields(value)
        if names == ["value"]:  # a string, bytes or tagged value of the message encodings
            return _plain(value.value)
        return {_camel(n): _field(n, getattr(value, n)) for n in names}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, IntEnum):  # Kafka's messages have numbers where a schema names them
        return int(value)
    if not isinstance(value, dict):
        return value
    if set(value) <= {"length", "length_plus_one", "value"}:  # a string or bytes as to_dict gives it
        return _plain(value.get("value"))
    return {_camel(k): _field(k, v) for k, v in value.items()
            if k not in SKIPPED and not k.endswith(("_count", "_count_plus_one", "_length"))}


def _field(name: str, value) -> object:
    return uuid_text(value) if _is_uuid(name, value) else _plain(value)


def _null_marker(name: str, names: tuple[str, ...]) -> bool:
    """`x_present` before a nullable struct `x`: the int8 Kafka writes in front of it."""
    return name.endswith("_present") and name.removesuffix("_present") in names


def _is_uuid(name: str, value) -> bool:
    return (name == "id" or name.endswith("_id")) and isinstance(value, (bytes, bytearray)) and len(value) == 16


def uuid_text(value: bytes) -> str:
    """Kafka prints a Uuid as URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(bytes(value)).decode("ascii").rstrip("=")


def jackson(value) -> str:
    """JSON as Jackson writes it: compact, non-ASCII as is, other control characters as \\u00XX
    with upper-case hex (Python's json writes lower-case)."""
    text = _dumps(value)
    return re.sub(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})", lambda m: m[1] + "\\u00" + m[2].upper(), text)


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
