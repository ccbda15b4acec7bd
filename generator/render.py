"""Render plans with one Jinja2 environment; templates only lay out text."""
from __future__ import annotations

import re
from pathlib import Path

import jinja2

from . import GENERATOR_VERSION
from .plans.module import ModulePlan

TEMPLATES = Path(__file__).parent / "templates"

# What generated code may take from the standard library and the runtime: (module, name, the
# name generated code uses). A module imports those its code names, in this order.
RUNTIME_NAMES = (
    ("enum", "IntEnum", "IntEnum"),
    ("struct", "Struct", "Struct"),
    ("struct", "error", "_StructError"),
    ("weakref", "ref", "_ref"),
    ("kafkacodec.runtime.codecs", "processor", "_processor"),
    ("kafkacodec.runtime.compiled", "attach", "_attach_compiled"),
    ("kafkacodec.runtime.crc", "crc32", "_crc32"),
    ("kafkacodec.runtime.crc", "crc32c", "_crc32c"),
    ("kafkacodec.runtime.errors", "ChecksumError", "_ChecksumError"),
    ("kafkacodec.runtime.errors", "DecodeError", "_DecodeError"),
    ("kafkacodec.runtime.errors", "EncodeError", "_EncodeError"),
    ("kafkacodec.runtime.limits", "LIMITS", "_LIMITS"),
    ("kafkacodec.runtime.node", "Node", "_Node"),
    ("kafkacodec.runtime.support", "LAZY", "_LAZY"),
    ("kafkacodec.runtime.support", "MUTABLE_BUFFERS", "_MUTABLE"),
    ("kafkacodec.runtime.support", "bad_size", "_bad_size"),
    ("kafkacodec.runtime.support", "detached", "_detached"),
    ("kafkacodec.runtime.support", "enum_value", "_enum_value"),
    ("kafkacodec.runtime.support", "in_processed", "_in_processed"),
    ("kafkacodec.runtime.support", "invalid", "_invalid"),
    ("kafkacodec.runtime.support", "reencoded", "_reencoded"),
    ("kafkacodec.runtime.support", "short", "_short"),
    ("kafkacodec.runtime.support", "too_many", "_too_many"),
    ("kafkacodec.runtime.support", "truncated", "_truncated"),
    ("kafkacodec.runtime.varint", "SMALL_VARINTS", "_VT"),
    ("kafkacodec.runtime.varint", "SMALL_ZIGZAG", "_ZZ"),
    ("kafkacodec.runtime.varint", "encode_uvarint32", "_enc_uv32"),
    ("kafkacodec.runtime.varint", "encode_zigzag32", "_enc_zz32"),
    ("kafkacodec.runtime.varint", "encode_zigzag64", "_enc_zz64"),
    ("kafkacodec.runtime.varint", "read_uvarint", "_read_uvarint"),
    ("kafkacodec.runtime.varint", "uvarint_size", "_uv32_size"),
    ("kafkacodec.runtime.varint", "write_uvarint32", "_w_uv32"),
    ("kafkacodec.runtime.varint", "write_zigzag32", "_w_zz32"),
    ("kafkacodec.runtime.varint", "write_zigzag64", "_w_zz64"),
    ("kafkacodec.runtime.varint", "zigzag32_size", "_zz32_size"),
    ("kafkacodec.runtime.varint", "zigzag64_size", "_zz64_size"),
)
_IMPORTS_HERE = "#<runtime imports>"


def _body(lines: list[str], indent: int) -> str:
    pad = " " * indent
    return "\n".join(pad + line if line else "" for line in lines)


def _docstring(text: str, indent: int = 0, closing: bool = True) -> str:
    text = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    lines = text.splitlines()
    if len(lines) <= 1:
        return text
    body = lines[0] + "\n" + "\n".join(pad + line if line.strip() else "" for line in lines[1:])
    return body + "\n" + pad if closing else body


def _oneline(text: str) -> str:
    return " ".join((text or "").split())


def _hexbytes(data: bytes, limit: int = 16) -> str:
    text = data[:limit].hex(" ")
    return f"`{text}` … ({len(data)} bytes)" if len(data) > limit else f"`{text}`" if data else ""


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["body"] = _body
    env.filters["docstring"] = _docstring
    env.filters["oneline"] = _oneline
    env.filters["hexbytes"] = _hexbytes
    return env


def render_module(plan: ModulePlan, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    text = env.get_template("module.py.j2").render(m=plan, version=GENERATOR_VERSION,
                                                   runtime_imports=_IMPORTS_HERE)
    head, code = text.split(_IMPORTS_HERE + "\n", 1)
    return head + runtime_imports(code) + code.rstrip("\n") + "\n"


def runtime_imports(code: str) -> str:
    """The import lines of the runtime names `code` uses (a name in a docstring imports it too,
    which is harmless; a name used is never missed)."""
    used = set(re.findall(r"[A-Za-z_]\w*", code))
    groups: dict[bool, list[str]] = {False: [], True: []}  # the standard library's, then ours
    for module, name, alias in RUNTIME_NAMES:
        if alias in used:
            groups[module.startswith("kafkacodec.")].append(
                f"from {module} import {name}" + (f" as {alias}" if alias != name else "") + "\n")
    return "\n".join("".join(lines) for lines in groups.values() if lines)
