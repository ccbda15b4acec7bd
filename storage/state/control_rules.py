"""Kafka's rules for reading a control record, stated once for `write`'s checks and for recovery.

A control record's key is two int16s, version and type (ControlRecordType.parseTypeId): a key
shorter than 4 bytes, or of a negative version, is an InvalidRecordException. A transaction
marker's value (ABORT, COMMIT) is an int16 version and an int32 coordinator epoch
(EndTransactionMarker.deserializeValue): shorter than 6 bytes, or of a negative version, is one
too. A later version is read as version 0. When a broker recovers a segment, the first record of
each control batch of a producer is read as a marker (ProducerAppendInfo.append); an
InvalidRecordException there ends LogSegment.recover's scan after that batch (its bytes were
counted valid before the marker was read), and what follows in the segment is cut. A null key or
value, or a record of another type, raises an exception recovery does not catch: the broker stops.

The bytes are read and built by the classes generated from schemas/control_record.ksy, which
refuse what Kafka refuses (too short, a negative version) and, like Kafka, read a key or value
without minding bytes after its fields; this module says what Kafka makes of what they read.
"""
from __future__ import annotations

from kafkacodec.generated.control_record import ControlRecord
from kafkacodec.runtime.errors import InvalidValueError, TruncatedError

ControlType = ControlRecord.ControlType
EndTransactionMarker = ControlRecord.EndTransactionMarker
MARKER_TYPES = (ControlType.abort, ControlType.commit)
KEY_SIZE, MARKER_VALUE_SIZE = ControlRecord().size(), EndTransactionMarker().size()


def key_bytes(kind: int, version: int = 0) -> bytes:
    """A control record's key: its version and type."""
    return ControlRecord(version=version, type=kind).to_bytes()


def marker_value_bytes(coordinator_epoch: int) -> bytes:
    """A transaction marker's value at version 0, as Kafka writes it."""
    return EndTransactionMarker(version=0, coordinator_epoch=coordinator_epoch).to_bytes()


def read_key(key: bytes) -> tuple[tuple[int, int] | None, str | None]:
    """((version, type), why Kafka refuses the key or None); the fields are None when the key is
    too short to hold them, and given for a negative version, which Kafka refuses but names."""
    try:
        read = ControlRecord.read(key, verify=False)[0]  # (no checksum to verify)
    except TruncatedError:
        return None, (f"{len(key)} bytes, but a control record's key holds its version and type in at least "
                      f"{KEY_SIZE} (Kafka refuses a shorter one)")
    except InvalidValueError:
        fields = _refused_fields(key, ControlRecord, "version", "type")
        return fields, f"version {fields[0]}: Kafka refuses a negative control record key version"
    return (read.version, int(read.type)), None


def read_marker_value(value: bytes) -> tuple[tuple[int, int] | None, str | None]:
    """((version, coordinator epoch), why Kafka refuses a transaction marker's value or None); the
    fields are None when the value is too short to hold them, and given for a negative version."""
    try:
        read = EndTransactionMarker.read(value, verify=False)[0]
    except TruncatedError:
        return None, (f"{len(value)} bytes, but a transaction marker's value holds its version and coordinator "
                      f"epoch in at least {MARKER_VALUE_SIZE} (Kafka refuses a shorter one)")
    except InvalidValueError:
        fields = _refused_fields(value, EndTransactionMarker, "version", "coordinator_epoch")
        return fields, f"version {fields[0]}: Kafka refuses a negative transaction marker version"
    return (read.version, read.coordinator_epoch), None


def _refused_fields(data: bytes, cls, *names: str) -> tuple[int, ...]:
    """Fields of bytes whose version the generated reader refuses: its error names the field, not
    the negative value, which Kafka's messages (and `dump --json`) give. They are read where the
    schema places them (the class's LAYOUT), as the signed big-endian integers it declares."""
    return tuple(int.from_bytes(data[at:at + width], "big", signed=True)
                 for at, width in (cls.LAYOUT[name] for name in names))
