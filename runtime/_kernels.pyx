# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled Arrow gather of the columnar reader, built when a C compiler is present;
runtime.kernels chooses between it and pyarrow's take."""
from libc.string cimport memcpy
from libc.stdint cimport int64_t, uint8_t

import numpy as np

include "_kernels_source.pxi"


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

