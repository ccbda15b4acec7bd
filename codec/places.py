"""Where the header fields of a v2 batch and of a legacy entry sit, from the generated classes'
LAYOUT (the schemas' fixed-width leading fields), so that code reading raw header bytes states
no offset of its own. Everything here is computed once, at import."""
from __future__ import annotations

import struct

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch


def layout_end(layout: dict) -> int:
    """The first byte after a LAYOUT's fields."""
    return max(at + width for at, width in layout.values())


def layout_struct(layout: dict, codes: dict[str, str]) -> struct.Struct:
    """A big-endian Struct reading the named fields of `layout` at their places, in the order of
    their offsets, passing over the bytes between them; a code may read the first bytes of a
    field (its size at most the field's width), never more, or this raises at import."""
    fmt, at = ">", 0
    for name in sorted(codes, key=lambda n: layout[n][0]):
        start, width = layout[name]
        size = struct.calcsize(">" + codes[name])
        if start < at or size > width:
            raise ValueError(f"struct code {codes[name]!r} does not fit field {name} at {start} ({width} bytes)")
        fmt += "x" * (start - at) + codes[name]
        at = start + size
    return struct.Struct(fmt)


V2 = RecordBatch.LAYOUT
SIZE_AT, SIZE_WIDTH = V2["batch_length"]
LOG_OVERHEAD = SIZE_AT + SIZE_WIDTH  # the offset and size fields, before what the size counts
MAGIC_AT, _ = V2["magic"]
HEADER_SIZE_UP_TO_MAGIC = MAGIC_AT + 1
V2_CRC_AT, _ = V2["crc"]
V2_CRC_FROM, _ = V2["attributes"]  # the CRC-32C covers the batch from its attributes on
V2_HEADER = layout_end(V2)  # the records start here
V2_MIN_SIZE = V2_HEADER - LOG_OVERHEAD  # the least size field of a v2 batch: its header after the field

# a legacy entry: the entry's offset and size, then its message's leading fields, as one layout
LEGACY = {**LegacyLogEntry.LAYOUT, **{name: (layout_end(LegacyLogEntry.LAYOUT) + at, width)
                                      for name, (at, width) in LegacyLogEntry.LegacyMessage.LAYOUT.items()}}
LEGACY_CRC_AT, _ = LEGACY["crc"]
LEGACY_CRC_FROM, _ = LEGACY["magic"]  # the CRC-32 covers the message from its magic on
LEGACY_HEADER = layout_end(LEGACY)  # a magic 1 message's timestamp starts here
LEGACY_MIN_MESSAGE = LegacyLogEntry.LegacyMessage(magic=0).size()  # magic 0, null key and value: Kafka's least size
# that timestamp, the one field no LAYOUT holds (magic 0 lacks it): its width is what it adds to a message
LEGACY_TIMESTAMP = {"timestamp": (LEGACY_HEADER,
                                  LegacyLogEntry.LegacyMessage(magic=1).size() - LEGACY_MIN_MESSAGE)}

# the magic byte at one place in both formats is what tells them apart
if LEGACY["magic"][0] != MAGIC_AT or LEGACY["message_size"] != V2["batch_length"]:
    raise ImportError("the v2 batch and the legacy entry disagree on where the size or the magic byte is")
