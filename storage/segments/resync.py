"""Where reading can go on after damage: the first position after it where a whole batch with a
matching checksum begins. Kafka's recovery cannot do this; it truncates.

Checking each candidate position's checksum on its own costs the candidate's size, so bytes that
look like many long batches (`10 02 00` repeated) made the search quadratic. Here the checksums
of all candidates of a window are found together in time linear in the bytes searched: the CRC
register is taken at every candidate's start and end in one pass (sorted points, each step an
incremental CRC over the bytes between two points), and the CRC of each span follows from the two
by the algebra zlib's crc32_combine rests on:

    crc(A + B) = crc(A) * x^(8 * len(B)) mod P  xor  crc(B)

The multiplication by x^(8n) is a linear map of the 32-bit register; it is applied to all
candidates at once with numpy, one table step per set bit of n (tables of each map's effect on
each byte of the register, built once per polynomial).
"""
from __future__ import annotations

import zlib
from functools import lru_cache

import crc32c
import numpy as np

from kafkacodec.codec.places import (HEADER_SIZE_UP_TO_MAGIC, LEGACY_CRC_AT, LEGACY_CRC_FROM, LOG_OVERHEAD,
                                     MAGIC_AT, SIZE_AT, V2_CRC_AT, V2_CRC_FROM, V2_MIN_SIZE)
from .scan import MIN_RECORD_OVERHEAD, batch_at
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.runtime.limits import LIMITS

CRC32C_POLY, CRC32_POLY = 0x82F63B78, 0xEDB88320  # reflected, as the registers hold them
WINDOW = 1 << 20  # candidate starts examined together


def _multmodp(a: int, b: int, poly: int) -> int:
    """a * b modulo the polynomial, in the reflected bit order of CRC registers."""
    m, p = 1 << 31, 0
    while m:
        if a & m:
            p ^= b
        m >>= 1
        b = (b >> 1) ^ poly if b & 1 else b >> 1
    return p


@lru_cache(maxsize=2)
def _shift_tables(poly: int) -> np.ndarray:
    """tables[k, j, byte]: the effect of multiplying by x^(8 * 2^k) on a register whose byte j
    (from the low end) holds `byte` and whose other bytes are 0."""
    power = 1 << 30  # x^1
    for _ in range(3):  # x^8
        power = _multmodp(power, power, poly)
    tables = np.zeros((40, 4, 256), np.uint32)
    for k in range(40):
        basis = [_multmodp(power, 1 << bit, poly) for bit in range(32)]
        for j in range(4):
            values = np.zeros(256, np.uint32)
            for bit in range(8):
                values[(np.arange(256) >> bit) & 1 == 1] ^= np.uint32(basis[8 * j + bit])
            tables[k, j] = values
        power = _multmodp(power, power, poly)
    return tables


def shift(registers: np.ndarray, lengths: np.ndarray, poly: int) -> np.ndarray:
    """Each register multiplied by x^(8 * length): the CRC of a prefix carried past `length` bytes."""
    tables = _shift_tables(poly)
    out = registers.astype(np.uint32)
    lengths = lengths.astype(np.int64)
    for k in range(int(lengths.max()).bit_length() if len(lengths) else 0):
        sel = (lengths >> k) & 1 == 1
        if sel.any():
            v = out[sel]
            t = tables[k]
            out[sel] = t[0][v & 0xFF] ^ t[1][(v >> 8) & 0xFF] ^ t[2][(v >> 16) & 0xFF] ^ t[3][v >> 24]
    return out


def span_crcs(buf, starts: np.ndarray, ends: np.ndarray, origin: int, update, poly: int) -> np.ndarray:
    """The CRC of buf[start:end] for every pair, with one incremental pass over the bytes from
    `origin` to the last end (`update(data, register)` continues a CRC)."""
    points = np.concatenate([starts, ends])
    points.sort()
    points = points[np.concatenate(([True], points[1:] != points[:-1]))]
    registers = np.empty(len(points), np.uint32)
    view = memoryview(buf)
    reg, at = 0, origin
    out = []
    append = out.append
    for p in points.tolist():
        reg = update(view[at:p], reg)
        append(reg)
        at = p
    registers[:] = out
    before = registers[np.searchsorted(points, starts)]
    after = registers[np.searchsorted(points, ends)]
    return after ^ shift(before, ends - starts, poly)


def _candidates(u8: np.ndarray, end: int, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of `u8` (all but its last HEADER_SIZE_UP_TO_MAGIC bytes, which only complete
    headers) whose magic and size fields could start a whole batch before `end`, and their sizes:
    what every reader checks first, before any checksum."""
    pos = np.arange(0, max(len(u8) - HEADER_SIZE_UP_TO_MAGIC, 0), dtype=np.int64)
    if not len(pos):
        return pos, pos
    at = pos + SIZE_AT
    size = ((u8[at].astype(np.int64) << 24) | (u8[at + 1].astype(np.int64) << 16)
            | (u8[at + 2].astype(np.int64) << 8) | u8[at + 3].astype(np.int64))
    size = np.where(size >= 1 << 31, size - (1 << 32), size)
    magic = u8[pos + MAGIC_AT]
    ok = (magic <= 2) & (size >= MIN_RECORD_OVERHEAD) & (size <= max_size) & (pos + LOG_OVERHEAD + size <= end)
    ok &= (magic < 2) | (size >= V2_MIN_SIZE)
    return pos[ok], size[ok]


def _matching(data, pos: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Which candidates of `data` (positions relative to it, each batch whole in it) carry a
    matching checksum."""
    u8 = np.frombuffer(data, np.uint8)
    stop = pos + LOG_OVERHEAD + size
    v2 = u8[pos + MAGIC_AT] == 2
    good = np.zeros(len(pos), bool)
    for sel, cover, update, poly, crc_at in ((v2, V2_CRC_FROM, crc32c.crc32c, CRC32C_POLY, V2_CRC_AT),
                                             (~v2, LEGACY_CRC_FROM, zlib.crc32, CRC32_POLY, LEGACY_CRC_AT)):
        if sel.any():
            p = pos[sel]
            stored = ((u8[p + crc_at].astype(np.uint32) << 24) | (u8[p + crc_at + 1].astype(np.uint32) << 16)
                      | (u8[p + crc_at + 2].astype(np.uint32) << 8) | u8[p + crc_at + 3].astype(np.uint32))
            good[sel] = span_crcs(data, p + cover, stop[sel], int(p[0]), update, poly) == stored
    return good


def find_resume(read, start: int, end: int, max_size: int | None = None) -> int | None:
    """The first position after `start` where a whole batch with a matching checksum begins (and
    which reads as a batch), or None; `read(position, size)` gives the bytes (fewer at the end).

    Candidate starts are examined a window at a time; each window reads only as far as its
    candidates reach. Batches larger than `max_size` (default: the decoding limit,
    LIMITS.max_batch_bytes) are not looked for: no reader here could decode them anyway, and the
    bound keeps each window's pass, and its memory, short."""
    max_size = LIMITS.max_batch_bytes if max_size is None else max_size
    lo = start + 1
    while lo < end - HEADER_SIZE_UP_TO_MAGIC:
        head = read(lo, min(WINDOW + HEADER_SIZE_UP_TO_MAGIC, end - lo))
        pos, size = _candidates(np.frombuffer(head, np.uint8), end - lo, max_size)
        if len(pos):
            data = read(lo, int((pos + LOG_OVERHEAD + size).max()))
            for p in pos[_matching(data, pos, size)].tolist():  # checksums match: the framing decides
                try:
                    batch_at(data, p, len(data))
                except DecodeError:
                    continue
                return lo + p
        lo += WINDOW
    return None


def next_valid_batch(buf, start: int, end: int | None = None, max_size: int | None = None) -> int | None:
    """find_resume over a buffer."""
    view = memoryview(buf)
    end = len(buf) if end is None else end
    return find_resume(lambda pos, size: view[pos:min(pos + size, end)], start, end, max_size)
