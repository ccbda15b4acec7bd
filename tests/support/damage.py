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


MUTATIONS = ("a byte changed", "cut", "bytes inserted", "bytes removed")


def mutated(data: bytes, rng) -> tuple[bytes, tuple[str, int]]:
    """`data` damaged one way, at a place `rng` draws: a byte set to an edge value (or any), the
    bytes cut there, 1-3 random bytes inserted or 1-5 removed; and (how, where), to name the case."""
    damaged = bytearray(data)
    kind = rng.randrange(len(MUTATIONS))
    at = rng.randrange(len(damaged))
    if kind == 0:
        damaged[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    elif kind == 1:
        del damaged[at:]
    elif kind == 2:
        damaged[at:at] = rng.randbytes(rng.randrange(1, 4))
    else:
        del damaged[at:at + rng.randrange(1, 6)]
    return bytes(damaged), (MUTATIONS[kind], at)


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
    "key_length", "value_length", "headers_count", and every header's "header_key_length" and
    "header_value_length") to that many bytes. Headers are (key, value) pairs of bytes (or None),
    or (key, value, key_length, value_length) to set the lengths too."""
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
        body += varint(_length(hk, hkl), w.get("header_key_length")) + (hk or b"")
        body += varint(_length(hv, hvl), w.get("header_value_length")) + (hv or b"")
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


def legacy_value(entry: bytes) -> bytes | None:
    """The value of a v0/v1 entry's message as stored (a wrapper's: compressed)."""
    magic = entry[MAGIC_AT]
    at = LOG_OVERHEAD + 6 + (8 if magic == 1 else 0)  # crc, magic, attributes, timestamp
    key_length = struct.unpack_from(">i", entry, at)[0]
    at += 4 + max(key_length, 0)
    value_length = struct.unpack_from(">i", entry, at)[0]
    return None if value_length < 0 else entry[at + 4:at + 4 + value_length]


def rebuild_legacy(entry: bytes, value: bytes) -> bytes:
    """A v0/v1 entry with its message's value replaced by `value` (as stored), size and CRC fitting."""
    old = legacy_value(entry) or b""  # the value is the message's last field
    head = entry[:len(entry) - len(old) - 4]
    return with_valid_crc(with_valid_size(head + struct.pack(">i", len(value)) + value))


# -- producer snapshots --------------------------------------------------------------------------
def snapshot_with_valid_crc(snapshot: bytes) -> bytes:
    """A .snapshot file with its CRC-32C (of every byte after it) recomputed."""
    if len(snapshot) < 6:
        return snapshot
    return snapshot[:2] + struct.pack(">I", crc32c.crc32c(snapshot[6:])) + snapshot[6:]


# -- a catalogue of damage that a reader (and a deep verify) must report -------------------------
def _records(n: int = 3) -> list[bytes]:
    return [raw_record(key=b"key-%d" % i, value=b"value-%d" % i, offset_delta=i, timestamp_delta=i,
                       headers=[(b"h", b"x")]) for i in range(n)]


def _broken_streams(codec: str, section: bytes) -> dict[str, bytes]:
    """Compressed streams of `section` damaged so that decompression fails (a flip inside the data
    of a codec without checksums may decode to other bytes, which no reader can tell)."""
    whole = compress(codec, section)
    header = {"gzip": 3, "snappy": 0, "lz4": 5, "zstd": 0}[codec]  # gzip's method byte; lz4's FLG; magics
    flipped = bytearray(whole)
    flipped[header] ^= 0x5A
    return {"truncated": whole[:-3], "garbage": bytes(range(7, 47)), "header_flipped": bytes(flipped),
            "empty": b""}


def damaged_v2_batches(codecs=("none", "gzip", "snappy", "lz4", "zstd")):
    """(name, batch, error class name) of v2 batches whose CRC is valid but whose records cannot all
    be read: over-long varints, wrong counts, bytes after the last record, record lengths that
    disagree with their fields, negative header counts and key lengths, damaged compressed streams
    and decompression bombs (over LIMITS.max_decompressed_bytes as it is when called)."""
    varints = {"length": 6, "timestamp_delta": 11, "offset_delta": 6, "key_length": 6, "value_length": 6,
               "headers_count": 6}
    for codec in codecs:
        def batch(records, **kw):
            return v2_batch(records, codec=codec, **kw)
        good = _records()
        for field, width in varints.items():
            yield f"{codec}/overlong_varint_{field}", batch(
                [good[0], raw_record(offset_delta=1, widths={field: width})]), "InvalidValueError"
        yield f"{codec}/count_above_records", batch(good, count=4), "TruncatedError"
        yield f"{codec}/count_far_above_records", batch(good * 30, count=91), "TruncatedError"
        yield f"{codec}/count_below_records", batch(good, count=2), "InvalidValueError"
        yield f"{codec}/count_negative", batch(good, count=-1), "InvalidValueError"
        yield f"{codec}/count_over_limit", batch(good, count=2 ** 31 - 1), "LimitExceededError"
        yield f"{codec}/bytes_after_last_record", rebuild_v2(batch(good), records=b"".join(good) + b"\x00\x02"), \
            "InvalidValueError"
        yield f"{codec}/record_length_too_long", batch([good[0], raw_record(offset_delta=1, length=40), good[2]]), \
            "InvalidValueError"
        yield f"{codec}/record_length_too_short", batch([raw_record(length=4), good[1]]), "InvalidValueError"
        yield f"{codec}/header_count_negative", batch([good[0], raw_record(offset_delta=1, headers_count=-3)]), \
            "InvalidValueError"
        yield f"{codec}/header_count_above_headers", batch([raw_record(headers=[(b"a", b"1")], headers_count=2)]), \
            "TruncatedError"
        yield f"{codec}/header_key_length_negative", batch([raw_record(headers=[(b"key", b"v", -2, None)])]), \
            "InvalidValueError"
        yield f"{codec}/header_key_length_past_record", batch([raw_record(headers=[(b"key", b"v", 90, None)])]), \
            "DecodeError"
        if codec == "none":
            continue
        section = b"".join(good)
        for kind, stored in _broken_streams(codec, section).items():
            yield f"{codec}/stream_{kind}", rebuild_v2(batch(good), stored=stored), "CompressionError"
        yield f"{codec}/decompression_bomb", rebuild_v2(batch(good[:1]), stored=bomb(codec)), "LimitExceededError"


def damaged_legacy_entries():
    """(name, entry, error class name) of compressed v0/v1 wrappers whose own CRC is valid but whose
    inner messages cannot all be read: an inner CRC that does not match, an inner message cut
    short, a damaged compressed stream, a decompression bomb."""
    for magic in (0, 1):
        inner = b"".join(legacy_entry(i, b"key-%d" % i, b"value-%d" % i, magic=magic) for i in range(3))
        bad_crc = bytearray(inner)
        bad_crc[-1] ^= 0x01  # the last inner message's value
        for codec in ("gzip", "snappy", "lz4"):
            name = f"v{magic}_{codec}"
            yield f"{name}/inner_crc", legacy_wrapper(bytes(bad_crc), codec=codec, magic=magic, offset=2), \
                "ChecksumError"
            yield f"{name}/inner_truncated", legacy_wrapper(inner[:-3], codec=codec, magic=magic, offset=2), \
                "TruncatedError"
            for kind, stored in _broken_streams(codec, inner).items():
                if kind != "empty":  # an empty value of a wrapper is read as no inner message at all
                    yield f"{name}/stream_{kind}", legacy_wrapper(b"", codec=codec, magic=magic, stored=stored), \
                        "CompressionError"
            yield f"{name}/decompression_bomb", legacy_wrapper(b"", codec=codec, magic=magic,
                                                               stored=bomb(codec, magic=magic)), "LimitExceededError"


def readable_v2_batches():
    """(name, batch) of v2 batches that look odd but that Kafka reads, so readers must too: header
    keys that are not UTF-8 (Kafka decodes them with replacement), key and value lengths below -1
    and header value lengths below -1 (null, as Kafka reads any negative length), varints padded
    with continuation bytes within 5 bytes."""
    for codec in ("none", "gzip", "zstd"):
        yield f"{codec}/header_key_not_utf8", v2_batch([raw_record(headers=[(b"\xff\xfeh\xc3", b"v")])], codec=codec)
        yield f"{codec}/lengths_below_minus_one", v2_batch(
            [raw_record(key=None, key_length=-7, value=None, value_length=-2, headers=[(b"h", None, None, -9)])],
            codec=codec)
        yield f"{codec}/padded_varints", v2_batch(
            [raw_record(widths={"length": 5, "offset_delta": 3, "key_length": 4})], codec=codec)
