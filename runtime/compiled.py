"""The one loader of compiled modules, and the compiled readers it gives generated classes.

Two kinds of compiled module are loaded, each only when built from the source its Python side
expects (a build of other source, say an old one in a checkout, is not used) and never with
KAFKACODEC_PURE=1 in the environment:

- the hand-written kernels (runtime/_kernels.pyx, runtime/_facade.pyx, see runtime/kernels.py),
  current when their SOURCE_SHA256 is the hash of the .pyx beside them; with no .pyx beside (an
  installed wheel, built with the package) any build is current;
- the readers generated from the schemas (generated/_c_<schema>.pyx), current when their
  SOURCE_SHA256 is the hash the generated module names. A compiled reader replaces the `_read` of
  a type the schema marks `-hot`; it gives the same objects and, by handing bad input back to the
  Python reader, the same errors.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from contextlib import contextmanager
from pathlib import Path

WANTED = os.environ.get("KAFKACODEC_PURE") != "1"
_SWAPS: list[tuple[type, object, object]] = []  # (class, compiled _read, Python _read)


def load(name: str, sha256: str | None):
    """The compiled module `name` if it is built from the source whose hash is `sha256`, or from
    any source when `sha256` is None (there is none to compare with); else None."""
    if not WANTED:
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:  # not built: no compiler at install time, or PyPy
        return None
    if sha256 is None or getattr(module, "SOURCE_SHA256", None) == sha256:
        return module
    return None


def sha256_beside(name: str) -> str | None:
    """The hash of the .pyx beside the compiled module `name`, which it is built from; None when
    there is no such .pyx (an installed wheel) or no such module."""
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # its package is missing
        return None
    if spec is None or not spec.origin:
        return None
    source = Path(spec.origin).with_name(name.rpartition(".")[2] + ".pyx")
    return hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else None


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
