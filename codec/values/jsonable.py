"""Decoded values as JSON: what Avro's and protobuf's readers give (bytes, Decimal, dates and
times, UUIDs, tuples) in the one spelling each has in JSON text."""
from __future__ import annotations

import base64
import datetime
import decimal
import math
import uuid


def jsonable(value):
    """`value` with every part JSON can hold as it is, the rest spelled: bytes as base64, a
    Decimal as its exact digits, dates and times in ISO 8601, a UUID as text, a float that is
    not a number as "NaN" or "Infinity"."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ("NaN" if math.isnan(value) else
                                                   "Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)
