"""How kafka-dump-log prints keys and values: Kafka's decoder classes, by their names, and the
internal topics' decoders. A parser takes a record and gives (key text, payload text), None
for what is not printed; `problem`, when set, is why it cannot run at all (Kafka's tool fails
on the first log it would read with it)."""
from __future__ import annotations

from typing import Callable

from ..kraft.records import cluster_metadata
from . import decoders
from .record_text import DecoderFailure, utf8
from .remote_log_metadata import remote_log_metadata

API = "org.apache.kafka.tools.api."


class Parser:
    def __init__(self, parse: Callable[[object], tuple[str | None, str | None]], problem: str | None = None):
        self.parse, self.problem = parse, problem

    def __call__(self, record) -> tuple[str | None, str | None]:
        return self.parse(record)


def _string(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")  # Java's new String(bytes, UTF_8) replaces the same way


def _number(width: int, name: str):
    def decode(data: bytes) -> str:
        if len(data) < width:
            raise DecoderFailure(f"{name} needs {width} bytes, the record has {len(data)}")
        return str(int.from_bytes(data[:width], "big", signed=True))
    return decode


def _default(data: bytes) -> str:
    return f"[B@{id(data) & 0xFFFFFFFF:x}"  # Java prints a byte array as its identity, which says nothing


DECODERS = {API + "StringDecoder": _string, API + "IntegerDecoder": _number(4, "IntegerDecoder"),
            API + "LongDecoder": _number(8, "LongDecoder"), API + "DefaultDecoder": _default}


def classes(key_class: str | None, value_class: str | None) -> Parser:
    """`--key-decoder-class` / `--value-decoder-class` (StringDecoder when not named)."""
    chosen = []
    for name in (value_class, key_class):  # Kafka makes the value's first
        name = name or API + "StringDecoder"
        if name not in DECODERS:
            return Parser(utf8, f"decoder class {name} not found (known: {', '.join(sorted(DECODERS))})")
        chosen.append(DECODERS[name])
    value_decoder, key_decoder = chosen

    def parse(record):
        return (None if record.key is None else key_decoder(bytes(record.key)),
                None if record.value is None else value_decoder(bytes(record.value)))
    return Parser(parse)


def named(kind: str) -> Parser:
    """The internal topics' decoders: offsets, transaction-log, cluster-metadata,
    remote-log-metadata, share-group-state."""
    if kind == "cluster-metadata":
        return Parser(cluster_metadata)
    if kind == "remote-log-metadata":
        return Parser(remote_log_metadata)
    return Parser({"offsets": decoders.offsets, "transaction-log": decoders.transaction_log,
                   "share-group-state": decoders.share_group_state}[kind])
