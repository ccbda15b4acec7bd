"""Base-128 varints: unsigned, and zigzag-signed 32- and 64-bit, bounded at 5 and 10 bytes.

Readers take (buf, pos, end) and return (value, new_pos); they never read past `end` and raise
DecodeError subclasses with the byte position of the varint's first byte.
"""
from __future__ import annotations

from .errors import InvalidValueError, TruncatedError

# What the generator's emitted code assumes too (it imports these): the longest varints, and the
# values below TABLE_LIMIT (those of one and two bytes) that the tables below hold.
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10
TABLE_LIMIT = 0x4000


def read_uvarint(buf, pos: int, end: int, max_bytes: int = MAX_VARINT_BYTES,
                 path: str | None = None) -> tuple[int, int]:
    """Read an unsigned varint of at most `max_bytes` bytes starting at `pos`."""
    if pos >= end:  # said as a reader that needs one more byte says it
        raise TruncatedError(f"needs 1 bytes, {max(0, end - pos)} left", pos, path)
    start = pos
    value = 0
    shift = 0
    limit = min(end, pos + max_bytes)
    while pos < limit:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if max_bytes == MAX_VARINT_BYTES:
                value &= 0xFFFFFFFF  # bits above 32 of the 5th byte are dropped, as Kafka does
            elif max_bytes == MAX_VARLONG_BYTES:
                value &= 0xFFFFFFFFFFFFFFFF  # and above 64 of the 10th, as the columnar reader does
            return value, pos
        shift += 7
    if pos - start >= max_bytes:
        raise InvalidValueError(f"varint longer than {max_bytes} bytes", start, path)
    raise TruncatedError("input ends inside a varint", start, path)


def read_zigzag32(buf, pos: int, end: int) -> tuple[int, int]:
    u, pos = read_uvarint(buf, pos, end, MAX_VARINT_BYTES)
    return (u >> 1) ^ -(u & 1), pos


def read_zigzag64(buf, pos: int, end: int) -> tuple[int, int]:
    u, pos = read_uvarint(buf, pos, end, MAX_VARLONG_BYTES)
    return (u >> 1) ^ -(u & 1), pos


def zigzag32(n: int) -> int:
    return ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF


def zigzag64(n: int) -> int:
    return ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF


def write_uvarint(out: bytearray, u: int) -> None:
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)


def write_zigzag32(out: bytearray, n: int) -> None:
    if not -0x80000000 <= n <= 0x7FFFFFFF:
        raise ValueError(f"{n} does not fit in a signed 32-bit varint")
    write_uvarint(out, zigzag32(n))


def write_zigzag64(out: bytearray, n: int) -> None:
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"{n} does not fit in a signed 64-bit varlong")
    write_uvarint(out, zigzag64(n))


def write_uvarint32(out: bytearray, n: int) -> None:
    if not 0 <= n <= 0xFFFFFFFF:
        raise ValueError(f"{n} does not fit in an unsigned 32-bit varint")
    write_uvarint(out, n)


def encode_zigzag32(n: int) -> bytes:
    out = bytearray()
    write_zigzag32(out, n)
    return bytes(out)


def encode_zigzag64(n: int) -> bytes:
    out = bytearray()
    write_zigzag64(out, n)
    return bytes(out)


def encode_uvarint32(n: int) -> bytes:
    out = bytearray()
    write_uvarint32(out, n)
    return bytes(out)


def zigzag32_size(n: int) -> int:
    return uvarint_size(zigzag32(n))


def zigzag64_size(n: int) -> int:
    return uvarint_size(zigzag64(n))


def _small_varints() -> tuple[bytes, ...]:
    out = []
    for u in range(TABLE_LIMIT):
        b = bytearray()
        write_uvarint(b, u)
        out.append(bytes(b))
    return tuple(out)


# Encoded forms of 0..TABLE_LIMIT-1 (one and two bytes): writers append table[u] for most lengths and deltas.
SMALL_VARINTS = _small_varints()
# Zigzag decoding of the same range: readers look values up instead of computing them.
SMALL_ZIGZAG = tuple((u >> 1) ^ -(u & 1) for u in range(TABLE_LIMIT))


def uvarint_size(u: int) -> int:
    return max(1, (u.bit_length() + 6) // 7)

