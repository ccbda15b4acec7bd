"""Damaged batches whose checksums still match, so that the damage reaches past the CRC to the
records: over-long varints, wrong counts and lengths, damaged or inflating compressed streams.

Shared by the damage tests, the deep-verify tests and the fuzz driver. Every function takes and
returns whole batches (v2 record batches or v0/v1 log entries, offset and size fields included)
as bytes; only `with_valid_crc(s)` and `with_valid_size` repair anything, the rest build exactly
what they are asked for.
"""
from __future__ import annotations

import struct
import zlib

import crc32c

from kafkacodec.runtime.codecs import codec as _codec
from kafkacodec.runtime.limits import LIMITS

LOG_OVERHEAD = 12  # offset and size fields before every batch
V2_CRC_AT, V2_CRC_FROM, V2_ATTRIBUTES_AT, V2_COUNT_AT, V2_RECORDS_AT = 17, 21, 21, 57, 61
LEGACY_CRC_AT, LEGACY_CRC_FROM = 12, 16
MAGIC_AT = 16
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def magic_of(batch: bytes) -> int:
    return batch[MAGIC_AT]


def with_valid_crc(batch: bytes) -> bytes:
    """One batch with its checksum recomputed: the CRC-32C of a v2 batch, the CRC-32 of a legacy
    entry's message (the wrapper's, for a compressed one: inner messages keep theirs)."""
    out = bytearray(batch)
    if magic_of(batch) >= 2:
        struct.pack_into(">I", out, V2_CRC_AT, crc32c.crc32c(bytes(out[V2_CRC_FROM:])))
    else:
        struct.pack_into(">I", out, LEGACY_CRC_AT, zlib.crc32(bytes(out[LEGACY_CRC_FROM:])))
    return bytes(out)


def with_valid_size(batch: bytes) -> bytes:
    """One batch with its size field (v2 batch_length, legacy message size) set to its real length."""
    out = bytearray(batch)
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    return bytes(out)


def with_valid_crcs(segment: bytes) -> bytes:
    """Every batch of a segment with its checksum recomputed, found by the size fields; from the
    first batch whose framing does not fit (too short, or running past the end) bytes stay as they are."""
    out = bytearray(segment)
    pos = 0
    while len(out) - pos > MAGIC_AT:
        size = struct.unpack_from(">i", out, pos + 8)[0]
        end = pos + LOG_OVERHEAD + size
        if size < 14 or end > len(out) or (out[pos + MAGIC_AT] >= 2 and size < V2_RECORDS_AT - LOG_OVERHEAD):
            break
        out[pos:end] = with_valid_crc(bytes(out[pos:end]))
        pos = end
    return bytes(out)


def batch_spans(segment: bytes) -> list[tuple[int, int]]:
    """(start, end) of each batch of an intact segment."""
    spans, pos = [], 0
    while pos < len(segment):
        end = pos + LOG_OVERHEAD + struct.unpack_from(">i", segment, pos + 8)[0]
        spans.append((pos, end))
        pos = end
    return spans


# -- v2 record batches ---------------------------------------------------------------------------
def codec_of(batch: bytes) -> int:
    return struct.unpack_from(">h", batch, V2_ATTRIBUTES_AT)[0] & 0x07


def compress(codec: str | int, data: bytes, magic: int = 2) -> bytes:
    """`data` compressed as Kafka frames it for that codec (the project's own codecs)."""
    return _codec(CODECS.get(codec, codec)).compress(bytes(data), magic)


def decompress(codec: str | int, data: bytes, magic: int = 2) -> bytes:
    return _codec(CODECS.get(codec, codec)).decompress(bytes(data), LIMITS.max_decompressed_bytes, magic)


def records_section(batch: bytes) -> bytes:
    """The records of a v2 batch as they are encoded before compression."""
    return decompress(codec_of(batch), batch[V2_RECORDS_AT:])


def rebuild_v2(batch: bytes, *, records: bytes | None = None, stored: bytes | None = None,
               count: int | None = None, codec: str | int | None = None) -> bytes:
    """A v2 batch with its records section replaced, its header kept: `records` (encoded, not
    compressed; compressed here with the batch's codec, or `codec`), or `stored` (exactly the bytes
    to store, compressed or not). The count is the batch's unless given; size and CRC fit the result."""
    out = bytearray(batch[:V2_RECORDS_AT])
    if codec is not None:
        attributes = struct.unpack_from(">h", out, V2_ATTRIBUTES_AT)[0]
        struct.pack_into(">h", out, V2_ATTRIBUTES_AT, (attributes & ~0x07) | CODECS.get(codec, codec))
    if count is not None:
        struct.pack_into(">i", out, V2_COUNT_AT, count)
    if stored is None:
        records = records_section(batch) if records is None else records
        stored = records if codec_of(bytes(out)) == 0 else compress(codec_of(bytes(out)), records)
    out += stored
    return with_valid_crc(with_valid_size(bytes(out)))


def varint(value: int, width: int | None = None, zigzag: bool = True) -> bytes:
    """A base-128 varint (zigzag-signed unless told), padded with continuation bytes to `width`
    bytes when given: longer than Kafka's 5 (10 for a varlong) makes an over-long varint."""
    u = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF if zigzag else value
    groups = []
    while True:
        groups.append(u & 0x7F)
        u >>= 7
        if not u:
            break
    if width is not None:
        groups += [0] * (width - len(groups))
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def raw_record(*, key: bytes | None = b"k", value: bytes | None = b"v", headers=(), attributes: int = 0,
               timestamp_delta: int = 0, offset_delta: int = 0, length: int | None = None,
               key_length: int | None = None, value_length: int | None = None,
               headers_count: int | None = None, widths: dict | None = None) -> bytes:
    """One v2 record from its fields. Any length or count may be given to disagree with the bytes
    that follow; `widths` pads chosen varints ("length", "timestamp_delta", "offset_delta",
    "key_length", "value_length", "headers_count") to that many bytes. Headers are (key, value)
    pairs of bytes (or None), or (key, value, key_length, value_length) to set the lengths too."""
    w = widths or {}
    body = bytearray([attributes & 0xFF])
    body += varint(timestamp_delta, w.get("timestamp_delta"))
    body += varint(offset_delta, w.get("offset_delta"))
    body += varint(_length(key, key_length), w.get("key_length")) + (key or b"")
    body += varint(_length(value, value_length), w.get("value_length")) + (value or b"")
    body += varint(len(headers) if headers_count is None else headers_count, w.get("headers_count"))
    for h in headers:
        hk, hv = h[0], h[1]
        hkl, hvl = (h[2], h[3]) if len(h) > 2 else (None, None)
        body += varint(_length(hk, hkl)) + (hk or b"")
        body += varint(_length(hv, hvl)) + (hv or b"")
    return varint(len(body) if length is None else length, w.get("length")) + bytes(body)


def _length(data: bytes | None, given: int | None) -> int:
    if given is not None:
        return given
    return -1 if data is None else len(data)


def v2_batch(records: list[bytes], *, codec: str | int = "none", count: int | None = None,
             base_offset: int = 0, base_timestamp: int = 1_700_000_000_000) -> bytes:
    """A v2 batch around raw records (see raw_record), compressed with `codec`, with a valid size
    and CRC; the count is the number of records unless given."""
    n = len(records)
    header = struct.pack(">qiibIhiqqqhii", base_offset, 0, -1, 2, 0, CODECS.get(codec, codec), max(n - 1, 0),
                         base_timestamp, base_timestamp, -1, -1, -1, n if count is None else count)
    return rebuild_v2(header, records=b"".join(records))


def bomb(codec: str | int, size: int | None = None, magic: int = 2) -> bytes:
    """A compressed stream, framed as Kafka frames the codec, that inflates to `size` zero bytes
    (one more than LIMITS.max_decompressed_bytes unless given) but is small itself."""
    size = LIMITS.max_decompressed_bytes + 1 if size is None else size
    codec = CODECS.get(codec, codec)
    if codec == 1:
        c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        chunk = bytes(1 << 20)
        out = [c.compress(chunk) for _ in range(size // len(chunk))]
        return b"".join(out) + c.compress(bytes(size % len(chunk))) + c.flush()
    if codec == 4:
        import zstandard
        c = zstandard.ZstdCompressor(level=1).compressobj()  # streamed: the frame has no content size
        chunk = bytes(1 << 20)
        out = [c.compress(chunk) for _ in range(size // len(chunk))]
        return b"".join(out) + c.compress(bytes(size % len(chunk))) + c.flush()
    # snappy (xerial chunks of 32 KiB) and lz4 (64 KiB blocks): one block compressed, repeated
    from kafkacodec.runtime.codecs import lz4_codec, snappy_codec
    block = 32 * 1024 if codec == 2 else 64 * 1024
    whole = compress(codec, bytes(block), magic)
    if codec == 2:
        head, body = snappy_codec.XERIAL_HEADER, whole[len(snappy_codec.XERIAL_HEADER):]
        return head + body * (size // block + 1)
    head, body = whole[:7], whole[7:-4]  # magic, descriptor; blocks; end mark
    assert head[:4] == lz4_codec.MAGIC
    return head + body * (size // block + 1) + b"\0\0\0\0"


# -- v0/v1 log entries ---------------------------------------------------------------------------
def legacy_entry(offset: int, key: bytes | None, value: bytes | None, *, magic: int = 1, attributes: int = 0,
                 timestamp: int = 1_700_000_000_000) -> bytes:
    """One v0/v1 log entry with a valid size and CRC."""
    body = struct.pack(">bB", magic, attributes) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    body += struct.pack(">i", -1 if key is None else len(key)) + (key or b"")
    body += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def legacy_wrapper(inner: bytes, *, codec: str | int = "gzip", magic: int = 1, offset: int | None = None,
                   stored: bytes | None = None) -> bytes:
    """A compressed v0/v1 wrapper entry holding the message set `inner` (entries as bytes, damaged
    or not), compressed with `codec` (or exactly `stored`), its own CRC valid."""
    codec = CODECS.get(codec, codec)
    value = compress(codec, inner, magic) if stored is None else stored
    return legacy_entry(0 if offset is None else offset, None, value, magic=magic, attributes=codec)
