# The helpers every compiled reader (generated/_c_*.pyx) shares: inlined into each, no module of
# their own. A compiled reader reports "not mine" (None, or -1 for a position) wherever the
# Python reader would raise, and the Python reader then runs from the start and raises the
# error with its position and path; these helpers never raise for bad input.
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from "Python.h":
    object PyType_GenericAlloc(type cls, Py_ssize_t nitems)
    object PyList_New(Py_ssize_t size)
    void PyList_SET_ITEM(object lst, Py_ssize_t i, PyObject* item)
    void PyObject_GC_Track(object obj)
    void PyObject_GC_UnTrack(object obj)
    ctypedef struct PyMemberDef:
        const char* name
        int type
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member


cdef inline object alloc(type cls):
    """A new instance with every slot unset, as object.__new__ makes it."""
    return PyType_GenericAlloc(cls, 0)


cdef inline Py_ssize_t slot_offset(type cls, str name) except -1:
    """The offset of the object slot `name` of `cls` or a base in its instances; else TypeError."""
    import types
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if descriptor is not None:
            if type(descriptor) is not types.MemberDescriptorType or not issubclass(cls, descriptor.__objclass__) \
                    or (<PyMemberDescrObject*><PyObject*>descriptor).d_member.type not in (6, 16):  # T_OBJECT(_EX)
                raise TypeError(f"{cls.__qualname__}.{name} is not a slot of its own")
            return (<PyMemberDescrObject*><PyObject*>descriptor).d_member.offset
    raise TypeError(f"{cls.__qualname__} has no slot {name!r}")


cdef inline void put(object obj, Py_ssize_t offset, object value) noexcept:
    """Set a slot as `obj.name = value` does, without looking the name up."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>obj) + offset)
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


cdef inline list hidden_list(Py_ssize_t size):
    """A list of `size` empty slots that the collector does not track until `shown`: a
    collection while it is filled (a gc callback, a finaliser, another thread) must not show
    its empty slots to Python code, which would crash on them."""
    lst = PyList_New(size)
    PyObject_GC_UnTrack(lst)
    return lst


cdef inline void fill(list lst, Py_ssize_t i, object item) noexcept:
    Py_INCREF(item)
    PyList_SET_ITEM(lst, i, <PyObject*>item)


cdef inline void shown(list lst) noexcept:
    """Track a list made by hidden_list, every slot filled."""
    PyObject_GC_Track(lst)


cdef inline object get(object obj, Py_ssize_t offset):
    """A slot's value; AttributeError when it is unset, as reading the attribute raises."""
    cdef PyObject* value = (<PyObject**>((<char*><PyObject*>obj) + offset))[0]
    if value == NULL:
        raise AttributeError("slot not set")
    return <object>value


cdef inline int64_t get_int(object obj, Py_ssize_t offset) except? -1:
    """A slot holding an int, as a C integer; TypeError for anything else (a float, a numpy
    integer), which Python arithmetic would keep as it is: the Python reader decides."""
    value = get(obj, offset)
    if type(value) is not int:
        raise TypeError("not an int")
    return value


cdef inline bint plain_buffer(object buf):
    """Whether the Python reader reads `buf` byte by byte as it is laid out (bytes, bytearray,
    mmap, a one-dimensional memoryview of unsigned bytes): others it reads otherwise or not at all."""
    cls = type(buf)
    if cls is bytes or cls is bytearray:
        return True
    if cls is memoryview:
        return buf.format == "B" and buf.ndim == 1
    return cls.__module__ == "mmap" and cls.__name__ == "mmap"


ctypedef object (*Reader)(const uint8_t* b, object buf, Py_ssize_t pos, Py_ssize_t end, object parent,
                          Py_ssize_t* after)


cdef inline object enter(Reader read, object python_reader, object cls, object buf, object pos, object end,
                         object parent, object limits, Py_ssize_t* max_items):
    """What a compiled `_read` classmethod does: `read` over the bytes of `buf` when it is a plain
    buffer and the range lies in it, else (and wherever `read` gives None or raises) the Python
    reader from the start, which decides. `max_items` holds `limits.max_items` for the read, and
    the outer read's value again after it (a read nested in it, from a finaliser, keeps its own)."""
    cdef Py_buffer view
    cdef Py_ssize_t after = 0, p, e, outer = max_items[0]
    if plain_buffer(buf) and type(pos) is int and type(end) is int:
        try:
            PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        except Exception:
            return python_reader(cls, buf, pos, end, parent)
        try:
            p, e = pos, end
            if 0 <= p <= e <= view.len:
                max_items[0] = limits.max_items
                obj = read(<const uint8_t*>view.buf, buf, p, e, parent, &after)
                if obj is not None:
                    return obj, after
        except Exception:
            pass  # anything unusual is the Python reader's to judge
        finally:
            max_items[0] = outer
            PyBuffer_Release(&view)
    return python_reader(cls, buf, pos, end, parent)


cdef inline Py_ssize_t uvarint(const uint8_t* b, Py_ssize_t p, Py_ssize_t end, int max_bytes,
                               uint64_t* out) noexcept nogil:
    """The position after the varint at `p`, its value in `out` as the Python reader reads it
    (the bits beyond 32 of a 5-byte varint dropped, beyond 64 of a 10-byte one off the shift);
    -1 when it runs past `end` or `max_bytes`."""
    cdef uint64_t v = 0
    cdef int used = 0
    cdef uint8_t x
    while True:
        if p >= end or used == max_bytes:
            return -1
        x = b[p]
        p += 1
        v |= <uint64_t>(x & 0x7F) << (7 * used)
        used += 1
        if x < 0x80:
            out[0] = v & <uint64_t>0xFFFFFFFFu if max_bytes == 5 else v
            return p


cdef inline Py_ssize_t zigzag(const uint8_t* b, Py_ssize_t p, Py_ssize_t end, int max_bytes,
                              int64_t* out) noexcept nogil:
    cdef uint64_t u = 0
    if p < end and b[p] < 0x80:  # one byte: most lengths and deltas
        u = b[p]
        out[0] = <int64_t>(u >> 1) ^ -<int64_t>(u & 1)
        return p + 1
    p = uvarint(b, p, end, max_bytes, &u)
    out[0] = <int64_t>(u >> 1) ^ -<int64_t>(u & 1)
    return p


cdef inline uint64_t be(const uint8_t* p, int width) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(width):
        v = (v << 8) | p[i]
    return v


cdef inline uint64_t le(const uint8_t* p, int width) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(width - 1, -1, -1):
        v = (v << 8) | p[i]
    return v
