"""Generated messages as Kafka's JSON converters write them (camelCase names, UUIDs and bytes as
Kafka prints them) and back, from the facts the generated classes carry, and JSON as Jackson
writes it."""
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


def _camel(name: str) -> str:
    """Kafka's JSON name of a field, lower camel case of its id (a schema's -json names the others)."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def message_json(obj) -> object:
    """A generated message as Kafka's JSON converters write it: camelCase names (or the schema's
    -json name) in the message's order of fields, strings and byte arrays unwrapped (bytes in
    base64), booleans and UUIDs as the schema's -json says; left out are the fields the schema
    derives (lengths, counts), a nullable struct's null marker, the fields the message's version
    does not have, and named tagged fields that hold their default."""
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
        if n in tagged and getattr(node, n) == tagged[n][1]:
            continue
        names.append(n)
    return names


def _plain(value) -> object:
    if is_node(value):  # its own fields, not the derived ones (a field Kafka names DeliveryCount stays)
        names = _shown_fields(value)
        if names == ["value"]:  # a string, bytes or tagged value of the message encodings
            return _plain(value.value)
        return {_json_name(value, n): _as(getattr(value, n), _shown_as(value, n)) for n in names}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, IntEnum):  # Kafka's messages have numbers where a schema names them
        return int(value)
    return value


def _as(value, shown_as: str | None) -> object:
    """A field's value as its schema's -json says Kafka shows it: bool (a byte), uuid (16 bytes)."""
    if value is None or shown_as is None:
        return _plain(value)
    if isinstance(value, list):
        return [_as(v, shown_as) for v in value]
    return value != 0 if shown_as == "bool" else uuid_text(value)


def message_from_json(cls: type, data: dict, **params):
    """The generated message `cls` from Kafka's JSON of it (message_json's inverse), at the
    params given (a message's version): the fields the version has, named tagged fields the
    version defines set where the JSON gives them other than their default. A field the JSON
    lacks is a KeyError."""
    types, tagged = cls._field_types, getattr(cls, "_tagged", {})
    present_when, switch_on = getattr(cls, "_present_when", {}), getattr(cls, "_switch_on", {})
    values = [params[p] for p in cls._params]
    fields = {}
    for n in cls._eq_fields:
        if n in cls._params or n in present_when and not present_when[n](*values):
            continue
        if _null_marker(n, cls._eq_fields):  # the int8 before a nullable struct
            fields[n] = -1 if data[_json_name(cls, n.removesuffix("_present"))] is None else 1
        elif n == getattr(cls, "_tag_section", None):
            given = {t: data[_json_name(cls, t)] for t in tagged if _json_name(cls, t) in data
                     and (t not in present_when or present_when[t](*values))}
            fields[n] = _tag_section(types[n], given, cls, params)
        elif n in SKIPPED:  # a section without named tags: none written
            fields[n] = types[n](fields=[])
        else:
            kind = types[n]
            if n in switch_on:  # a case the params decide (a string's encoding, by version)
                cases = cls._switch_cases[n]
                kind = cases.get(switch_on[n](*values), cases.get(None))
            fields[n] = _from_json(kind, data[_json_name(cls, n)], _shown_as(cls, n), params)
    return cls(**params, **fields)


def _json_name(cls: type, field: str) -> str:
    return getattr(cls, "_json", {}).get(field, (None, None))[0] or _camel(field)


def _shown_as(cls: type, field: str) -> str | None:
    return getattr(cls, "_json", {}).get(field, (None, None))[1]


def _from_json(kind, value, shown_as: str | None, params: dict):
    """A field's value of type `kind` (see the generated _field_types) from its JSON."""
    if value is None:  # a null string or bytes is a wrapper holding None; anything else, None
        wraps = isinstance(kind, type) and getattr(kind, "_eq_fields", None) == ("value",)
        return kind(value=None) if wraps else None
    if isinstance(kind, list):
        return [_from_json(kind[0], v, shown_as, params) for v in value]
    if shown_as == "uuid":
        return base64.urlsafe_b64decode(value + "==")
    if shown_as == "bool":
        return 1 if value else 0
    if kind is bytes:
        return base64.b64decode(value)
    if kind in (int, float, str, bool):
        return kind(value)
    if kind is object:
        raise ValueError("a switch's case cannot be told from JSON")
    own = [f for f in kind._eq_fields if f not in kind._params]
    if own == ["value"]:  # a string or bytes of the message encodings
        return kind(value=_from_json(kind._field_types["value"], value, None, params))
    # a nested struct takes the message's params too, in their order, perhaps under other names
    # (a struct with a field named version calls its param message_version)
    return message_from_json(kind, value, **dict(zip(kind._params, params.values())))


def _tag_section(section: type, given: dict, owner: type, params: dict):
    """A tagged-field section holding the named tags `given` whose values are not their
    defaults, by tag, as Kafka writes them."""
    item = section._field_types["fields"][0]
    fields = []
    for name, (tag, default) in sorted(owner._tagged.items(), key=lambda t: t[1][0]):
        if name not in given:
            continue
        wrapper = item._switch_cases["data"][tag]
        held = wrapper._eq_fields[0]
        value = _from_json(wrapper._field_types[held], given[name], _shown_as(owner, name), params)
        if value != default:
            fields.append(item(tag=tag, data=wrapper(**{held: value})))
    return section(fields=fields)


def _null_marker(name: str, names: tuple[str, ...]) -> bool:
    """`x_present` before a nullable struct `x`: the int8 Kafka writes in front of it."""
    return name.endswith("_present") and name.removesuffix("_present") in names


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
