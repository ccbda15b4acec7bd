"""The compiled readers generated from the schemas (generated/_c_<schema>.pyx), when they are
built, current and wanted.

A generated module names its compiled twin and the hash of the .pyx it was generated with; a
build of other source (an old build in a checkout) is not used, nor any with KAFKACODEC_PURE=1
in the environment. A compiled reader replaces the `_read` of a type the schema marks `-hot`;
it gives the same objects and, by handing bad input back to the Python reader, the same errors.
"""
from __future__ import annotations

import importlib
import os
from contextlib import contextmanager

WANTED = os.environ.get("KAFKACODEC_PURE") != "1"
_SWAPS: list[tuple[type, object, object]] = []  # (class, compiled _read, Python _read)


def load(name: str, sha256: str):
    """The compiled module `name` if it is built from the source whose hash is `sha256`."""
    if not WANTED:
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:  # not built: no compiler at install time, or PyPy
        return None
    return module if getattr(module, "SOURCE_SHA256", None) == sha256 else None


def attach(name: str, sha256: str, namespace: dict) -> bool:
    """Give the classes of a generated module (its `namespace`) their compiled readers."""
    module = load(name, sha256)
    if module is None:
        return False
    for cls, fast in module.install(namespace):
        _SWAPS.append((cls, fast, cls.__dict__["_read"]))
        cls._read = fast
    return True


def compiled_types() -> list[str]:
    """The qualified names of the types read by compiled code now."""
    return [cls.__qualname__ for cls, fast, _ in _SWAPS if cls.__dict__["_read"] is fast]


@contextmanager
def pure():
    """The Python readers for the duration, then whichever were in place (not thread-safe: for
    comparing the two)."""
    before = [(cls, cls.__dict__["_read"]) for cls, _, _ in _SWAPS]
    for cls, _, slow in _SWAPS:
        cls._read = slow
    try:
        yield
    finally:
        for cls, reader in before:
            cls._read = reader
