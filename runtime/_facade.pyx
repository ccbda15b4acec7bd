# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled kernels of the facade (kafkacodec.codec.records), built when a C compiler is
present: plain v0/v1 messages read straight into records (their Python twins are in
kafkacodec.codec.plain_legacy), and v2 records sections (from records, or from columns as
Arrow holds them) and v0/v1 entries written from records (else the generated writers write
them). Each does only what is regular and leaves the rest to the Python code, which names what
is wrong."""
from cpython cimport array
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_1BYTE_DATA, PyUnicode_GET_LENGTH
from libc.string cimport memcpy
from libc.stdint cimport INT64_MAX, INT64_MIN, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from _fastread cimport alloc, be, get, put, slot_offset


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)

include "_facade_source.pxi"

import array

cdef array.array INT64_ARRAY = array.array("q")


cdef uint32_t CRC32_TABLES[8][256]  # CRC-32 (IEEE, reflected 0xEDB88320), eight bytes a step


cdef void _crc32_tables() noexcept:
    cdef uint32_t c
    cdef int n, k
    for n in range(256):
        c = n
        for k in range(8):
            c = (c >> 1) ^ (0xEDB88320u if c & 1 else 0)
        CRC32_TABLES[0][n] = c
    for n in range(256):
        for k in range(1, 8):
            CRC32_TABLES[k][n] = (CRC32_TABLES[k - 1][n] >> 8) ^ CRC32_TABLES[0][CRC32_TABLES[k - 1][n] & 0xFF]


_crc32_tables()


cdef extern from "_crc32_fold.h":
    int kc_crc32_fold_usable()
    size_t kc_crc32_fold(uint32_t state, const uint8_t* b, size_t n, uint8_t* out) nogil


cdef bint FOLD = kc_crc32_fold_usable()


cdef uint32_t crc32_ieee(const uint8_t* b, Py_ssize_t n) noexcept nogil:
    """zlib.crc32 of n bytes, without a Python object for them: the bulk of a long input folded
    (see _crc32_fold.h), the rest by table."""
    cdef uint32_t c = 0xFFFFFFFFu
    cdef uint8_t folded[16]
    cdef size_t used
    if FOLD and n >= 64:
        used = kc_crc32_fold(c, b, n, folded)
        c = crc32_table(0, folded, 16)
        b += used
        n -= used
    return crc32_table(c, b, n) ^ 0xFFFFFFFFu


cdef uint32_t crc32_table(uint32_t c, const uint8_t* b, Py_ssize_t n) noexcept nogil:
    """The CRC register `c` after n more bytes, eight a step."""
    cdef uint32_t low, high
    while n >= 8:
        low = c ^ (b[0] | (<uint32_t>b[1] << 8) | (<uint32_t>b[2] << 16) | (<uint32_t>b[3] << 24))
        high = b[4] | (<uint32_t>b[5] << 8) | (<uint32_t>b[6] << 16) | (<uint32_t>b[7] << 24)
        c = (CRC32_TABLES[7][low & 0xFF] ^ CRC32_TABLES[6][(low >> 8) & 0xFF]
             ^ CRC32_TABLES[5][(low >> 16) & 0xFF] ^ CRC32_TABLES[4][low >> 24]
             ^ CRC32_TABLES[3][high & 0xFF] ^ CRC32_TABLES[2][(high >> 8) & 0xFF]
             ^ CRC32_TABLES[1][(high >> 16) & 0xFF] ^ CRC32_TABLES[0][high >> 24])
        b += 8
        n -= 8
    while n > 0:
        c = (c >> 8) ^ CRC32_TABLES[0][(c ^ b[0]) & 0xFF]
        b += 1
        n -= 1
    return c


def crc32(const uint8_t[::1] data):
    """CRC-32 (IEEE) of `data`, as zlib.crc32 (for the tests of the kernel above)."""
    return crc32_ieee(&data[0] if data.shape[0] else NULL, data.shape[0])


cdef Py_ssize_t B_ENTRY, B_POSITION, B_SIZE, B_VERIFY, B_RECORD, B_BUFFER, B_AT
cdef Py_ssize_t R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS, R_TIMESTAMP_TYPE
cdef type BATCH = None, RECORD = None


def bind_facade(type batch_cls, type record_cls):
    """Name the facade's classes of plain legacy batches and of records, whose slots the kernels
    fill and read."""
    global BATCH, RECORD, B_ENTRY, B_POSITION, B_SIZE, B_VERIFY, B_RECORD, B_BUFFER, B_AT
    global R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS, R_TIMESTAMP_TYPE
    B_ENTRY, B_POSITION = slot_offset(batch_cls, "_entry"), slot_offset(batch_cls, "position")
    B_SIZE, B_VERIFY = slot_offset(batch_cls, "size"), slot_offset(batch_cls, "verify")
    B_RECORD, B_BUFFER = slot_offset(batch_cls, "_record"), slot_offset(batch_cls, "_buffer")
    B_AT = slot_offset(batch_cls, "_at")
    R_KEY, R_VALUE = slot_offset(record_cls, "key"), slot_offset(record_cls, "value")
    R_TIMESTAMP, R_OFFSET = slot_offset(record_cls, "timestamp"), slot_offset(record_cls, "offset")
    R_HEADERS = slot_offset(record_cls, "headers")
    R_TIMESTAMP_TYPE = slot_offset(record_cls, "timestamp_type")
    BATCH, RECORD = batch_cls, record_cls


def plain_batch_iter(self):
    """Iterate over the one record of a batch made by legacy_plain_entries."""
    return iter((get(self, B_RECORD),))


cdef struct Message:  # a plain v0/v1 log entry: where its fields are
    int64_t offset, timestamp, key_length, value_length
    Py_ssize_t key, value
    int magic, attributes


cdef Py_ssize_t plain_entry(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, bint verify,
                            Message* m) noexcept nogil:
    """The end of the log entry at `pos` holding one uncompressed v0/v1 message, its fields in
    `m`; -1 for anything else: cut short, malformed, compressed, or a CRC that does not match
    (with `verify`)."""
    cdef int64_t size
    cdef Py_ssize_t start, q, stop
    if end - pos < 12 + 14:
        return -1
    size = <int32_t>be(b + pos + 8, 4)
    if size < 14 or size > end - pos - 12:
        return -1
    start, stop = pos + 12, pos + 12 + size
    m.magic, m.attributes = b[start + 4], b[start + 5]
    if m.magic > 1 or m.attributes & 0x07:
        return -1
    q = start + (14 if m.magic else 6)
    if q + 4 > stop:
        return -1
    m.key_length = <int32_t>be(b + q, 4)
    m.key = q + 4
    q = m.key + max(m.key_length, 0)
    if m.key_length > stop - m.key or q + 4 > stop:
        return -1
    m.value_length = <int32_t>be(b + q, 4)
    m.value = q + 4
    if m.value_length > stop - m.value or m.value + max(m.value_length, 0) != stop:  # the value ends it
        return -1
    if verify and crc32_ieee(b + start + 4, size - 4) != <uint32_t>be(b + start, 4):
        return -1
    m.offset = <int64_t>be(b + pos, 8)
    m.timestamp = <int64_t>be(b + start + 6, 8) if m.magic else -1
    return stop


cdef inline object _bytes_or_none(const uint8_t* b, int64_t length):
    return None if length < 0 else PyBytes_FromStringAndSize(<const char*>b, length)


cdef object new_record(const uint8_t* b, Message* m, int64_t offset, int64_t timestamp, int timestamp_type):
    record = alloc(RECORD)
    put(record, R_KEY, _bytes_or_none(b + m.key, m.key_length))
    put(record, R_VALUE, _bytes_or_none(b + m.value, m.value_length))
    put(record, R_TIMESTAMP, timestamp)
    put(record, R_OFFSET, offset)
    put(record, R_HEADERS, [])
    put(record, R_TIMESTAMP_TYPE, timestamp_type)
    return record


def legacy_plain_entries(bytes buf, Py_ssize_t pos, Py_ssize_t end, bint verify, int64_t max_batch_bytes,
                         Py_ssize_t max_entries):
    """The uncompressed v0/v1 log entries from `pos` as the facade's batches, each holding its
    one record and not its entry objects (the batch reads them when asked): (batches, position
    after them). Stops at `max_entries`, at `end`, and before any entry that is not a plain
    v0/v1 message, is larger than `max_batch_bytes` or is damaged, which the Python reader then
    reads or names."""
    if BATCH is None:
        raise RuntimeError("bind_facade first")
    if pos < 0 or end > len(buf) or pos > end:
        raise ValueError(f"range [{pos}, {end}) outside a buffer of {len(buf)} bytes")
    cdef const uint8_t* b = <const uint8_t*><const char*>buf
    cdef Py_ssize_t after
    cdef Message m
    out = []
    while pos < end and len(out) < max_entries:
        if end - pos >= 12 and <int32_t>be(b + pos + 8, 4) > max_batch_bytes:
            break
        after = plain_entry(b, pos, end, verify, &m)
        if after < 0:
            break
        batch = alloc(BATCH)
        put(batch, B_ENTRY, None)
        put(batch, B_POSITION, pos)
        put(batch, B_SIZE, after - pos)
        put(batch, B_VERIFY, verify)
        put(batch, B_RECORD, new_record(b, &m, m.offset, m.timestamp, (m.attributes >> 3) & 1 if m.magic else -1))
        put(batch, B_BUFFER, buf)
        put(batch, B_AT, pos)
        out.append(batch)
        pos = after
    return out, pos


def legacy_wrapped_records(const uint8_t[::1] data, int64_t wrapper_offset, int wrapper_magic,
                           int64_t append_time, bint log_append, bint verify):
    """The records of a compressed wrapper from its decompressed message set, with the offset
    and timestamp rules of kafkacodec.codec.records.legacy_records; None for anything irregular (no
    entries, one that is compressed or damaged, offsets that do not fit), which the Python
    reader then names."""
    if RECORD is None:
        raise RuntimeError("bind_facade first")
    cdef Py_ssize_t end = data.shape[0], pos = 0, count = 0
    cdef const uint8_t* b = &data[0] if end else NULL
    cdef int64_t base = 0, last = 0, lowest = 0, highest = 0
    cdef Message m
    while pos < end:  # check every message first: the Python reader names the first bad one
        pos = plain_entry(b, pos, end, verify, &m)
        if pos < 0:
            return None
        last = m.offset
        lowest = last if count == 0 else min(lowest, last)
        highest = last if count == 0 else max(highest, last)
        count += 1
    if count == 0:
        return None
    if wrapper_magic >= 1 and wrapper_offset != 0:  # inner offsets relative to the first
        if lowest < 0 or highest > last:  # unusual offsets, whose sums C integers might not hold
            return None
        base = wrapper_offset - last
        if base < 0:
            return None
    out = []
    pos = 0
    while pos < end:
        pos = plain_entry(b, pos, end, False, &m)
        if log_append:
            out.append(new_record(b, &m, base + m.offset, append_time, 1))
        elif m.magic == 0:
            out.append(new_record(b, &m, base + m.offset, -1, -1))
        else:
            out.append(new_record(b, &m, base + m.offset, m.timestamp, (m.attributes >> 3) & 1))
    return out


cdef inline int zigzag_size(int64_t v) noexcept nogil:
    """Bytes of the zigzag varint of v."""
    cdef uint64_t u = (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)
    cdef int n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n


cdef inline uint8_t* put_zigzag(uint8_t* p, int64_t v) noexcept nogil:
    cdef uint64_t u = (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)
    while u >= 0x80:
        p[0] = <uint8_t>(u | 0x80)
        p += 1
        u >>= 7
    p[0] = <uint8_t>u
    return p + 1


cdef inline uint8_t* put_bytes(uint8_t* p, object data) noexcept:
    """The zigzag length of data (bytes or None: -1) and its bytes."""
    cdef Py_ssize_t n
    if data is None:
        return put_zigzag(p, -1)
    n = len(<bytes>data)
    p = put_zigzag(p, n)
    memcpy(p, <const char*><bytes>data, n)
    return p + n


cdef inline uint8_t* put_text(uint8_t* p, object text) noexcept:
    """The zigzag length of text (an ASCII str, or bytes) and its bytes."""
    cdef Py_ssize_t n
    if type(text) is bytes:
        return put_bytes(p, text)
    n = PyUnicode_GET_LENGTH(text)
    p = put_zigzag(p, n)
    memcpy(p, PyUnicode_1BYTE_DATA(text), n)
    return p + n


cdef inline bint is_int32(int64_t v) noexcept nogil:
    return -2147483648 <= v <= 2147483647


cdef inline bint deltas_fit(int64_t ts, int64_t base_ts, int64_t offset, int64_t first) noexcept nogil:
    """Whether a record's timestamp delta fits 64 bits and its offset delta 32 (offsets of
    different signs, rare, are left to Python)."""
    if (ts < 0) != (base_ts < 0) and (ts < 0 and ts < INT64_MIN + base_ts or ts >= 0 and ts > INT64_MAX + base_ts):
        return False
    return (offset < 0) == (first < 0) and is_int32(offset - first)


cdef inline Py_ssize_t nullable_size(object data) except -2:
    """Encoded bytes of a length-prefixed bytes field (bytes or None); -1 for anything else."""
    if data is None:
        return 1
    if type(data) is not bytes or len(<bytes>data) > 2147483647:
        return -1
    return zigzag_size(len(<bytes>data)) + len(<bytes>data)


cdef inline object record_fields(object r):
    """(key, value, timestamp, offset, headers) of one of the facade's Records or a dict of its
    fields; None for any other kind of record."""
    if type(r) is RECORD:
        return get(r, R_KEY), get(r, R_VALUE), get(r, R_TIMESTAMP), get(r, R_OFFSET), get(r, R_HEADERS)
    if type(r) is dict:
        return r.get("key"), r.get("value"), r.get("timestamp"), r.get("offset"), r.get("headers")
    return None


cdef Py_ssize_t headers_size(object headers, list keys) except -2:
    """Encoded bytes of a record's headers (a tuple of (str, bytes or None) pairs), their keys
    onto `keys` as put_text writes them; -1 for anything else."""
    cdef Py_ssize_t size, k
    if not headers:
        return 1
    if type(headers) is not tuple:
        return -1
    size = zigzag_size(len(headers))
    for h in headers:
        if type(h) is not tuple or len(<tuple>h) != 2 or type((<tuple>h)[0]) is not str:
            return -1
        key = (<tuple>h)[0]
        if not PyUnicode_IS_ASCII(key):  # ASCII is its own UTF-8, written from the str itself
            key = (<str>key).encode("utf-8", "surrogateescape")
        k = nullable_size((<tuple>h)[1])
        if k < 0 or len(key) > 2147483647:
            return -1
        size += zigzag_size(len(key)) + len(key) + k
        keys.append(key)
    return size


def v2_records(records, object first_offset):
    """The records section of a v2 batch for a list or tuple of the facade's Records or of dicts
    (offsets from `first_offset` unless they have theirs), as write_batch's loop writes it:
    (bytes, count, first offset, last offset, base timestamp, max timestamp); None for anything
    it leaves to that loop (no records, other kinds of records or fields, header objects, values
    out of their field's range)."""
    if RECORD is None:
        raise RuntimeError("bind_facade first")
    if type(records) is not list and type(records) is not tuple or not records:
        return None
    cdef Py_ssize_t count = len(records), i, k, total = 0, at = 0
    cdef int64_t ts, first = 0, last = 0, base_ts = 0, max_ts = 0, base_offset
    cdef list header_keys = []  # the header keys of every record in order, as ASCII str or UTF-8 bytes
    # per record: key, value and a tuple of its headers, immutable from measuring to writing (a
    # finaliser run by a collection may change a record)
    cdef list kept = []
    # per record: the size of what follows its length, its timestamp and offset
    cdef int64_t[::1] sizes = array.clone(INT64_ARRAY, count, False)
    cdef int64_t[::1] stamps = array.clone(INT64_ARRAY, count, False)
    cdef int64_t[::1] offsets = array.clone(INT64_ARRAY, count, False)
    try:
        base_offset = first_offset
        for i in range(count):
            fields = record_fields(records[i])
            if fields is None:
                return None
            key, value, t, o, headers = fields
            if t is not None and type(t) is not int or o is not None and type(o) is not int:
                return None
            if o is None and base_offset > INT64_MAX - i:
                return None
            ts = -1 if t is None else t
            last = base_offset + i if o is None else o
            if i == 0:
                base_ts = max_ts = ts
                first = last
            elif ts > max_ts:
                max_ts = ts
            if not deltas_fit(ts, base_ts, last, first):
                return None
            k = nullable_size(key)
            if k < 0:
                return None
            sizes[i] = 1 + zigzag_size(ts - base_ts) + zigzag_size(last - first) + k
            k = nullable_size(value)
            if k < 0:
                return None
            sizes[i] += k
            if headers is None or type(headers) is list and not headers:
                headers = ()
            elif type(headers) is list:
                headers = tuple(headers)  # what is written, as it was measured
            elif type(headers) is not tuple:
                return None
            k = headers_size(headers, header_keys)
            if k < 0:
                return None
            sizes[i] += k
            if sizes[i] > 2147483647:
                return None
            stamps[i], offsets[i] = ts, last
            kept.append((key, value, headers))
            total += zigzag_size(sizes[i]) + sizes[i]
    except (OverflowError, AttributeError):  # an int beyond 64 bits; a Record's slot unset
        return None
    out = bytearray(total)
    cdef uint8_t* p = <uint8_t*><char*>out
    for i in range(count):
        key, value, headers = kept[i]
        p = put_zigzag(p, sizes[i])
        p[0] = 0  # attributes
        p = put_zigzag(p + 1, stamps[i] - base_ts)
        p = put_zigzag(p, offsets[i] - first)
        p = put_bytes(p, key)
        p = put_bytes(p, value)
        if not headers:
            p = put_zigzag(p, 0)
            continue
        p = put_zigzag(p, len(headers))
        for h in headers:
            p = put_text(p, header_keys[at])
            at += 1
            p = put_bytes(p, (<tuple>h)[1])
    return out, count, first, last, base_ts, max_ts


cdef inline int64_t span_size(const int32_t[::1] offsets, const uint8_t[::1] nulls, Py_ssize_t i,
                              Py_ssize_t data_length) noexcept nogil:
    """Bytes of item i of a binary column (-1 for null), or -2 when its offsets do not lie in the data."""
    if nulls[i]:
        return -1
    if offsets[i] < 0 or offsets[i + 1] < offsets[i] or offsets[i + 1] > data_length:
        return -2
    return offsets[i + 1] - offsets[i]


cdef inline uint8_t* put_span(uint8_t* p, const uint8_t[::1] data, Py_ssize_t from_, int64_t n) noexcept nogil:
    """The zigzag length n (-1: null) and, when not null, n bytes of data from `from_`."""
    p = put_zigzag(p, n)
    if n > 0:
        memcpy(p, &data[from_], <size_t>n)
        p += n
    return p


def v2_records_of_columns(const int32_t[::1] key_offsets, const uint8_t[::1] key_data, const uint8_t[::1] key_nulls,
                          const int32_t[::1] value_offsets, const uint8_t[::1] value_data,
                          const uint8_t[::1] value_nulls, const int64_t[::1] timestamps, const int64_t[::1] offsets,
                          const int64_t[::1] header_starts, const int32_t[::1] hkey_offsets,
                          const uint8_t[::1] hkey_data, const uint8_t[::1] hkey_nulls,
                          const int32_t[::1] hvalue_offsets, const uint8_t[::1] hvalue_data,
                          const uint8_t[::1] hvalue_nulls, Py_ssize_t start, Py_ssize_t stop):
    """The records section of a v2 batch of records start..stop of columns as Arrow holds them:
    binary columns as offsets (one more than items), bytes and a null flag per item; timestamps
    (-1: none) and offsets; record i's headers are items header_starts[i]..header_starts[i + 1]
    of the header key and value columns. As v2_records returns; None for what it leaves to the
    generated writer (a header without a key, a delta or size out of its field's range), and
    ValueError for columns that do not agree."""
    cdef Py_ssize_t n = stop - start, i, j, at = 0
    cdef int64_t ts, off, size, k, k2, first, base_ts, max_ts, total = 0
    cdef Py_ssize_t kn = key_data.shape[0], vn = value_data.shape[0], hkn = hkey_data.shape[0]
    cdef Py_ssize_t hvn = hvalue_data.shape[0], headers = hkey_nulls.shape[0]
    if start < 0 or n <= 0 or stop >= key_offsets.shape[0] or stop >= value_offsets.shape[0] \
            or stop > key_nulls.shape[0] or stop > value_nulls.shape[0] or stop > timestamps.shape[0] \
            or stop > offsets.shape[0] or stop >= header_starts.shape[0] or hkey_offsets.shape[0] != headers + 1 \
            or hvalue_offsets.shape[0] != headers + 1 or hvalue_nulls.shape[0] != headers:
        raise ValueError("columns of different lengths, or records outside them")
    cdef int64_t[::1] sizes = array.clone(INT64_ARRAY, n, False)
    first, base_ts = offsets[start], timestamps[start]
    max_ts = base_ts
    for i in range(start, stop):
        ts, off = timestamps[i], offsets[i]
        if ts > max_ts:
            max_ts = ts
        if not deltas_fit(ts, base_ts, off, first):
            return None
        if header_starts[i] < 0 or header_starts[i + 1] < header_starts[i] or header_starts[i + 1] > headers:
            raise ValueError("header positions outside the header columns")
        size = 1 + zigzag_size(ts - base_ts) + zigzag_size(off - first) + zigzag_size(header_starts[i + 1]
                                                                                      - header_starts[i])
        k = span_size(key_offsets, key_nulls, i, kn)
        k2 = span_size(value_offsets, value_nulls, i, vn)
        if k == -2 or k2 == -2:
            raise ValueError("binary offsets outside their data")
        size += zigzag_size(k) + max(k, 0) + zigzag_size(k2) + max(k2, 0)
        for j in range(header_starts[i], header_starts[i + 1]):
            k = span_size(hkey_offsets, hkey_nulls, j, hkn)
            if k == -1:
                return None  # a header key must be a string
            if k == -2:
                raise ValueError("binary offsets outside their data")
            size += zigzag_size(k) + k
            k = span_size(hvalue_offsets, hvalue_nulls, j, hvn)
            if k == -2:
                raise ValueError("binary offsets outside their data")
            size += zigzag_size(k) + max(k, 0)
        if size > 2147483647:
            return None
        sizes[i - start] = size
        total += zigzag_size(size) + size
    out = bytearray(total)
    cdef uint8_t* p = <uint8_t*><char*>out
    for i in range(start, stop):
        p = put_zigzag(p, sizes[i - start])
        p[0] = 0  # attributes
        p = put_zigzag(p + 1, timestamps[i] - base_ts)
        p = put_zigzag(p, offsets[i] - first)
        p = put_span(p, key_data, key_offsets[i], span_size(key_offsets, key_nulls, i, kn))
        p = put_span(p, value_data, value_offsets[i], span_size(value_offsets, value_nulls, i, vn))
        p = put_zigzag(p, header_starts[i + 1] - header_starts[i])
        for j in range(header_starts[i], header_starts[i + 1]):
            p = put_span(p, hkey_data, hkey_offsets[j], span_size(hkey_offsets, hkey_nulls, j, hkn))
            p = put_span(p, hvalue_data, hvalue_offsets[j], span_size(hvalue_offsets, hvalue_nulls, j, hvn))
    return out, n, first, offsets[stop - 1], base_ts, max_ts


cdef inline uint8_t* put_be(uint8_t* p, uint64_t v, int width) noexcept nogil:
    cdef int i
    for i in range(width - 1, -1, -1):
        p[i] = <uint8_t>(v & 0xFF)
        v >>= 8
    return p + width


cdef inline uint8_t* put_sized(uint8_t* p, object data) noexcept:
    """The big-endian 32-bit length of data (bytes or None: -1) and its bytes."""
    if data is None:
        return put_be(p, <uint32_t>-1, 4)
    p = put_be(p, len(<bytes>data), 4)
    memcpy(p, <const char*><bytes>data, len(<bytes>data))
    return p + len(<bytes>data)


def legacy_entries(records, object first_offset, int magic, int attributes, object fixed_timestamp,
                   bint relative):
    """The v0/v1 log entries of a list or tuple of the facade's Records without headers, one
    message each, as records.write_batch writes them: offsets from `first_offset` unless they have
    theirs (less the first one's with `relative`, as inside a magic 1 wrapper), timestamps (magic
    1) -1 unless they have theirs, or all `fixed_timestamp` when it is not None. (entries, last
    offset, largest timestamp), or None for anything it leaves to that writer (no records, other
    kinds of records or fields, headers, ints beyond 64 bits)."""
    if RECORD is None:
        raise RuntimeError("bind_facade first")
    if type(records) is not list and type(records) is not tuple or not records:
        return None
    if magic not in (0, 1) or not 0 <= attributes <= 255:
        return None
    cdef Py_ssize_t count = len(records), i, total = 0, size
    cdef int64_t base_offset, first = 0, last = 0, stamp, max_ts = 0, fixed = 0
    cdef bint is_fixed = fixed_timestamp is not None
    cdef int64_t[::1] sizes = array.clone(INT64_ARRAY, count, False)
    cdef int64_t[::1] offsets = array.clone(INT64_ARRAY, count, False)
    cdef int64_t[::1] stamps = array.clone(INT64_ARRAY, count, False)
    cdef list kept = []  # keys and values, as measured
    try:
        base_offset = first_offset
        if is_fixed:
            fixed = fixed_timestamp
        for i in range(count):
            r = records[i]
            if type(r) is not RECORD:
                return None
            key, value, t, o, headers = record_fields(r)
            if headers or t is not None and type(t) is not int or o is not None and type(o) is not int:
                return None
            if nullable_size(key) < 0 or nullable_size(value) < 0:  # bytes or None
                return None
            if o is None and base_offset > INT64_MAX - i:
                return None
            last = base_offset + i if o is None else o
            stamp = -1 if t is None else t
            if i == 0:
                first, max_ts = last, stamp
            elif stamp > max_ts:
                max_ts = stamp
            if relative and (last < 0) != (first < 0):
                return None  # a difference C integers might not hold
            size = 4 + 1 + 1 + (8 if magic else 0) + 4 + 4  # crc, magic, attributes, timestamp, lengths
            size += (0 if key is None else len(<bytes>key)) + (0 if value is None else len(<bytes>value))
            if size > 2147483647:
                return None
            sizes[i], offsets[i], stamps[i] = size, last - first if relative else last, fixed if is_fixed else stamp
            kept.append((key, value))
            total += 12 + size
    except (OverflowError, AttributeError):  # an int beyond 64 bits; a Record's slot unset
        return None
    out = bytearray(total)
    cdef uint8_t* p = <uint8_t*><char*>out
    cdef uint8_t* message
    for i in range(count):
        key, value = kept[i]
        p = put_be(put_be(p, <uint64_t>offsets[i], 8), <uint64_t>sizes[i], 4)
        message = p
        p += 4  # the CRC, over what follows it
        p[0], p[1] = magic, attributes
        p += 2
        if magic:
            p = put_be(p, <uint64_t>stamps[i], 8)
        p = put_sized(put_sized(p, key), value)
        put_be(message, crc32_ieee(message + 4, p - message - 4), 4)
    return out, last, max_ts
