"""The base class of every generated class: what they all share, written once.

An object holds its enclosing object (`_parent`) through a weak reference, so the tree a reader
builds has no reference cycle: a decoded batch is freed by reference counting as soon as the
caller drops it, without waiting for the cyclic garbage collector. A record kept alone after its
batch is gone has no `_parent` (None); its own fields were all decoded while the batch lived.
"""
from __future__ import annotations

import copy
import importlib
from struct import error as StructError
from weakref import ref

from .errors import EncodeError
from .support import MUTABLE_BUFFERS, bad_range, detached, invalid, needs_parent, short_repr, to_plain


def link(parent):
    """The value of `_parent_ref` that makes `parent` an object's parent."""
    return None if parent is None else ref(parent)


def type_name(cls) -> str:
    """A generated class's qualified name, the same whichever backend made it (an extension
    type's own `__qualname__` is fixed by its C name, so it keeps the Python class's)."""
    return cls.__dict__.get("_qualname") or cls.__qualname__


def is_node(value) -> bool:
    """Whether `value` is an object of a generated class, of either backend."""
    return hasattr(value.__class__, "_eq_fields")


class Node:
    """A value of a schema type, read from bytes or built from fields. The compiled backend's
    extension types cannot derive from it: `is_node` tells either backend's objects."""

    __slots__ = ("_parent_ref", "__weakref__")
    _alloc = object.__new__  # an instance with no field set (extension types have their own)
    _spans: tuple[str, ...] = ()  # slots holding (buffer, start, end) of bytes not decoded yet
    _schema_path = ""
    _needs: str | None = None  # the enclosing type whose fields reading this type takes
    _params: tuple[str, ...] = ()  # what reading this type is given (Kaitai `params`), kept on it
    _eq_fields: tuple[str, ...] = ()
    _repr_fields: tuple[str, ...] = ()
    _dict_fields: tuple[str, ...] = ()

    @property
    def _parent(self):
        held = self._parent_ref
        return None if held is None else held()

    @_parent.setter
    def _parent(self, value):
        self._parent_ref = link(value)

    @property
    def _root(self):
        node = self
        while (up := node._parent) is not None:
            node = up
        return node

    @classmethod
    def from_bytes(cls, data, verify: bool = True, **params):
        """Decode `data`, which must hold exactly one object of this type (given its params,
        such as the version of a message, where the type has any)."""
        if cls._needs is not None:
            raise needs_parent(type_name(cls), cls._needs)
        if not isinstance(data, bytes):
            data = bytes(data)
        obj, pos = cls._read(data, 0, len(data), None, **params)
        if pos != len(data):
            raise invalid(pos, cls._schema_path, f"{len(data) - pos} bytes left after the end")
        if verify:
            obj._verify()
        return obj

    @classmethod
    def read(cls, buf, pos: int = 0, end: int | None = None, verify: bool = True, **params):
        """Decode one object at `pos` of `buf` (bytes, bytearray, memoryview, mmap); returns
        (object, position after it). Byte fields are bytes whatever the buffer."""
        if cls._needs is not None:
            raise needs_parent(type_name(cls), cls._needs)
        if end is None:
            end = len(buf)
        if not 0 <= pos <= end <= len(buf):
            raise bad_range(pos, end, len(buf))
        obj, pos = cls._read(buf, pos, end, None, **params)
        if isinstance(buf, MUTABLE_BUFFERS):
            detached(obj)
        if verify:
            obj._verify()
        return obj, pos

    def _verify(self) -> None:
        """Raise ChecksumError if a stored checksum does not match the bytes read (none here)."""

    def size(self, *params, **named) -> int:
        """Encoded size in bytes, by encoding, leaving the objects as they were (the -hot types
        and those of a fixed layout compute theirs without encoding)."""
        out = bytearray()
        try:
            self._write(out, False, *params, **named)
        except (StructError, TypeError) as e:
            raise EncodeError(str(e), self._schema_path) from None
        return len(out)

    def to_bytes(self, **params) -> bytes:
        """Encode, computing every derived field that is not pinned (at the params given, such
        as a message's version, where the type has any; else at those the object holds)."""
        out = bytearray()
        try:
            self._write(out, True, **params)
        except (StructError, TypeError) as e:
            raise EncodeError(str(e), self._schema_path) from None
        return bytes(out)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        fields = self._eq_fields
        return [getattr(self, f) for f in fields] == [getattr(other, f) for f in fields]

    __hash__ = None

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={short_repr(getattr(self, f))}" for f in self._repr_fields)
        return f"{type_name(self.__class__)}({shown})"

    def to_dict(self) -> dict:
        """Fields and instances as plain Python values (nested objects as dicts)."""
        return {f: to_plain(getattr(self, f)) for f in self._dict_fields}

    def __copy__(self):
        """The same field values, the same parent."""
        new = self._alloc(self.__class__)
        new._parent_ref = self._parent_ref
        for name in self.__class__.__slots__:
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        return new

    def __deepcopy__(self, memo):
        """Fields not decoded yet stay so; the spans they will be decoded from share an immutable
        bytes buffer, and copy only their own part of any other. The copy's parent is the copy
        of this object's parent when that is being copied too, else the same parent."""
        new = self._alloc(self.__class__)
        memo[id(self)] = new
        parent = self._parent
        new._parent_ref = link(None if parent is None else memo.get(id(parent), parent))
        spans = self._spans
        for name in self.__class__.__slots__:
            if not hasattr(self, name):
                continue
            value = getattr(self, name)
            if name in spans and value.__class__ is tuple:
                setattr(new, name, value if value[0].__class__ is bytes else _narrowed(value))
            else:
                setattr(new, name, copy.deepcopy(value, memo))
        return new

    def __reduce__(self):
        """Pickled by the Python class's module and name, which give back the class of the
        backend in use where it is unpickled."""
        cls = self.__class__
        return _unpickled, (cls.__dict__.get("_module") or cls.__module__, type_name(cls)), self.__getstate__()

    def __getstate__(self) -> dict:
        """The field values, and of each span only its own bytes (never the whole segment it was
        read from, nor an unpicklable memory map). The parent is not kept: unpickled objects
        below this one get it back, an object pickled alone has none."""
        spans = self._spans
        return {name: _narrowed(getattr(self, name)) if name in spans else getattr(self, name)
                for name in self.__class__.__slots__ if hasattr(self, name)}

    def __setstate__(self, state: dict) -> None:
        self._parent_ref = None
        here = ref(self)
        for name, value in state.items():
            setattr(self, name, value)
            for child in value if value.__class__ is list else (value,):
                if is_node(child):
                    child._parent_ref = here


def _unpickled(module: str, qualname: str):
    cls = importlib.import_module(module)
    for name in qualname.split("."):
        cls = getattr(cls, name)
    return cls._alloc(cls)


def _narrowed(span):
    """A span (buffer, start, end) kept by a reader, as a span over a bytes copy of that part only."""
    if span.__class__ is not tuple:
        return span
    buf, start, end = span
    return bytes(memoryview(buf)[start:end]), 0, end - start
