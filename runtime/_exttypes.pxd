# What makes a compiled reader's extension types (generated/_c_*.pyx) behave as the Python classes
# they stand for: inlined into each, no module of its own. An extension type is static, so its
# attributes are set in its dict directly, each followed by PyType_Modified (CPython's attribute
# cache would otherwise keep serving the value replaced, even a freed one).
from cpython.mem cimport PyMem_Malloc
from cpython.object cimport PyObject, PyTypeObject, newfunc
from cpython.ref cimport Py_INCREF

cdef extern from "Python.h":
    ctypedef struct MemberSpec "PyMemberDef":
        const char* name
        int type
        Py_ssize_t offset
        int flags
        const char* doc
    object PyDescr_NewMember(type cls, MemberSpec* member)
    object PyType_GenericNew(type cls, PyObject* args, PyObject* kwargs)
    void PyType_Modified(type cls)
    int T_OBJECT_EX

cdef inline void set_in_type(type cls, str name, object value) except *:
    (<dict>(<PyTypeObject*>cls).tp_dict)[name] = value
    PyType_Modified(cls)


cdef inline void as_member(type cls, str name) except *:
    """Serve the `cdef public object` field `name` by a member descriptor, which CPython reads
    inline, instead of Cython's property (a C call per access); its offset is found by setting
    a marker through the property. The descriptor lives as long as the type: never freed."""
    obj = cls.__new__(cls)
    marker = object()
    setattr(obj, name, marker)
    cdef PyObject** words = <PyObject**><PyObject*>obj
    cdef Py_ssize_t i, n = (<PyTypeObject*>cls).tp_basicsize // sizeof(PyObject*)
    for i in range(2, n + 1):
        if i == n:
            raise TypeError(f"{cls.__name__}.{name} is not an object field")
        if words[i] == <PyObject*>marker:
            break
    key = name.encode()
    Py_INCREF(key)  # the descriptor keeps its name's bytes
    cdef MemberSpec* member = <MemberSpec*>PyMem_Malloc(sizeof(MemberSpec))
    if member == NULL:
        raise MemoryError()
    member.name = <const char*>key
    member.type = T_OBJECT_EX  # unset: AttributeError, as a slot
    member.offset = i * sizeof(PyObject*)
    member.flags = 0
    member.doc = NULL
    set_in_type(cls, name, PyDescr_NewMember(cls, member))
    setattr(obj, name, None)


cdef inline void adopt(type ext, type pure, dict swaps, object alloc) except *:
    """Give `ext` the API of the Python class `pure`: its methods, properties and class
    attributes, and those of its bases (nested classes as `swaps` maps them); its name, for
    repr and pickling; `alloc` to make instances with every field unset; and its fields (the
    parent's and `pure.__slots__`) as member descriptors."""
    for klass in reversed(pure.__mro__[:-1]):
        for name, value in klass.__dict__.items():
            if name in ("__dict__", "__weakref__", "__module__", "__qualname__", "__init__", "__eq__",
                        "__hash__", "__repr__") or type(value).__name__ == "member_descriptor":
                continue  # the extension type's own: its C slots and its layout
            set_in_type(ext, name, swaps.get(value, value) if isinstance(value, type) else value)
    set_in_type(ext, "_qualname", pure.__qualname__)
    set_in_type(ext, "_module", pure.__module__)
    set_in_type(ext, "_alloc", staticmethod(alloc))
    for name in ("_parent_ref",) + pure.__slots__:
        as_member(ext, name)
    # `cls.__new__(cls)` then leaves every field unset, as for the Python class (Cython's own
    # tp_new sets them to None; its other code reads them only through the descriptors above)
    (<PyTypeObject*>ext).tp_new = <newfunc>PyType_GenericNew
    PyType_Modified(ext)
