"""Keys and values as kafka-dump-log prints them without a decoder, and what every decoder of an
internal topic's records shares: the record decoded or the line Kafka prints in its place, and
the failures that end the tool's run."""
from __future__ import annotations

from kafkacodec.runtime.errors import DecodeError


def utf8(record) -> tuple[str | None, str | None]:
    text = (lambda b: None if b is None else bytes(b).decode("utf-8", errors="replace"))
    return text(record.key), text(record.value)


def decoded(record, decode):
    """The record decoded, or the line Kafka's tool prints in place of its key when it cannot be."""
    if record.key is None:
        return None, f"Error at offset {record.offset}, skipping. Record has no key"
    try:
        return decode(bytes(record.key), None if record.value is None else bytes(record.value)), None
    except DecodeError as err:
        return None, f"Error at offset {record.offset}, skipping. {err}"


class DecoderFailure(Exception):
    """A key or value a decoder cannot read at all, which ends the run of Kafka's tool."""


class MissingKey(DecoderFailure):
    """A record without a key, which Kafka's coordinator decoders cannot read."""

    def __init__(self, offset: int):
        super().__init__(f"the record at offset {offset} has no key, which the decoder needs")


def keyed(record) -> bytes:
    if record.key is None:
        raise MissingKey(record.offset)
    return bytes(record.key)
