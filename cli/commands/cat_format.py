"""How `cat` prints a record: a JSON object per line, or a kcat-style format string."""
from __future__ import annotations

import json
import re

from kafkacodec.codec.values.jsonable import jsonable

from .terminal import shown

# kcat's format tokens that `cat --format` knows, and what each prints
TOKENS = {"t": "topic", "p": "partition", "o": "offset", "T": "timestamp (ms)", "k": "key", "s": "value",
          "h": "headers (k=v,...)", "K": "key length in bytes (-1 for null)", "S": "value length in bytes (-1 for null)",
          "f": "the segment file", "i": "the value's schema id"}
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "0": "\0"}
_PIECE = re.compile(r"%(.)|\\(.)|([^%\\]+)", re.S)


def compile_format(text: str):
    """A function of (record fields) -> str; ValueError for a token it does not know."""
    parts = []
    for m in _PIECE.finditer(text):
        token, escape, literal = m.groups()
        if literal is not None:
            parts.append(literal)
        elif escape is not None:
            parts.append(ESCAPES.get(escape, "\\" + escape))
        elif token == "%":
            parts.append("%")
        elif token in TOKENS:
            parts.append((token,))
        else:
            raise ValueError(f"%{token} is none of " + ", ".join(f"%{t} ({what})" for t, what in TOKENS.items()))
    if re.search(r"(?<!%)(%%)*%$|(?<!\\)(\\\\)*\\$", text):
        raise ValueError("the format ends inside a token (a lone % or \\ at its end)")
    # what comes from the files is escaped as all text output is (commands.terminal); the format's own
    # newlines and tabs are not
    return lambda fields: "".join(p if isinstance(p, str) else shown(_field(fields, p[0])) for p in parts)


def as_text(decoded, raw) -> str:
    """A decoded key or value as text; one that did not decode as its bytes in base64."""
    if decoded.problem is not None:
        return jsonable(bytes(raw))
    if decoded.value is None:
        return ""
    if isinstance(decoded.value, str):
        return decoded.value
    return json.dumps(jsonable(decoded.value), ensure_ascii=False, separators=(",", ":"))  # escaped when printed


def _length(data) -> str:
    return "-1" if data is None else str(len(data))


def _field(f: dict, token: str) -> str:
    record = f["record"]
    if token == "t":
        return f["topic"]
    if token == "p":
        return str(f["partition"])
    if token == "o":
        return str(record.offset)
    if token == "T":
        return str(record.timestamp)
    if token == "k":
        return as_text(f["key"], record.key)
    if token == "s":
        return as_text(f["value"], record.value)
    if token == "h":  # a value that is not UTF-8 as its bytes escaped
        return ",".join(f"{k}={'' if v is None else v if isinstance(v, str) else v.decode('utf-8', 'backslashreplace')}"
                        for k, v in f["raw_headers"])
    if token == "K":
        return _length(record.key)
    if token == "S":
        return _length(record.value)
    if token == "f":
        return f["file"]
    sid = f["value"].schema_id
    return "" if sid is None else str(sid)


def decoded_json(decoded, raw) -> dict:
    """A key or value decoded, as JSON members: `value`, and `format`, `schemaId`, `error` (kind
    and message; the value is then its bytes in base64) and `note` where there are any."""
    if decoded.problem is not None:
        out = {"value": jsonable(bytes(raw)), "format": "base64",
               "error": {"kind": decoded.problem.kind, "message": decoded.problem.message}}
    else:
        out = {"value": jsonable(decoded.value)}
        if decoded.format is not None:
            out["format"] = decoded.format
    if decoded.schema_id is not None:
        out["schemaId"] = decoded.schema_id
    if decoded.note is not None:
        out["note"] = decoded.note
    return out


def record_json(f: dict) -> str:
    """A record as one line of JSON: where it is, its key and value decoded (`key`, `keyFormat`,
    `keySchemaId`, `keyError`, `keyNote`; the same for the value), its headers."""
    record = f["record"]
    obj = {"topic": f["topic"], "partition": f["partition"], "offset": record.offset, "timestamp": record.timestamp}
    for name, raw in (("key", record.key), ("value", record.value)):
        for member, part in decoded_json(f[name], raw).items():
            obj[name if member == "value" else name + member[0].upper() + member[1:]] = part
    obj["headers"] = [{"key": k, "value": v} if v is None or isinstance(v, str) else {"key": k, "base64": jsonable(v)}
                      for k, v in f["raw_headers"]]
    return json.dumps(obj, separators=(",", ":"))
