"""Helpers that the generated writers of the types not marked -hot call, where a call costs less
than the lines it saves (the -hot types' writers keep this code inline)."""
from __future__ import annotations

from operator import attrgetter

from .errors import EncodeError

ENCODED = (bytes, bytearray, memoryview)  # a nested value given already encoded


def param(value, obj, name: str, keep: bool, path: str):
    """A param as the enclosing writer passes it, else as the object holds it; one passed is
    left on the object when `keep` (as computed fields are)."""
    if value is None:
        value = getattr(obj, name)
        if value is None:
            raise EncodeError("param is not set", path)
    elif keep:
        setattr(obj, name, value)
    return value


def require(value, path: str) -> None:
    if value is None:
        raise EncodeError("is not set", path)


def write_value(out: bytearray, value, keep: bool, *params) -> None:
    """A nested value: its bytes when given encoded, else the object writes itself."""
    if isinstance(value, ENCODED):
        out += value
    else:
        value._write(out, keep, *params)


def write_case(out: bytearray, value, keep: bool, cases: dict | None, on, path: str, *params) -> None:
    """A switch's value, refused when it is an object of another type than the case `on`
    selects in `cases` (case -> class, None for the default; written as another type, it would
    encode what the reader takes for the case's type)."""
    if isinstance(value, ENCODED):
        out += value
        return
    want = None if cases is None else cases.get(on, cases.get(None))
    if want is not None and not isinstance(value, want):
        raise EncodeError(f"is a {type(value).__qualname__}, where {on!r} selects {want.__qualname__}", path)
    value._write(out, keep, *params)


class Derived:
    """A field computed on write unless set: reads the slot holding it; setting it pins the value
    (`bit` of the object's `_pins`) so that the writer keeps it, and None unpins it."""

    def __init__(self, slot: str, bit: int, doc: str | None = None):
        self.slot, self.bit, self.__doc__ = slot, bit, doc
        self._get = attrgetter(slot)

    def __get__(self, obj, owner=None):
        return self if obj is None else self._get(obj)

    def __set__(self, obj, value) -> None:
        setattr(obj, self.slot, value)
        obj._pins = (obj._pins | self.bit) if value is not None else (obj._pins & ~self.bit)
