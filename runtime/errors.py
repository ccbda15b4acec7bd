"""Typed errors raised by generated readers and writers.

Every decoding problem is a DecodeError carrying the file (when known), the absolute byte position
in the buffer being read and the schema path of the field that failed, so callers can report
"segment.log: byte 4711: record_batch/records/length: varint longer than 5 bytes".
"""
from __future__ import annotations


class KafkaCodecError(Exception):
    """Base of every error this package raises on purpose."""


class DecodeError(KafkaCodecError):
    """Bytes that do not decode; carries file, byte position and schema path."""

    def __init__(self, message: str, position: int | None = None, path: str | None = None,
                 file: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.path = path
        self.file = file

    def with_context(self, *, file: str | None = None, offset: int = 0, path_prefix: str | None = None):
        """Return self after shifting the position by `offset` and filling in the file if unknown."""
        if file is not None and self.file is None:
            self.file = file
        if self.position is not None:
            self.position += offset
        if path_prefix and self.path:
            self.path = f"{path_prefix}/{self.path}"
        return self

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.path:
            parts.append(self.path)
        parts.append(self.message)
        return ": ".join(parts)


class TruncatedError(DecodeError):
    """The input ends before a field that the format requires."""


class ChecksumError(DecodeError):
    """A stored checksum does not match the one computed over the covered bytes."""

    def __init__(self, message, position=None, path=None, file=None, *, stored=None, computed=None):
        super().__init__(message, position, path, file)
        self.stored = stored
        self.computed = computed


class InvalidValueError(DecodeError):
    """A field holds a value the format forbids (bad magic, negative count, bad varint...)."""


class LimitExceededError(DecodeError):
    """A length, count or decompressed size is above a configured limit."""


class CompressionError(DecodeError):
    """Compressed data that cannot be decompressed (damaged stream, unknown codec)."""


class UsageError(KafkaCodecError, ValueError):
    """A call the API does not allow: a position outside the buffer, or a type read on its own that
    can only be read inside its parent (it takes a count or a length from it)."""


class EncodeError(KafkaCodecError):
    """An object that cannot be encoded: a missing field or a value out of range."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
