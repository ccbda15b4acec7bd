# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled kernels of the facade (kafkacodec.codec.records), built when a C compiler is
present: the loops that write v2 records sections and v0/v1 entries from records through the
generated compiled writers (else write_batch's loops call the generated writers). Each does only
what is regular and leaves the rest to the Python code, which names what is wrong."""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport INT64_MAX, INT64_MIN, int64_t, uint8_t

from _fastread cimport get, slot_offset
from _fastwrite cimport crc32_ieee


include "_facade_source.pxi"


def crc32(const uint8_t[::1] data):
    """CRC-32 (IEEE) of `data`, as zlib.crc32 (for the tests of runtime/_crc32.h)."""
    return crc32_ieee(&data[0] if data.shape[0] else NULL, data.shape[0])


cdef Py_ssize_t R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS
cdef type RECORD = None


# the generated compiled writers (generated/_c_*.pyx, pk_<Type>) of a v2 record and of a v0/v1
# log entry, from capsules named by their C signatures
ctypedef int (*RecordPacker)(bytearray, int64_t, int64_t, int64_t, object, object, object) except -1
ctypedef int (*EntryPacker)(bytearray, int64_t, object) except -1
cdef RecordPacker PACK_RECORD = NULL
cdef EntryPacker PACK_ENTRY = NULL
RECORD_PACKER = b"int (bytearray, int64_t, int64_t, int64_t, object, object, object) except -1"
ENTRY_PACKER = b"int (bytearray, int64_t, object) except -1"


def bind_facade(type record_cls, record_packer=None, entry_packer=None):
    """Name the facade's class of records, whose slots the loops read, and the capsules of the
    compiled writers of a v2 record and of a v0/v1 log entry, where they are built (ValueError
    for a capsule of another signature)."""
    global RECORD, PACK_RECORD, PACK_ENTRY, R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS
    PACK_RECORD = NULL if record_packer is None else <RecordPacker>PyCapsule_GetPointer(record_packer, RECORD_PACKER)
    PACK_ENTRY = NULL if entry_packer is None else <EntryPacker>PyCapsule_GetPointer(entry_packer, ENTRY_PACKER)
    R_KEY, R_VALUE = slot_offset(record_cls, "key"), slot_offset(record_cls, "value")
    R_TIMESTAMP, R_OFFSET = slot_offset(record_cls, "timestamp"), slot_offset(record_cls, "offset")
    R_HEADERS = slot_offset(record_cls, "headers")
    RECORD = record_cls


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
    if PACK_RECORD == NULL or type(records) is not list and type(records) is not tuple or not records \
            or type(first_offset) is not int:
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
    if PACK_ENTRY == NULL or type(records) is not list and type(records) is not tuple or not records \
            or type(first_offset) is not int:
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
