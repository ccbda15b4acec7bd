"""The one error a key or value that does not decode raises: what kind of problem, and the byte
of the key or value where it shows. Callers report it per record and read on."""
from __future__ import annotations

from kafkacodec.runtime.errors import DecodeError

# the kinds, as reports and Spark's error column name them
NOT_FRAMED = "not-framed"  # no magic byte and schema id where the format needs them
UNKNOWN_SCHEMA = "unknown-schema"  # an id or GUID the schema source does not hold
TRUNCATED = "truncated"  # the payload ends before its schema does
MISMATCH = "mismatch"  # the payload does not read as its schema says, or bytes are left over
INVALID = "invalid"  # it reads, but validation against its schema fails
BAD_SCHEMA = "bad-schema"  # the registered schema itself does not compile
NOT_TEXT = "not-text"  # not UTF-8 (or not JSON) where text was asked for


class UndecodableValue(DecodeError):
    """A key or value that does not decode; `kind` is one of this module's constants."""

    def __init__(self, kind: str, message: str, position: int | None = None, schema_id: int | None = None):
        super().__init__(message, position)
        self.kind = kind
        self.schema_id = schema_id


class Remembered:
    """What is built once per schema (a parsed writer's schema, a compiled .proto, a validator):
    the result, or the problem, so that a schema that does not parse is not parsed again for each
    of its records."""

    def __init__(self, build):
        self._build = build
        self._done: dict = {}

    def __call__(self, schema):
        key = (schema.context, schema.id)
        if key not in self._done:
            try:
                self._done[key] = (self._build(schema), None)
            except UndecodableValue as err:
                self._done[key] = (None, err)
        value, problem = self._done[key]
        if problem is not None:
            raise problem
        return value
