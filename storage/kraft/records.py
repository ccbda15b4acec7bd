"""KRaft metadata records (`__cluster_metadata`) as Kafka 4.1 reads and prints them: the frame
(frame version, record type, version) checked in Kafka's order with its error messages, the
record decoded through the metadata_record schema, and the record as Kafka's JSON converters
write it (fields in the spec's order, tagged fields only when they differ from their default)."""
from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from kafkacodec.generated.metadata_record import MetadataRecord
from kafkacodec.runtime.errors import DecodeError

from kafkacodec.codec.kafka_json import jackson, message_from_json, message_json


FRAME_VERSION = 1
SHORT_MAX = 0x7FFF
LEFT_UNREAD = "bytes left unread at the end of the field"
# the schemas' switch over the framed record: api key * CASE_STEP + version (metadata_record.ksy)
CASE_STEP = 1000


class RecordType(NamedTuple):
    name: str  # Kafka's name for the record type, e.g. PARTITION_RECORD
    latest: int  # the newest version the schema reads
    cls: type  # the generated class of its body


def framed_types(root: type) -> dict[int, RecordType]:
    """The record types of a schema framed as KRaft frames its records, by api key, from the
    generated switch over api key and version: each with the name Kafka's generator gives it
    (its message's name in upper snake case) and its newest version."""
    out = {}
    for case, cls in sorted(root._switch_cases["body"].items()):
        api_key, version = divmod(case, CASE_STEP)
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls.__qualname__.rsplit(".", 1)[-1]).upper()
        out[api_key] = RecordType(name, version, cls)
    return out


TYPES = framed_types(MetadataRecord)
BY_NAME = {t.name: api_key for api_key, t in TYPES.items()}


class MetadataParseError(Exception):
    """A record Kafka's MetadataRecordSerde would not read; the message is Kafka's."""


def _uvarint(data: bytes, pos: int, entity: str) -> tuple[int, int]:
    """Java's readUnsignedVarint as an int, then Kafka's check that it fits a short."""
    value = shift = 0
    for i in range(5):
        if pos >= len(data):
            raise MetadataParseError(f"Error while reading {entity}")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if i == 4:
            raise MetadataParseError(f"Error while reading {entity}")
    value &= 0xFFFFFFFF
    value = value - (1 << 32) if value >= 1 << 31 else value  # a Java int
    if value > SHORT_MAX:
        raise MetadataParseError(f"Value for {entity} was too large.")
    value &= 0xFFFF
    return (value - (1 << 16) if value >= 1 << 15 else value), pos


def read_frame(value: bytes, known) -> tuple[int, int, int]:
    """(record type, version, where the record starts) of a value framed as Kafka's metadata
    record serdes frame it (also `__remote_log_metadata`'s), checked in their order against the
    record types `known`, or MetadataParseError in their words."""
    frame, pos = _uvarint(value, 0, "frame version")
    if frame == 0:
        raise MetadataParseError("Could not deserialize metadata record with frame version 0. Note that upgrades "
                                 "from the preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != FRAME_VERSION:
        raise MetadataParseError(f"Could not deserialize metadata record due to unknown frame version {frame}"
                                 f"(only frame version {FRAME_VERSION} is supported)")
    api_key, pos = _uvarint(value, pos, "type")
    version, pos = _uvarint(value, pos, "version")
    if api_key not in known:
        raise MetadataParseError("org.apache.kafka.common.errors.UnsupportedVersionException: "
                                 f"Unknown metadata id {api_key}")
    return api_key, version, pos


def read_record(value: bytes) -> tuple[int, int, MetadataRecord]:
    """(record type, version, the record) of a metadata record's value, or MetadataParseError
    in Kafka's words."""
    api_key, version, _ = read_frame(value, TYPES)
    if not 0 <= version <= TYPES[api_key].latest:
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}")
    try:
        record = MetadataRecord.from_bytes(value)
    except DecodeError as err:
        if err.message.endswith(LEFT_UNREAD) and err.position is not None:
            raise MetadataParseError(f"Found {len(value) - err.position} byte(s) of garbage after {api_key}") from None
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}") from None
    return api_key, version, record


def record_json(api_key: int, version: int, record: MetadataRecord) -> dict:
    """{"type": …, "version": …, "data": …} as Kafka's metadata JSON converters write it."""
    return {"type": TYPES[api_key].name, "version": version, "data": message_json(record.body)}


def pack(obj: dict) -> bytes:
    """A metadata record's value from its JSON (as record_json gives it): the frame, then the
    record at its version; a tagged field the JSON leaves out takes its default."""
    api_key, version = BY_NAME[obj["type"]], obj["version"]
    body = message_from_json(TYPES[api_key].cls, obj["data"], version=version)
    return MetadataRecord(frame_version=FRAME_VERSION, api_key=api_key, version=version, body=body).to_bytes()


class _JavaDouble:
    """A float64 field, which Jackson writes as Java's Double.toString does."""

    def __init__(self, value: float):
        self.value = value

    def text(self) -> str:
        """Java's Double.toString: plain between 10^-3 and 10^7, else d.dddE±n; shortest digits."""
        d = self.value
        if d != d or d in (float("inf"), float("-inf")):
            return "NaN" if d != d else "Infinity" if d > 0 else "-Infinity"
        sign, digit_tuple, exp = Decimal(repr(d)).as_tuple()
        digits = "".join(map(str, digit_tuple))
        point = len(digits) + exp - 1  # the power of ten of the first digit
        digits = digits.rstrip("0") or "0"
        minus = "-" if sign else ""
        if d == 0 or not 1e-3 <= abs(d) < 1e7:
            return f"{minus}{digits[0]}.{digits[1:] or '0'}" + ("" if d == 0 else f"E{point}")
        if point < 0:
            return f"{minus}0.{'0' * (-point - 1)}{digits}"
        whole = digits[:point + 1].ljust(point + 1, "0")
        return f"{minus}{whole}.{digits[point + 1:] or '0'}"


def _doubles_as(value, shown):
    """The JSON with each double replaced by `shown(the double, as Java writes it)`."""
    if isinstance(value, float):
        return shown(_JavaDouble(value))
    if isinstance(value, dict):
        return {k: _doubles_as(v, shown) for k, v in value.items()}
    if isinstance(value, list):
        return [_doubles_as(v, shown) for v in value]
    return value


def to_text(obj: dict) -> str:
    """Jackson's compact text of a record's JSON, doubles written as Java writes them (marked in
    the text, then unquoted, as Python's json cannot write a number its own way)."""
    marked = _doubles_as(obj, lambda d: f"\x00D{d.text()}\x00")
    return re.sub(r'"\\u0000D([^"\\]*)\\u0000"', r"\1", jackson(marked))


def plain(obj):
    """The JSON with doubles as Python floats, for `dump --json`."""
    return _doubles_as(obj, lambda d: d.value)


def cluster_metadata(record) -> tuple[str | None, str | None]:
    """Kafka 4.1's cluster-metadata decoder: no key; the payload is the record's JSON, or the
    line Kafka prints for a record it cannot read."""
    if record.value is None:  # Kafka's tool fails here with a null pointer; said plainly
        return None, f"Error at {record.offset}, skipping. the record has no value"
    try:
        return None, to_text(record_json(*read_record(bytes(record.value))))
    except MetadataParseError as err:
        return None, f"Error at {record.offset}, skipping. {err}"


def metadata_json(record) -> dict:
    """For `dump --json`: the object Kafka's decoder prints, or {"error": its line}."""
    if record.value is None:
        return {"error": cluster_metadata(record)[1]}
    try:
        return plain(record_json(*read_record(bytes(record.value))))
    except MetadataParseError as err:
        return {"error": f"Error at {record.offset}, skipping. {err}"}
