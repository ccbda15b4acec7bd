"""The bits of a batch's (and a legacy message's) attributes, found once, at import, by asking the
generated classes: a header built with one bit set reads as the instances of
schemas/record_batch.ksy say (`compression`, `timestamp_type`, `is_transactional`, `is_control`,
`has_delete_horizon`), so that code testing or setting raw attribute bits states no mask of its own.
"""
from __future__ import annotations

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch

_V2_BITS = 8 * RecordBatch.LAYOUT["attributes"][1]
_LEGACY_BITS = 8 * LegacyLogEntry.LegacyMessage.LAYOUT["attributes"][1]


def _bits(read, width: int) -> int:
    """The mask of the bits whose header, built with that bit alone set, `read` answers true for."""
    return sum(1 << bit for bit in range(width) if read(1 << bit))


def _v2(instance: str, unset) -> int:
    return _bits(lambda a: getattr(RecordBatch(attributes=a), instance) != unset, _V2_BITS)


COMPRESSION = _v2("compression", RecordBatch.CompressionType.none)  # the codec's number, from bit 0 up
# set: the broker's timestamps (log append time), else the producer's (create time)
LOG_APPEND_TIME = _v2("timestamp_type", RecordBatch.TimestampType.create_time)
TIMESTAMP_TYPE_AT = LOG_APPEND_TIME.bit_length() - 1  # (attributes >> this) & 1 is the timestamp type's number
TRANSACTIONAL = _v2("is_transactional", False)
CONTROL = _v2("is_control", False)
DELETE_HORIZON = _v2("has_delete_horizon", False)  # the base timestamp is the cleaner's delete horizon

# the codec is the masked bits as they are, the timestamp type one bit; a magic 1 message keeps both
# where a v2 batch does, which is what lets the readers test either kind of header with these masks
_LEGACY_COMPRESSION = _bits(lambda a: LegacyLogEntry.LegacyMessage(magic=1, attributes=a).compression != 0,
                            _LEGACY_BITS)
_LEGACY_APPEND_TIME = _bits(lambda a: LegacyLogEntry.LegacyMessage(magic=1, attributes=a).timestamp_type
                            != LegacyLogEntry.TimestampType.create_time, _LEGACY_BITS)
if (RecordBatch(attributes=COMPRESSION).compression != COMPRESSION or LOG_APPEND_TIME != 1 << TIMESTAMP_TYPE_AT
        or RecordBatch(attributes=LOG_APPEND_TIME).timestamp_type != 1
        or (_LEGACY_COMPRESSION, _LEGACY_APPEND_TIME) != (COMPRESSION, LOG_APPEND_TIME)):
    raise ImportError("the schemas' attribute bits are not a codec field from bit 0 and one timestamp-type bit "
                      "shared by v2 batches and legacy messages")
