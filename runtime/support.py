"""Helpers that generated classes call: error construction, lazy markers, enums, dict/repr."""
from __future__ import annotations

from enum import IntEnum

from .errors import DecodeError, InvalidValueError, LimitExceededError, TruncatedError
from .limits import LIMITS


class _Lazy:
    __slots__ = ()

    def __repr__(self):
        return "<not decoded yet>"


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
