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
"""
from __future__ import annotations

KEY_SIZE, MARKER_VALUE_SIZE = 4, 6


def key_fields(key: bytes) -> tuple[int, int]:
    """(version, type) of a key of at least KEY_SIZE bytes."""
    return int.from_bytes(key[:2], "big", signed=True), int.from_bytes(key[2:4], "big", signed=True)


def key_problem(key: bytes) -> str | None:
    """Why Kafka refuses a control record's key, None when it reads it."""
    if len(key) < KEY_SIZE:
        return (f"{len(key)} bytes, but a control record's key holds its version and type in at least {KEY_SIZE} "
                "(Kafka refuses a shorter one)")
    version, _ = key_fields(key)
    if version < 0:
        return f"version {version}: Kafka refuses a negative control record key version"
    return None


def marker_value_problem(value: bytes) -> str | None:
    """Why Kafka refuses a transaction marker's value, None when it reads it."""
    if len(value) < MARKER_VALUE_SIZE:
        return (f"{len(value)} bytes, but a transaction marker's value holds its version and coordinator epoch in "
                f"at least {MARKER_VALUE_SIZE} (Kafka refuses a shorter one)")
    version = int.from_bytes(value[:2], "big", signed=True)
    if version < 0:
        return f"version {version}: Kafka refuses a negative transaction marker version"
    return None


def coordinator_epoch(value: bytes) -> int:
    """The coordinator epoch of a marker value that marker_value_problem accepts."""
    return int.from_bytes(value[2:6], "big", signed=True)
