"""The names generated code takes from the standard library and the runtime, recorded by the
planners as they write code that uses them (never found again in the text they wrote)."""
from __future__ import annotations

# What generated code may take from the standard library and the runtime: (module, name, the
# name generated code uses). A module imports those its planners record, in this order.
RUNTIME_NAMES = (
    ("enum", "IntEnum", "IntEnum"),
    ("struct", "Struct", "Struct"),
    ("struct", "error", "_StructError"),
    ("struct", "unpack_from", "_unpack_from"),
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
    ("kafkacodec.runtime.support", "needs_params", "_needs_params"),
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
    ("kafkacodec.runtime.writing", "derived", "_derived"),
    ("kafkacodec.runtime.writing", "param", "_param"),
    ("kafkacodec.runtime.writing", "require", "_require"),
    ("kafkacodec.runtime.writing", "write_case", "_write_case"),
    ("kafkacodec.runtime.writing", "write_value", "_write_value"),
)
_ALIASES = {alias for _, _, alias in RUNTIME_NAMES}


class ImportList:
    """Call with a name to use it in generated code: it is recorded and returned."""

    def __init__(self):
        self.used: set[str] = set()

    def __call__(self, alias: str) -> str:
        if alias not in _ALIASES:
            raise KeyError(f"{alias!r} is not a runtime name generated code may import")
        self.used.add(alias)
        return alias


def import_lines(used: set[str]) -> str:
    """The import lines of the names used: the standard library's, then ours."""
    groups: dict[bool, list[str]] = {False: [], True: []}
    for module, name, alias in RUNTIME_NAMES:
        if alias in used:
            groups[module.startswith("kafkacodec.")].append(
                f"from {module} import {name}" + (f" as {alias}" if alias != name else "") + "\n")
    return "\n".join("".join(lines) for lines in groups.values() if lines)
