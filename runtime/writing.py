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
    if cases is not None:
        want = cases.get(on, cases.get(None))
        if want is None:  # read back, the bytes would stay raw: no case to write an object as
            raise EncodeError(f"{on!r} selects no case; give the value as bytes", path)
        if not isinstance(value, want):
            raise EncodeError(f"is a {type(value).__qualname__}, where {on!r} selects {want.__qualname__}", path)
    value._write(out, keep, *params)


def derived(slot: str, bit: int, doc: str | None = None) -> property:
    """A field computed on write unless set: reads the slot holding it (a C getter, as fast as a
    slot); setting it pins the value (`bit` of the object's `_pins`) so that the writer keeps
    it, and None unpins it."""
    def pin(obj, value) -> None:
        setattr(obj, slot, value)
        obj._pins = (obj._pins | bit) if value is not None else (obj._pins & ~bit)
    return property(attrgetter(slot), pin, None, doc)
