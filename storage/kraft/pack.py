"""A KRaft metadata record's value from its JSON ({"type", "version", "data"} as
metadata_records.record_json gives it): the frame, then the fields in the spec's order, tagged
fields written when they differ from their default. It writes the sample's metadata log and
records that tests replay; reading back gives the same JSON."""
from __future__ import annotations

import base64
import struct

from .records import FRAME_VERSION, TYPES

BY_NAME = {name: api_key for api_key, (name, _, _) in TYPES.items()}

# ints other than int32, by (api key, field): Kafka's spec widths as struct formats
WIDTHS = {
    (0, "brokerEpoch"): ">q", (1, "brokerEpoch"): ">q", (3, "leaderRecoveryState"): ">b",
    (4, "resourceType"): ">b", (5, "leaderRecoveryState"): ">b", (7, "epoch"): ">q", (8, "epoch"): ">q",
    (10, "issueTimestamp"): ">q", (10, "maxTimestamp"): ">q", (10, "expirationTimestamp"): ">q",
    (11, "mechanism"): ">b", (12, "featureLevel"): ">h", (15, "brokerEpoch"): ">q",
    (15, "nextProducerId"): ">q", (17, "brokerEpoch"): ">q", (17, "fenced"): ">b",
    (17, "inControlledShutdown"): ">b", (18, "resourceType"): ">b", (18, "patternType"): ">b",
    (18, "operation"): ">b", (18, "permissionType"): ">b", (21, "zkMigrationState"): ">b",
    (22, "mechanism"): ">b",
}

# the structs' fields, in order: (name, kind or struct format)
STRUCTS = {
    "endPoints": (("name", "string"), ("host", "string"), ("port", ">H"), ("securityProtocol", ">h")),
    "features": (("name", "string"), ("minSupportedVersion", ">h"), ("maxSupportedVersion", ">h")),
    "entity": (("entityType", "string"), ("entityName", "string")),
}


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _uuid(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "==")


def _array(items, pack) -> bytes:
    return uvarint(0) if items is None else uvarint(len(items) + 1) + b"".join(pack(i) for i in items)


def _string(text: str | None) -> bytes:
    return uvarint(0) if text is None else uvarint(len(text.encode()) + 1) + text.encode()


def _struct(fields, obj: dict) -> bytes:
    out = b"".join(_value(obj[name], kind, kind) for name, kind in fields)
    return out + uvarint(0)  # no tagged fields


def _value(value, kind: str, width: str) -> bytes:
    if kind == "int":
        return struct.pack(width, value)
    if kind.startswith(">"):
        return struct.pack(kind, value)
    if kind == "bool":
        return b"\x01" if value else b"\x00"
    if kind == "uuid":
        return _uuid(value)
    if kind == "uuids":
        return _array(value, _uuid)
    if kind == "ints":
        return _array(value, lambda i: struct.pack(">i", i))
    if kind == "string":
        return _string(value)
    if kind == "strings":
        return _array(value, _string)
    if kind == "bytes":
        raw = base64.b64decode(value)
        return uvarint(len(raw) + 1) + raw
    if kind == "float":
        return struct.pack(">d", value)
    raise ValueError(f"no packing for {kind}")


def pack(obj: dict) -> bytes:
    """The value of the record `obj`; a tagged field missing from its data takes its default."""
    api_key = BY_NAME[obj["type"]]
    version, data = obj["version"], obj["data"]
    _, _, fields = TYPES[api_key]
    out = [uvarint(FRAME_VERSION), uvarint(api_key), uvarint(version)]
    tagged = []
    for field in fields:
        name, source, kind, since = field[:4]
        if version < since:
            continue
        width = WIDTHS.get((api_key, name), ">i")
        if kind == "structs":
            encoded = _array(data[name], lambda item, f=STRUCTS[name]: _struct(f, item))
        else:
            encoded = None
        if isinstance(source, int):
            value = data.get(name, field[4])
            if value != field[4]:
                tagged.append((source, _value(value, kind, width)))
            continue
        out.append(encoded if encoded is not None else _value(data[name], kind, width))
    tagged.sort()
    out.append(uvarint(len(tagged)))
    out += [uvarint(tag) + uvarint(len(body)) + body for tag, body in tagged]
    return b"".join(out)
