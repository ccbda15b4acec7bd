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

from _fastread cimport alloc, get, put, slot_offset
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


# the generated flat reader of a v0/v1 log entry (generator/flat.py): its fields into an
# array, each at the slot its name maps to
ctypedef Py_ssize_t (*FlatReader)(const uint8_t*, Py_ssize_t, Py_ssize_t, int64_t*) noexcept nogil
cdef FlatReader READ_ENTRY = NULL
FLAT_READER = b"Py_ssize_t (const uint8_t*, Py_ssize_t, Py_ssize_t, int64_t*) noexcept nogil"
DEF MAX_SLOTS = 32
cdef Py_ssize_t E_OFFSET, E_SIZE, E_CRC, E_CRC_FROM, E_CRC_END, E_MAGIC, E_ATTRIBUTES, E_TIMESTAMP, E_TIMESTAMP_PRESENT
cdef Py_ssize_t E_KEY, E_KEY_SIZE, E_VALUE, E_VALUE_SIZE
cdef int64_t COMPRESSION = 0, TIMESTAMP_TYPE_AT = 0


def bind_facade(type batch_cls, type record_cls, record_packer=None, entry_packer=None, entry_reader=None,
                int64_t compression=0, int timestamp_type_at=0):
    """Name the facade's classes of plain legacy batches and of records, whose slots the kernels
    fill and read; the capsules of the compiled writers of a v2 record and of a v0/v1 log entry
    and the flat reader of a v0/v1 log entry ((capsule, slot by field)), where they are built
    (ValueError for a capsule of another signature); a legacy message's compression bits and
    where its timestamp type's bit is."""
    global BATCH, RECORD, B_ENTRY, B_POSITION, B_SIZE, B_VERIFY, B_RECORD, B_BUFFER, B_AT, PACK_RECORD, PACK_ENTRY
    global R_KEY, R_VALUE, R_TIMESTAMP, R_OFFSET, R_HEADERS, R_TIMESTAMP_TYPE, READ_ENTRY, COMPRESSION, TIMESTAMP_TYPE_AT
    global E_OFFSET, E_SIZE, E_CRC, E_CRC_FROM, E_CRC_END, E_MAGIC, E_ATTRIBUTES, E_TIMESTAMP, E_TIMESTAMP_PRESENT
    global E_KEY, E_KEY_SIZE, E_VALUE, E_VALUE_SIZE
    PACK_RECORD = NULL if record_packer is None else <RecordPacker>PyCapsule_GetPointer(record_packer, RECORD_PACKER)
    PACK_ENTRY = NULL if entry_packer is None else <EntryPacker>PyCapsule_GetPointer(entry_packer, ENTRY_PACKER)
    READ_ENTRY = NULL
    if entry_reader is not None:
        capsule, slots = entry_reader
        if len(slots) > MAX_SLOTS:
            raise ValueError(f"a flat reader of {len(slots)} slots, more than {MAX_SLOTS}")
        E_OFFSET, E_CRC, E_MAGIC, E_ATTRIBUTES = (slots["offset"], slots["message.crc"], slots["message.magic"],
                                                   slots["message.attributes"])
        E_SIZE, E_CRC_FROM, E_CRC_END = slots["message_size"], slots["message.crc.from"], slots["message.crc.end"]
        E_TIMESTAMP, E_TIMESTAMP_PRESENT = slots["message.timestamp"], slots["message.timestamp.present"]
        E_KEY, E_KEY_SIZE = slots["message.key"], slots["message.key.size"]
        E_VALUE, E_VALUE_SIZE = slots["message.value"], slots["message.value.size"]
        READ_ENTRY = <FlatReader>PyCapsule_GetPointer(capsule, FLAT_READER)
    COMPRESSION, TIMESTAMP_TYPE_AT = compression, timestamp_type_at
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


cdef Py_ssize_t plain_entry(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end, bint verify,
                            int64_t* f) noexcept nogil:
    """The end of the log entry at `pos` holding one uncompressed v0/v1 message, its fields in
    `f`; -1 for anything else: what the generated reader refuses, a compressed message, or a
    CRC that does not match (with `verify`)."""
    cdef Py_ssize_t after = READ_ENTRY(b, pos, end, f)
    if after < 0 or f[E_ATTRIBUTES] & COMPRESSION:
        return -1
    if verify and crc32_ieee(b + f[E_CRC_FROM], f[E_CRC_END] - f[E_CRC_FROM]) != <uint32_t>f[E_CRC]:
        return -1
    return after


cdef inline object _bytes_or_none(const uint8_t* b, int64_t at, int64_t size):
    return None if size < 0 else PyBytes_FromStringAndSize(<const char*>b + at, size)


cdef object new_record(const uint8_t* b, int64_t* f, int64_t offset, int64_t timestamp, int timestamp_type):
    record = alloc(RECORD)
    put(record, R_KEY, _bytes_or_none(b, f[E_KEY], f[E_KEY_SIZE]))
    put(record, R_VALUE, _bytes_or_none(b, f[E_VALUE], f[E_VALUE_SIZE]))
    put(record, R_TIMESTAMP, timestamp)
    put(record, R_OFFSET, offset)
    put(record, R_HEADERS, [])
    put(record, R_TIMESTAMP_TYPE, timestamp_type)
    return record


cdef inline int64_t stamp(int64_t* f) noexcept nogil:
    return f[E_TIMESTAMP] if f[E_TIMESTAMP_PRESENT] else -1


cdef inline int stamp_type(int64_t* f) noexcept nogil:
    """Kafka's timestamp type of a message: none for magic 0, else its attribute bit."""
    return (f[E_ATTRIBUTES] >> TIMESTAMP_TYPE_AT) & 1 if f[E_MAGIC] else -1


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
    cdef int64_t f[MAX_SLOTS]
    out = []
    while READ_ENTRY != NULL and pos < end and len(out) < max_entries:
        after = plain_entry(b, pos, end, verify, f)
        if after < 0 or f[E_SIZE] > max_batch_bytes:  # the Python reader names it
            break
        batch = alloc(BATCH)
        put(batch, B_ENTRY, None)
        put(batch, B_POSITION, pos)
        put(batch, B_SIZE, after - pos)
        put(batch, B_VERIFY, verify)
        put(batch, B_RECORD, new_record(b, f, f[E_OFFSET], stamp(f), stamp_type(f)))
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
    cdef int64_t f[MAX_SLOTS]
    if READ_ENTRY == NULL:
        return None
    while pos < end:  # check every message first: the Python reader names the first bad one
        pos = plain_entry(b, pos, end, verify, f)
        if pos < 0:
            return None
        last = f[E_OFFSET]
        lowest = last if count == 0 else min(lowest, last)
        highest = last if count == 0 else max(highest, last)
        count += 1
    if count == 0:
        return None
    if wrapper_magic >= 1 and wrapper_offset != 0:  # inner offsets relative to the first
        if lowest < 0 or highest > last or wrapper_offset < last:  # unusual offsets, or a base below 0
            return None
        base = wrapper_offset - last
    out = []
    pos = 0
    while pos < end:
        pos = plain_entry(b, pos, end, False, f)
        if log_append:
            out.append(new_record(b, f, base + f[E_OFFSET], append_time, 1))
        else:
            out.append(new_record(b, f, base + f[E_OFFSET], stamp(f), stamp_type(f)))
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
