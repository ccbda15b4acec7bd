# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled kernels of the columnar reader, built when a C compiler is present; runtime.kernels
chooses between them and their numpy/pyarrow equivalents."""
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from _fastread cimport varint_at

import numpy as np

include "_kernels_source.pxi"

cdef uint64_t LOW_32_BITS = 0xFFFFFFFFu  # a C constant: a bare literal this large is a Python int


def gather(const uint8_t[::1] src, const int64_t[::1] starts, const int64_t[::1] sizes, bint wide, allocate):
    """The slices [start, start + size) of `src` laid end to end (size < 0: an absent value, no
    bytes): (Arrow offsets, int32 or with `wide` int64, one more than slices; the bytes, in a
    writable buffer of `allocate(size)`, such as pyarrow.allocate_buffer: a pool that reuses
    memory costs no page faults)."""
    cdef Py_ssize_t n = starts.shape[0], i, total = 0, length = src.shape[0]
    cdef int64_t start, size
    if sizes.shape[0] != n:
        raise ValueError("starts and sizes differ in length")
    for i in range(n):
        start, size = starts[i], sizes[i]
        if size > 0:
            if start < 0 or start > length or size > length - start:
                raise ValueError(f"slice [{start}, {start + size}) outside a buffer of {length} bytes")
            total += size
    if not wide and total >= 2 ** 31:
        raise ValueError("more than 2 GiB of slices for 32-bit offsets")
    offsets = np.empty(n + 1, np.int64 if wide else np.int32)
    data = allocate(total)  # not zeroed: every byte is copied over
    cdef int64_t[::1] off64
    cdef int[::1] off32
    cdef char[::1] out = data if total else bytearray(1)
    cdef Py_ssize_t at = 0
    if wide:
        off64 = offsets
    else:
        off32 = offsets
    for i in range(n):
        if wide:
            off64[i] = at
        else:
            off32[i] = <int>at
        size = sizes[i]
        if size > 0:
            memcpy(&out[at], &src[starts[i]], <size_t>size)
            at += size
    if wide:
        off64[n] = at
    else:
        off32[n] = <int>at
    return offsets, data


def prefixed_starts(const uint8_t[::1] u8, const int64_t[::1] starts, const int64_t[::1] ends,
                    const int64_t[::1] counts, int max_bytes, bint zigzag):
    """Start positions of `counts[i]` instances laid end to end from `starts[i]` to exactly
    `ends[i]`, each a varint (zigzag or not, at most `max_bytes` bytes, 32 bits) counting the
    bytes after it: as vectors.packed finds them, or None at the first irregularity (a varint
    too long or cut short, a negative or overlong size, a sequence not ending at its end), for
    the careful reader to name."""
    cdef Py_ssize_t n = counts.shape[0], length = u8.shape[0], i, k = 0
    cdef int64_t c, total = 0, p, e, size
    cdef uint64_t value
    if starts.shape[0] != n or ends.shape[0] != n:
        raise ValueError("starts, ends and counts differ in length")
    for i in range(n):
        if counts[i] < 0:
            return None
        total += counts[i]
    out = np.empty(total, np.int64)
    cdef int64_t[::1] found = out
    for i in range(n):
        p, e = starts[i], ends[i]
        if p < 0 or p > e or e > length:
            return None
        for c in range(counts[i]):
            found[k] = p
            k += 1
            p = varint_at(&u8[0], p, e, max_bytes, &value)
            if p < 0 or value > LOW_32_BITS:
                return None
            if zigzag:
                size = <int64_t>(value >> 1) ^ -<int64_t>(value & 1)
            else:
                size = <int64_t>value
            if size < 0 or size > e - p:
                return None
            p += size
        if p != e:
            return None
    return out


def varints(const uint8_t[::1] u8, const int64_t[::1] pos, const int64_t[::1] ends, int64_t end,
            int max_bytes, bint zigzag):
    """Base-128 varints at `pos` as vectors.varints reads them: (values, int32 keeping the low
    32 bits for at most 5 bytes, else int64; positions after them), each bounded by `ends[i]`
    (or `end` when `ends` is empty); None at the first varint too long or cut short, for the
    careful reader to name."""
    cdef Py_ssize_t n = pos.shape[0], length = u8.shape[0], i
    cdef bint each = ends.shape[0] != 0, narrow = max_bytes <= 5
    cdef int64_t p, stop
    cdef uint64_t value
    if each and ends.shape[0] != n:
        raise ValueError("pos and ends differ in length")
    values = np.empty(n, np.int32 if narrow else np.int64)
    after = np.empty(n, np.int64)
    cdef int32_t[::1] v32
    cdef int64_t[::1] v64
    cdef int64_t[::1] out = after
    if narrow:
        v32 = values
    else:
        v64 = values
    for i in range(n):
        p = pos[i]
        stop = ends[i] if each else end
        if stop > length:
            stop = length
        if p < 0:
            return None
        p = varint_at(&u8[0], p, stop, max_bytes, &value)
        if p < 0:
            return None
        out[i] = p
        if narrow:
            value &= LOW_32_BITS
            if zigzag:
                value = (value >> 1) ^ (<uint64_t>0 - (value & 1))
            v32[i] = <int32_t><uint32_t>value
        else:
            if zigzag:
                value = (value >> 1) ^ (<uint64_t>0 - (value & 1))
            v64[i] = <int64_t>value
    return values, after

