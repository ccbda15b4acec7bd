"""Helpers that generated classes call: error construction, lazy markers, enums, dict/repr."""
from __future__ import annotations

from enum import IntEnum

from .errors import DecodeError, InvalidValueError, LimitExceededError, TruncatedError, UsageError
from .limits import LIMITS

MUTABLE_BUFFERS = (memoryview, bytearray)  # buffers whose slices are not bytes


class _Lazy:
    __slots__ = ()

    def __repr__(self):
        return "<not decoded yet>"

    def __reduce__(self):
        return "LAZY"  # copies and pickles keep the one marker that generated code compares with `is`


LAZY = _Lazy()


def truncated(pos: int, end: int, fields) -> TruncatedError:
    """Error for a fixed-width run that does not fit; `fields` is ((offset, width, path), ...)."""
    for offset, width, path in fields:
        if pos + offset + width > end:
            return TruncatedError(f"needs {width} bytes, {max(0, end - pos - offset)} left",
                                  pos + offset, path)
    return TruncatedError("input ends early", pos, fields[0][2])


def short(pos: int, end: int, need: int, path: str) -> TruncatedError:
    return TruncatedError(f"needs {need} bytes, {max(0, end - pos)} left", pos, path)


def bad_size(pos: int, end: int, size: int, path: str) -> DecodeError:
    """Error for a size that is negative or larger than what is left."""
    if size < 0:
        return InvalidValueError(f"negative size {size}", pos, path)
    return short(pos, end, size, path)


def invalid(pos: int, path: str, message: str) -> InvalidValueError:
    return InvalidValueError(message, pos, path)


def too_many(pos: int, path: str, count: int, room: int) -> LimitExceededError:
    if count > LIMITS.max_items:
        return LimitExceededError(f"count {count} is over the limit of {LIMITS.max_items} "
                                  "(kafkacodec.runtime.limits.LIMITS.max_items)", pos, path)
    return LimitExceededError(f"count {count} is larger than the {room} bytes left could hold", pos, path)


def bad_range(pos: int, end, size: int) -> UsageError:
    return UsageError(f"bad range [{pos}, {end}) for a buffer of {size} bytes")


def needs_parent(name: str, parent: str) -> UsageError:
    return UsageError(f"{name} takes fields of the {parent} around it; read the {parent} instead")


def needs_params(name: str, params: tuple[str, ...]) -> UsageError:
    given = ", ".join(f"{p}=..." for p in params)
    return UsageError(f"{name} is read with params: give {given} (to from_bytes or read), or read the "
                      "type around it, which passes them")


def in_processed(err: DecodeError, pos: int, path: str, name: str) -> DecodeError:
    """Re-anchor an error found inside processed (decompressed) data at the field's position."""
    inner = f" at byte {err.position} of the data decoded by {name}" if err.position is not None else ""
    err.message = f"{err.message}{inner}"
    err.args = (err.message,)
    err.position = pos
    if err.path is None:
        err.path = path
    return err


def enum_value(enum: type[IntEnum], value):
    """The enum member for `value`, or the plain integer when the schema does not name it."""
    return enum._value2member_map_.get(value, value)  # a dict lookup; enum(value) costs ~10x more


def to_plain(value):
    """Generated objects, lists and enums as dicts, lists and ints (bytes stay bytes)."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, IntEnum):
        return value.name
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def short_repr(value) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) > 40:
        return f"{bytes(value[:32])!r}...({len(value)} bytes)"
    if isinstance(value, list) and len(value) > 8:
        return "[" + ", ".join(short_repr(v) for v in value[:8]) + f", ... ({len(value)} items)]"
    if isinstance(value, list):
        return "[" + ", ".join(short_repr(v) for v in value) + "]"
    return repr(value)


def detached(value):
    """`value` (just read from a memoryview or a bytearray) with every byte field made bytes, as it
    would be had it been read from bytes: no field keeps the buffer exported or changes with it."""
    if isinstance(value, MUTABLE_BUFFERS):
        return bytes(value)
    stack = [value] if hasattr(value, "_spans") else []
    while stack:
        node = stack.pop()
        for name in node.__class__.__slots__:
            if name in node._spans:
                continue
            field = getattr(node, name, None)
            if isinstance(field, MUTABLE_BUFFERS):
                setattr(node, name, bytes(field))
            elif field.__class__ is list:
                for i, item in enumerate(field):
                    if isinstance(item, MUTABLE_BUFFERS):
                        field[i] = bytes(item)
                    elif hasattr(item, "_spans"):
                        stack.append(item)
            elif hasattr(field, "_spans"):
                stack.append(field)
    return value


def reencoded(processor, data, raw):
    """`data` encoded by `processor`: the bytes the field was read from, `raw` = (buffer, start,
    end), while they still decode to `data`, so that a decoded object writes (and sizes) as it was
    read whatever compressor made it; a new encoding once the content differs."""
    if raw is not None:
        buf, start, end = raw
        original = bytes(buf[start:end])
        try:
            if processor.decode(original) == data:
                return original
        except DecodeError:
            pass
    return processor.encode(data)
