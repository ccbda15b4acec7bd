# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled kernels of the facade (kafkacodec.codec.records), built when a C compiler is
present: plain v0/v1 messages read straight into records (their Python twins are in
kafkacodec.codec.plain_legacy), and the loops that write v2 records sections and v0/v1 entries
from records through the generated compiled writers (else write_batch's loops call the
generated writers). Each does only what is regular and leaves the rest to the Python code,
which names what is wrong."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport INT64_MAX, INT64_MIN, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from _fastread cimport alloc, be, get, put, slot_offset
from _fastwrite cimport crc32_ieee


include "_facade_source.pxi"


def crc32(const uint8_t[::1] data):
    """CRC-32 (IEEE) of `data`, as zlib.crc32 (for the tests of runtime/_crc32.h)."""
    return crc32_ieee(&data[0] if data.shape[0] else NULL, data.shape[0])


cdef Py_ssize_t B_ENTRY, B_POSITION, B_SIZE, B_VERIFY, B_RECORD, B_BUFFER, B_AT
cdef Py_ssize_t R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS, R_TIMESTAMP_TYPE
cdef type BATCH = None, RECORD = None


# the generated compiled writers (generated/_c_*.pyx, pk_<Type>) of a v2 record and of a v0/v1
# log entry, from capsules named by their C signatures
ctypedef int (*RecordPacker)(bytearray, int64_t, int64_t, int64_t, object, object, object) except -1
ctypedef int (*EntryPacker)(bytearray, int64_t, object) except -1
cdef RecordPacker PACK_RECORD = NULL
cdef EntryPacker PACK_ENTRY = NULL
RECORD_PACKER = b"int (bytearray, int64_t, int64_t, int64_t, object, object, object) except -1"
ENTRY_PACKER = b"int (bytearray, int64_t, object) except -1"


def bind_facade(type batch_cls, type record_cls, record_packer=None, entry_packer=None):
    """Name the facade's classes of plain legacy batches and of records, whose slots the kernels
    fill and read, and the capsules of the compiled writers of a v2 record and of a v0/v1 log
    entry, where they are built (ValueError for a capsule of another signature)."""
    global BATCH, RECORD, B_ENTRY, B_POSITION, B_SIZE, B_VERIFY, B_RECORD, B_BUFFER, B_AT, PACK_RECORD, PACK_ENTRY
    PACK_RECORD = NULL if record_packer is None else <RecordPacker>PyCapsule_GetPointer(record_packer, RECORD_PACKER)
    PACK_ENTRY = NULL if entry_packer is None else <EntryPacker>PyCapsule_GetPointer(entry_packer, ENTRY_PACKER)
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




cdef inline bint is_int32(int64_t v) noexcept nogil:
    return -2147483648 <= v <= 2147483647


cdef inline bint deltas_fit(int64_t ts, int64_t base_ts, int64_t offset, int64_t first) noexcept nogil:
    """Whether a record's timestamp delta fits 64 bits and its offset delta 32 (offsets of
    different signs, rare, are left to Python)."""
    if (ts < 0) != (base_ts < 0) and (ts < 0 and ts < INT64_MIN + base_ts or ts >= 0 and ts > INT64_MAX + base_ts):
        return False
    return (offset < 0) == (first < 0) and is_int32(offset - first)


cdef inline object record_fields(object r):
    """(key, value, timestamp, offset, headers) of one of the facade's Records or a dict of its
    fields; None for any other kind of record."""
    if type(r) is RECORD:
        return get(r, R_KEY), get(r, R_VALUE), get(r, R_TIMESTAMP), get(r, R_OFFSET), get(r, R_HEADERS)
    if type(r) is dict:
        return r.get("key"), r.get("value"), r.get("timestamp"), r.get("offset"), r.get("headers")
    return None


def v2_records(records, object first_offset):
    """The records section of a v2 batch for a list or tuple of the facade's Records or of dicts
    (offsets from `first_offset` unless they have theirs), as write_batch's loop writes it, each
    record by the generated compiled writer: (bytes, count, first offset, last offset, base
    timestamp, max timestamp); None for anything it leaves to that loop (no records, other kinds
    of records or fields, values the compiled writer leaves to the Python one, deltas out of
    their field's range)."""
    if RECORD is None:
        raise RuntimeError("bind_facade first")
    if PACK_RECORD == NULL or type(records) is not list and type(records) is not tuple or not records:
        return None
    cdef Py_ssize_t count = len(records), i
    cdef int64_t ts, first = 0, last = 0, base_ts = 0, max_ts = 0, base_offset
    out = bytearray()
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
            if PACK_RECORD(out, 0, ts - base_ts, last - first, key, value, () if headers is None else headers):
                return None
    except (OverflowError, AttributeError):  # an int beyond 64 bits; a Record's slot unset
        return None
    return out, count, first, last, base_ts, max_ts


def legacy_entries(records, object first_offset, int magic, int attributes, object fixed_timestamp,
                   bint relative):
    """The v0/v1 log entries of a list or tuple of the facade's Records without headers, one
    message each, as records.write_batch writes them, each by the generated compiled writer:
    offsets from `first_offset` unless they have theirs (less the first one's with `relative`,
    as inside a magic 1 wrapper), timestamps (magic 1) -1 unless they have theirs, or all
    `fixed_timestamp` when it is not None. (entries, last offset, largest timestamp), or None for
    anything it leaves to that writer (no records, other kinds of records or fields, headers,
    values the compiled writer leaves to the Python one)."""
    if RECORD is None:
        raise RuntimeError("bind_facade first")
    if PACK_ENTRY == NULL or type(records) is not list and type(records) is not tuple or not records:
        return None
    if magic not in (0, 1) or not 0 <= attributes <= 255:
        return None
    cdef Py_ssize_t count = len(records), i
    cdef int64_t base_offset, first = 0, last = 0, stamp, max_ts = 0
    out = bytearray()
    try:
        base_offset = first_offset
        for i in range(count):
            r = records[i]
            if type(r) is not RECORD:
                return None
            key, value, t, o, headers = record_fields(r)
            if headers or t is not None and type(t) is not int or o is not None and type(o) is not int:
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
            message = (magic, attributes, stamp if fixed_timestamp is None else fixed_timestamp, key, value)
            if PACK_ENTRY(out, last - first if relative else last, message):
                return None
    except (OverflowError, AttributeError):  # an int beyond 64 bits; a Record's slot unset
        return None
    return out, last, max_ts
