# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled kernels of the columnar reader, built when a C compiler is present; runtime.kernels
chooses between them and their numpy/pyarrow equivalents."""
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

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


cdef inline Py_ssize_t zz32(const uint8_t* u8, Py_ssize_t p, Py_ssize_t end, int32_t* out) noexcept nogil:
    """A zigzag varint of at most 5 bytes, its low 32 bits kept, as vectors.varints reads it; -1
    when too long or cut short."""
    cdef uint64_t value
    p = varint_at(u8, p, end, 5, &value)
    value &= LOW_32_BITS
    out[0] = <int32_t><uint32_t>((value >> 1) ^ (<uint64_t>0 - (value & 1)))
    return p


def v2_record_columns(const uint8_t[::1] u8, const int64_t[::1] pos, const int64_t[::1] end, int64_t max_items):
    """The columns Record._columns of record_batch reads for v2 records starting at `pos`, each
    bounded by `end[i]`, in one pass (positions as int64); None at the first irregularity (a
    varint too long or cut short, a field past its end, a bad header count or length, a length
    that does not span its record), for the generated reader to name."""
    cdef Py_ssize_t n = pos.shape[0], i, j, k = 0, total = 0, length = u8.shape[0]
    cdef Py_ssize_t p, e, start
    cdef int32_t v32, count
    cdef uint64_t v64
    cdef const uint8_t* b = &u8[0] if length else NULL
    if end.shape[0] != n:
        raise ValueError("pos and end differ in length")
    names32 = ["length", "attributes", "offset_delta", "key_length", "value_length", "headers_count"]
    cols = {name: np.empty(n, np.int32) for name in names32}
    cols["timestamp_delta"] = np.empty(n, np.int64)
    cols["key"], cols["value"] = np.empty(n, np.int64), np.empty(n, np.int64)
    cols["headers"] = np.empty(n + 1, np.int64)
    cdef int32_t[::1] c_length = cols["length"], c_attributes = cols["attributes"]
    cdef int32_t[::1] c_offset = cols["offset_delta"], c_key_length = cols["key_length"]
    cdef int32_t[::1] c_value_length = cols["value_length"], c_count = cols["headers_count"]
    cdef int64_t[::1] c_timestamp = cols["timestamp_delta"], c_key = cols["key"], c_value = cols["value"]
    cdef int64_t[::1] c_first = cols["headers"]
    heads = np.empty(n, np.int64)  # where each record's headers start
    cdef int64_t[::1] c_heads = heads
    for i in range(n):
        p, e = pos[i], end[i]
        if p < 0 or e > length or p > e:
            return None
        p = zz32(b, p, e, &c_length[i])
        if p < 0 or p >= e:
            return None
        start = p
        c_attributes[i] = <int8_t>b[p]
        p = varint_at(b, p + 1, e, 10, &v64)
        if p < 0:
            return None
        c_timestamp[i] = <int64_t>((v64 >> 1) ^ (<uint64_t>0 - (v64 & 1)))
        p = zz32(b, p, e, &c_offset[i])
        if p < 0:
            return None
        p = zz32(b, p, e, &c_key_length[i])
        if p < 0 or c_key_length[i] > e - p:
            return None
        c_key[i] = p
        p += max(c_key_length[i], 0)
        p = zz32(b, p, e, &c_value_length[i])
        if p < 0 or c_value_length[i] > e - p:
            return None
        c_value[i] = p
        p += max(c_value_length[i], 0)
        p = zz32(b, p, e, &count)
        if p < 0 or count < 0 or count > (e - p) // 2 or count > max_items:
            return None
        c_count[i] = count
        c_first[i] = total
        total += count
        c_heads[i] = p
        for j in range(count):  # walked here to check the span; their columns are filled below
            p = zz32(b, p, e, &v32)
            if p < 0 or v32 < 0 or v32 > e - p:
                return None
            p += v32
            p = zz32(b, p, e, &v32)
            if p < 0 or v32 > e - p:
                return None
            p += max(v32, 0)
        if p - start != c_length[i]:
            return None
    c_first[n] = total
    for name in ("key_length", "value_length"):
        items = np.empty(total, np.int32)
        cols["headers." + name] = items
    cols["headers.key"], cols["headers.value"] = np.empty(total, np.int64), np.empty(total, np.int64)
    cdef int32_t[::1] h_key_length = cols["headers.key_length"], h_value_length = cols["headers.value_length"]
    cdef int64_t[::1] h_key = cols["headers.key"], h_value = cols["headers.value"]
    for i in range(n):
        p, e = c_heads[i], end[i]
        for j in range(c_count[i]):
            p = zz32(b, p, e, &h_key_length[k])
            h_key[k] = p
            p += h_key_length[k]
            p = zz32(b, p, e, &h_value_length[k])
            h_value[k] = p
            p += max(h_value_length[k], 0)
            k += 1
    cols["key.size"], cols["value.size"] = cols["key_length"], cols["value_length"]
    cols["headers.key.size"], cols["headers.value.size"] = cols["headers.key_length"], cols["headers.value_length"]
    return cols
