"""A log dir of records serialized by confluent-kafka's own Avro, Protobuf and JSON Schema
serializers against a registry stub on 127.0.0.1 (tests.support.peers.registry_stub), produced
through librdkafka to its in-process mock cluster and fetched back raw, with the registry's
`_schemas` records produced the same way. What each serializer was given is returned beside it.

The schemas: Avro `orders-value` in two versions (v2 adds a field with a default), a Protobuf
schema that imports another registered one (a reference) and the well-known Timestamp, a JSON
Schema with a `$ref` to another registered one, and `retired-value`, whose version is soft-deleted
after its records were written, then a subject deleted for good (its records name an id the
registry no longer holds)."""
from __future__ import annotations

import decimal
import importlib
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.peers.librdkafka import produce_and_fetch
from tests.support.peers.registry_stub import RegistryStub

NOW = 1_790_000_000_000
ORDER_V1 = ('{"type":"record","name":"Order","namespace":"shop","fields":['
            '{"name":"id","type":"long"},{"name":"customer","type":"string"},'
            '{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},'
            '{"name":"note","type":["null","string"],"default":null}]}')
ORDER_V2 = ORDER_V1[:-2] + ',{"name":"channel","type":"string","default":"web"}]}'
MONEY_PROTO = 'syntax = "proto3";\npackage shop;\n\nmessage Money {\n  string currency = 1;\n  int64 units = 2;\n}\n'
PAYMENT_PROTO = ('syntax = "proto3";\npackage shop;\n\nimport "shop/money.proto";\nimport "google/protobuf/timestamp.proto";\n\n'
                 'message Payment {\n  string id = 1;\n  shop.Money amount = 2;\n  repeated string tags = 3;\n'
                 '  google.protobuf.Timestamp at = 4;\n  Kind kind = 5;\n  enum Kind { CARD = 0; TRANSFER = 1; }\n}\n\n'
                 'message Refund {\n  string payment_id = 1;\n  bool full = 2;\n}\n')
ADDRESS_JSON = ('{"$id":"address.json","type":"object","properties":{"city":{"type":"string"},'
                '"zip":{"type":"string"}},"required":["city"]}')
EVENT_JSON = ('{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{'
              '"kind":{"type":"string"},"count":{"type":"integer"},"where":{"$ref":"address.json"}},'
              '"required":["kind","count"]}')
RETIRED = '{"type":"record","name":"Retired","fields":[{"name":"n","type":"int"}]}'
GONE = '{"type":"record","name":"Gone","fields":[{"name":"s","type":"string"}]}'


@dataclass
class Corpus:
    root: Path
    given: dict[str, list] = field(default_factory=dict)  # topic -> what each record's serializer was given
    keys: dict[str, list] = field(default_factory=dict)
    records: list[tuple[bytes, bytes | None]] = field(default_factory=list)  # the `_schemas` records
    pb: object = None  # the compiled Protobuf module


def _compile_protos(work: Path):
    import grpc_tools

    (work / "shop").mkdir(parents=True)
    (work / "shop" / "money.proto").write_text(MONEY_PROTO)
    (work / "shop" / "payment.proto").write_text(PAYMENT_PROTO)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{work}",
                    f"-I{Path(grpc_tools.__file__).parent / '_proto'}", f"--python_out={work}",
                    "shop/money.proto", "shop/payment.proto"], check=True, capture_output=True)
    sys.path.insert(0, str(work))
    try:
        importlib.invalidate_caches()
        return importlib.import_module("shop.payment_pb2")
    finally:
        sys.path.remove(str(work))


def _segment(root: Path, topic: str, messages) -> None:
    data = produce_and_fetch(messages, topic=topic)
    part = root / f"{topic}-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(data)


def build(root: Path, work: Path) -> Corpus:
    from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

    pb = _compile_protos(work / "protos")
    corpus = Corpus(root, pb=pb)
    strings = StringSerializer()
    with RegistryStub() as stub:
        client = SchemaRegistryClient({"url": stub.url})

        def ctx(topic):
            return SerializationContext(topic, MessageField.VALUE)

        # Avro: v1 records, then v2 (a field added with a default)
        orders = []
        v1 = AvroSerializer(client, ORDER_V1)
        given = [{"id": i, "customer": f"c{i}", "amount": decimal.Decimal(f"{i}.{i:02d}"),
                  "note": None if i % 2 else f"note {i}"} for i in range(3)]
        orders += [(v1(v, ctx("orders")), v) for v in given]
        v2 = AvroSerializer(client, ORDER_V2)
        given = [{"id": 10 + i, "customer": "ü-" + str(i), "amount": decimal.Decimal("-1.50"), "note": None,
                  "channel": "shop"} for i in range(2)]
        orders += [(v2(v, ctx("orders")), v) for v in given]
        _produce(root, corpus, "orders", orders, strings)

        # Protobuf: registered as .proto text with its reference, used as the latest version
        client.register_schema("shop/money.proto", Schema(MONEY_PROTO, "PROTOBUF"))
        client.register_schema("payments-value", Schema(PAYMENT_PROTO, "PROTOBUF",
                                                        [SchemaReference("shop/money.proto", "shop/money.proto", 1)]))
        conf = {"auto.register.schemas": False, "use.latest.version": True}
        pay, refund = ProtobufSerializer(pb.Payment, client, conf), ProtobufSerializer(pb.Refund, client, conf)
        payments = []
        for i in range(3):
            m = pb.Payment(id=f"p{i}", tags=["a"] * i, kind=i % 2)
            m.amount.currency, m.amount.units = "EUR", 10 ** (i * 6)
            m.at.seconds = 1_700_000_000 + i
            payments.append((pay(m, ctx("payments")), m))
        r = pb.Refund(payment_id="p1", full=True)
        payments.append((refund(r, ctx("payments")), r))
        _produce(root, corpus, "payments", payments, strings)

        # JSON Schema with a reference
        client.register_schema("address.json", Schema(ADDRESS_JSON, "JSON"))
        client.register_schema("events-value", Schema(EVENT_JSON, "JSON", [SchemaReference("address.json",
                                                                                           "address.json", 1)]))
        events_ser = JSONSerializer(EVENT_JSON, client, conf={"auto.register.schemas": False, "use.latest.version": True})
        given = [{"kind": "click", "count": 1, "where": {"city": "Lyon", "zip": "69001"}}, {"kind": "view", "count": 2}]
        _produce(root, corpus, "events", [(events_ser(v, ctx("events")), v) for v in given], strings)

        # a version soft-deleted after its records were written, and a subject deleted for good
        retired = AvroSerializer(client, RETIRED)
        gone = AvroSerializer(client, GONE)
        written = [(retired({"n": 1}, ctx("retired")), {"n": 1}), (gone({"s": "x"}, ctx("gone")), None)]
        client.delete_version("retired-value", 1)
        client.delete_version("gone-value", 1)
        client.delete_version("gone-value", 1, permanent=True)
        _produce(root, corpus, "retired", written, strings)
        corpus.records = list(stub.store.records)
    _segment(root, "_schemas", [(k, v, None, NOW + i) for i, (k, v) in enumerate(corpus.records)])
    return corpus


def _produce(root: Path, corpus: Corpus, topic: str, serialized, strings) -> None:
    corpus.given[topic] = [given for _, given in serialized]
    corpus.keys[topic] = [f"k{i}" for i in range(len(serialized))]
    _segment(root, topic, [(strings(k), value, [("origin", b"corpus")], NOW + i)
                           for i, (k, (value, _)) in enumerate(zip(corpus.keys[topic], serialized))])


def corpus_fixture(tmp_path_factory) -> Corpus:
    """The corpus for a test module (`corpus = pytest.fixture(scope="module")(corpus_fixture)`); skipped
    where confluent-kafka's schema registry serializers are not installed."""
    import pytest

    pytest.importorskip("confluent_kafka.schema_registry.avro")
    tmp = tmp_path_factory.mktemp("values")
    return build(tmp / "logs", tmp / "work")
