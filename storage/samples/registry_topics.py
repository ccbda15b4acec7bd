"""The sample's topics of records in Confluent's framing, and the schema registry's own storage
topic that describes them, as a registry writes it:

- _schemas-0: the global compatibility config, `shop.orders-value` in two versions (the second
  adds a field with a default), `shop.shipments-value` (Protobuf) and `shop.reviews-value` (JSON
  Schema), and a `shop.drafts-value` version soft-deleted after use (its id still reads);
- shop.orders-0: Avro values of both versions of `shop.orders-value`, string keys;
- shop.shipments-0: Protobuf values, their message indexes included;
- shop.reviews-0: JSON values of a JSON Schema, a value of the soft-deleted draft, and one whose
  id the registry no longer holds (what a permanent delete leaves).

The payloads are spelled here byte by byte (Avro's and protobuf's binary encodings of fixed
schemas), so that writing the sample needs nothing beyond the package itself."""
from __future__ import annotations

import json
import struct

from kafkacodec.runtime.varint import write_uvarint, write_zigzag64

from ..change.writer import PartitionWriter

T0 = 1_600_000_000_000 + 300_000
ORDER_V1 = {"type": "record", "name": "Order", "namespace": "sample.shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"}, {"name": "total_cents", "type": "long"},
    {"name": "coupon", "type": ["null", "string"], "default": None}]}
ORDER_V2 = dict(ORDER_V1, fields=ORDER_V1["fields"] + [{"name": "channel", "type": "string", "default": "web"}])
SHIPMENT_PROTO = ('syntax = "proto3";\npackage sample.shop;\n\nmessage Shipment {\n  string order_id = 1;\n'
                  '  int64 weight_grams = 2;\n  repeated string items = 3;\n}\n')
REVIEW_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Review", "type": "object",
                 "properties": {"order_id": {"type": "integer"}, "stars": {"type": "integer", "minimum": 1, "maximum": 5},
                                "text": {"type": "string"}}, "required": ["order_id", "stars"]}
DRAFT = {"type": "record", "name": "Draft", "namespace": "sample.shop", "fields": [{"name": "n", "type": "int"}]}
# (subject, version, id, type, schema text); ids as a registry hands them out
VERSIONS = [("shop.orders-value", 1, 1, "AVRO", json.dumps(ORDER_V1, separators=(",", ":"))),
            ("shop.orders-value", 2, 2, "AVRO", json.dumps(ORDER_V2, separators=(",", ":"))),
            ("shop.shipments-value", 1, 3, "PROTOBUF", SHIPMENT_PROTO),
            ("shop.reviews-value", 1, 4, "JSON", json.dumps(REVIEW_SCHEMA, separators=(",", ":"))),
            ("shop.drafts-value", 1, 5, "AVRO", json.dumps(DRAFT, separators=(",", ":")))]
GONE_ID = 6


def _compact(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _framed(schema_id: int, payload: bytes, indexes: bytes = b"") -> bytes:
    return b"\x00" + struct.pack(">i", schema_id) + indexes + payload


def _avro_long(n: int) -> bytes:
    out = bytearray()
    write_zigzag64(out, n)
    return bytes(out)


def _avro_string(s: str) -> bytes:
    data = s.encode()
    return _avro_long(len(data)) + data


def order(i: int, version: int) -> bytes:
    body = _avro_long(1000 + i) + _avro_string(f"customer-{i % 4}") + _avro_long(1999 + 250 * i)
    body += _avro_long(0) if i % 3 else _avro_long(1) + _avro_string(f"SPRING{i}")  # the union's branch, then its value
    if version == 2:
        body += _avro_string("app" if i % 2 else "web")
    return _framed(version, body)


def _proto_field(number: int, wire_type: int, payload: bytes) -> bytes:
    out = bytearray()
    write_uvarint(out, number << 3 | wire_type)
    if wire_type == 2:
        write_uvarint(out, len(payload))
    return bytes(out) + payload


def shipment(i: int) -> bytes:
    weight = bytearray()
    write_uvarint(weight, 250 * (i + 1))
    body = _proto_field(1, 2, str(1000 + i).encode()) + _proto_field(2, 0, bytes(weight))
    for item in ("book", "lamp", "mug")[:i % 3 + 1]:
        body += _proto_field(3, 2, item.encode())
    return _framed(3, body, indexes=b"\x00")  # [0]: the schema's first message


def review(i: int) -> bytes:
    return _framed(4, _compact({"order_id": 1000 + i, "stars": 1 + i % 5, "text": f"review {i}"}))


def _schemas_0(w: PartitionWriter) -> None:
    at = T0
    w.append([{"key": _compact({"keytype": "CONFIG", "magic": 0}), "value": _compact({"compatibilityLevel": "BACKWARD"}),
               "timestamp": at}])
    for subject, version, schema_id, kind, text in VERSIONS:
        at += 1000
        value = {"subject": subject, "version": version, "id": schema_id}
        if kind != "AVRO":  # left out for Avro, as registries before 8.0 write it
            value["schemaType"] = kind
        key = _compact({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})
        w.append([{"key": key, "value": _compact(dict(value, schema=text, deleted=False)), "timestamp": at}])
    at += 1000  # the draft's version soft-deleted: its record re-written
    subject, version, schema_id, kind, text = VERSIONS[-1]
    w.append([{"key": _compact({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}),
               "value": _compact({"subject": subject, "version": version, "id": schema_id, "schema": text,
                                  "deleted": True}), "timestamp": at},
              {"key": _compact({"keytype": "NOOP", "magic": 0}), "value": None, "timestamp": at}])


def _orders_0(w: PartitionWriter) -> None:
    for i in range(12):
        w.append([{"key": f"order-{1000 + i}".encode(), "value": order(i, 1 if i < 6 else 2),
                   "timestamp": T0 + 10_000 + 1000 * i}], compression="lz4" if i % 2 else "none")


def _shipments_0(w: PartitionWriter) -> None:
    w.append([{"key": str(1000 + i).encode(), "value": shipment(i), "timestamp": T0 + 30_000 + 1000 * i,
               "headers": [("carrier", b"post")]} for i in range(6)], compression="snappy")


def _reviews_0(w: PartitionWriter) -> None:
    w.append([{"key": None, "value": review(i), "timestamp": T0 + 50_000 + 1000 * i} for i in range(5)])
    w.append([{"key": None, "value": _framed(5, _avro_long(-7)), "timestamp": T0 + 56_000}])  # the draft's id
    w.append([{"key": None, "value": _framed(GONE_ID, b"\x02\x06old"), "timestamp": T0 + 57_000}])


PARTITIONS = {("_schemas", 0): _schemas_0, ("shop.orders", 0): _orders_0, ("shop.shipments", 0): _shipments_0,
              ("shop.reviews", 0): _reviews_0}
