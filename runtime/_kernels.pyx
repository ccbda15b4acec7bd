# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled Arrow gather of the columnar reader, built when a C compiler is present;
runtime.kernels chooses between it and pyarrow's take. And the CRC-32 compiled code computes,
for its tests."""
from libc.string cimport memcpy
from libc.stdint cimport int64_t, uint8_t

import numpy as np

from _fastwrite cimport crc32_ieee

include "_kernels_source.pxi"


def crc32(const uint8_t[::1] data):
    """CRC-32 (IEEE) of `data`, as zlib.crc32 (runtime/_crc32.h)."""
    return crc32_ieee(&data[0] if data.shape[0] else NULL, data.shape[0])


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
    offsets = np.empty(n + 1, np.int64)  # narrowed at the end where 32 bits are asked for: n+1 numbers
    data = allocate(total)  # not zeroed: every byte is copied over
    cdef int64_t[::1] off = offsets
    cdef char[::1] out = data if total else bytearray(1)
    cdef Py_ssize_t at = 0
    for i in range(n):
        off[i] = at
        start, size = starts[i], sizes[i]
        if size > 0:
            if start < 0 or start > length or size > length - start or size > total - at:
                raise ValueError("the slices changed while they were gathered")
            memcpy(&out[at], &src[start], <size_t>size)
            at += size
    off[n] = at
    return (offsets if wide else offsets.astype(np.int32)), data
