"""The framing Confluent's serializers write before a payload: magic byte 0 and a 4-byte
big-endian schema id, or magic byte 1 and a 16-byte GUID (schema-registry 8's form); Protobuf
payloads then carry the path of their message type in the schema as message indexes. The newer
serializers may instead put the magic and id in a record header (`__value_schema_id`,
`__key_schema_id`) and leave the payload bare."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from kafkacodec.runtime.errors import DecodeError, TruncatedError
from kafkacodec.runtime.varint import read_zigzag32

from .problems import NOT_FRAMED, TRUNCATED, UndecodableValue

MAGIC_ID = 0  # then the schema id, a signed 32-bit big-endian integer
MAGIC_GUID = 1  # then the schema's GUID, 16 bytes
ID_WIDTH = 4
GUID_WIDTH = 16
HEADER_OF = {False: "__value_schema_id", True: "__key_schema_id"}
MAX_INDEXES = 1 << 16  # more message indexes than any schema nests types: damage, not a path


@dataclass(frozen=True)
class SchemaRef:
    """Which schema a payload names: an id, or a GUID (as its UUID text)."""
    id: int | None = None
    guid: str | None = None

    def __str__(self) -> str:
        return f"id {self.id}" if self.id is not None else f"GUID {self.guid}"


@dataclass(frozen=True)
class Framed:
    ref: SchemaRef
    body_at: int  # where what follows the framing starts: in the header that named the schema, or the payload
    header: bytes | None = None  # that header's bytes; None when the payload's own prefix named it

    @property
    def in_header(self) -> bool:
        return self.header is not None


def _ref(data: bytes, at: int, what: str) -> tuple[SchemaRef, int]:
    if len(data) <= at:
        raise UndecodableValue(NOT_FRAMED, f"{what} is empty: no magic byte and schema id", at)
    magic = data[at]
    if magic == MAGIC_ID:
        if len(data) < at + 1 + ID_WIDTH:
            raise UndecodableValue(TRUNCATED, f"{what} ends inside its schema id ({len(data) - at} bytes)", at)
        return SchemaRef(id=int.from_bytes(data[at + 1:at + 1 + ID_WIDTH], "big", signed=True)), at + 1 + ID_WIDTH
    if magic == MAGIC_GUID:
        if len(data) < at + 1 + GUID_WIDTH:
            raise UndecodableValue(TRUNCATED, f"{what} ends inside its schema GUID ({len(data) - at} bytes)", at)
        guid = str(uuid.UUID(bytes=bytes(data[at + 1:at + 1 + GUID_WIDTH])))
        return SchemaRef(guid=guid), at + 1 + GUID_WIDTH
    raise UndecodableValue(NOT_FRAMED, f"{what} starts with byte {magic}, not a schema registry's magic byte "
                                       f"({MAGIC_ID} or {MAGIC_GUID})", at)


def header_value(headers, is_key: bool) -> bytes | None:
    """The last header that carries the key's or value's schema id, as Kafka's consumers read
    headers: the last one of a name wins."""
    name = HEADER_OF[is_key]
    found = None
    for header in headers or ():
        key = header.key if isinstance(header.key, str) else bytes(header.key).decode("utf-8", "replace")
        if key == name:
            found = header.value
    return found


def unframe(data: bytes, headers=(), is_key: bool = False) -> Framed:
    """Which schema `data` names and where what follows starts. A header wins, as Confluent's
    deserializers read it; its bytes are then what message indexes are read from."""
    in_header = header_value(headers, is_key)
    if in_header is not None:
        ref, end = _ref(in_header, 0, f"header {HEADER_OF[is_key]}")
        return Framed(ref, end, in_header)
    ref, end = _ref(data, 0, "the key" if is_key else "the value")
    return Framed(ref, end)


def _zigzag_varint(data: bytes, at: int) -> tuple[int, int]:
    """A message index: a zig-zag varint as Kafka writes them (ByteUtils.writeVarint)."""
    try:
        return read_zigzag32(data, at, len(data))
    except TruncatedError:
        raise UndecodableValue(TRUNCATED, "the message indexes end inside a varint", at) from None
    except DecodeError as err:
        raise UndecodableValue(NOT_FRAMED, f"a message index is not a varint: {err.message}", at) from None


def message_indexes(data: bytes, at: int) -> tuple[list[int], int]:
    """The path of a Protobuf payload's message type (indexes into the schema's top-level messages,
    then nested ones) and where the payload starts. A count of 0 stands for [0], the first message."""
    count, at = _zigzag_varint(data, at)
    if count == 0:
        return [0], at
    if not 0 < count <= MAX_INDEXES:
        raise UndecodableValue(NOT_FRAMED, f"{count} message indexes: not a Protobuf message's path", at)
    indexes = []
    for _ in range(count):
        index, at = _zigzag_varint(data, at)
        if index < 0:
            raise UndecodableValue(NOT_FRAMED, f"message index {index} is negative", at)
        indexes.append(index)
    return indexes, at
