# The writers' primitives compiled code shares (generated/_c_*.pyx, runtime/_facade.pyx):
# inlined into each, no module of their own. A put_* writes at p, which has room, and returns the
# position after what it wrote; grow and settle make and give back that room in a bytearray.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memmove

cdef extern from "_crc32.h":
    uint32_t crc32_ieee "kc_crc32"(const uint8_t* b, size_t n) nogil

cdef extern from "Python.h":
    char* PyByteArray_AS_STRING(object out)
    Py_ssize_t PyByteArray_GET_SIZE(object out)
    int PyByteArray_Resize(object out, Py_ssize_t size) except -1


cdef inline uint64_t zigzag_of(int64_t v) noexcept nogil:
    return (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)


cdef inline int uvarint_size(uint64_t u) noexcept nogil:
    """Bytes of the unsigned varint of u."""
    cdef int n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n


cdef inline int zigzag_size(int64_t v) noexcept nogil:
    """Bytes of the zigzag varint of v."""
    return uvarint_size(zigzag_of(v))


cdef inline uint8_t* put_uvarint(uint8_t* p, uint64_t u) noexcept nogil:
    while u >= 0x80:
        p[0] = <uint8_t>(u | 0x80)
        p += 1
        u >>= 7
    p[0] = <uint8_t>u
    return p + 1


cdef inline uint8_t* put_zigzag(uint8_t* p, int64_t v) noexcept nogil:
    return put_uvarint(p, zigzag_of(v))


cdef inline uint8_t* put_be(uint8_t* p, uint64_t v, int width) noexcept nogil:
    cdef int i
    for i in range(width - 1, -1, -1):
        p[i] = <uint8_t>(v & 0xFF)
        v >>= 8
    return p + width


cdef inline uint8_t* put_le(uint8_t* p, uint64_t v, int width) noexcept nogil:
    cdef int i
    for i in range(width):
        p[i] = <uint8_t>(v & 0xFF)
        v >>= 8
    return p + width


cdef inline uint8_t* grow(bytearray out, Py_ssize_t n) except NULL:
    """Room for n more bytes at the end of out: where they start (settle gives back what is left)."""
    cdef Py_ssize_t size = PyByteArray_GET_SIZE(out)
    PyByteArray_Resize(out, size + n)
    return <uint8_t*>PyByteArray_AS_STRING(out) + size


cdef inline int settle(bytearray out, uint8_t* p) except -1:
    """End out at p, within the room grow gave."""
    return PyByteArray_Resize(out, p - <uint8_t*>PyByteArray_AS_STRING(out))


cdef inline int patch_varint(bytearray out, Py_ssize_t at, int room, uint64_t u) except -1:
    """The varint of u written into the `room` bytes held for it at `at`, what follows moved back
    over what it does not take."""
    cdef uint8_t* b = <uint8_t*>PyByteArray_AS_STRING(out)
    cdef Py_ssize_t size = PyByteArray_GET_SIZE(out)
    cdef int width = uvarint_size(u)
    put_uvarint(b + at, u)
    if width < room:
        memmove(b + at + width, b + at + room, size - at - room)
        PyByteArray_Resize(out, size - room + width)
    return 0


cdef inline int int_arg(object v, bint has_default, int64_t default, int64_t* out) except -1:
    """A writer's number argument as _pack's wrapper takes it: an int that fits 64 bits, or None
    where the field has a default; 1 for anything else (the Python writer's to name)."""
    if v is None:
        out[0] = default
        return 0 if has_default else 1
    if type(v) is not int:
        return 1
    try:
        out[0] = v
    except OverflowError:
        return 1
    return 0
