"""The one loader of compiled modules, and the compiled readers and writers it gives generated
classes.

Two kinds of compiled module are loaded, each only when built from the source its Python side
expects (a build of other source, say an old one in a checkout, is not used) and never with
KAFKACODEC_PURE=1 in the environment:

- the hand-written kernels (runtime/_kernels.pyx, see runtime/kernels.py),
  current when their SOURCE_SHA256 is the hash of the .pyx beside them; with no .pyx beside (an
  installed wheel, built with the package) any build is current;
- the readers generated from the schemas (generated/_c_<schema>.pyx), current when their
  SOURCE_SHA256 is the hash the generated module names. Each type the schema marks `-hot` is
  then an extension type in place of its Python class, with the class's API (its methods, its
  field names, pickles either backend reads), and a compiled reader that gives the same values
  and, by handing bad input back to the Python reader, the same errors; where the module
  writes its fields, a compiled `_pack` that does the same with the Python writer.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, NamedTuple

from .node import type_name

WANTED = os.environ.get("KAFKACODEC_PURE") != "1"


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


class Swap(NamedTuple):
    """A hot class of a generated module, and the extension type in its place."""
    pure: type
    ext: type
    compiled: object  # the compiled reader (a classmethod)
    python: object  # the Python reader (the class's `_read`)
    set_attr: Callable[[type, str, object], None]  # setattr refuses a static type's

    def use(self, reader) -> None:
        self.set_attr(self.ext, "_read", reader)


_SWAPS: list[Swap] = []  # the hot types of every generated module attached


class Attribute(NamedTuple):
    """What a compiled module gives an extension type besides its reader (a writer, a columnar
    reader or writer), and what the type had without it."""
    ext: type
    name: str
    compiled: object
    python: object
    set_attr: Callable[[type, str, object], None]  # setattr refuses a static type's


_ATTRIBUTES: list[Attribute] = []
_PACKERS: dict[type, object] = {}  # extension type -> the capsule of its C writer


def packer(cls: type):
    """The capsule of the compiled C writer of `cls` (named by its C signature), or None."""
    return _PACKERS.get(cls)


def attach(name: str, sha256: str, namespace: dict) -> bool:
    """Put the extension types of the compiled module `name` in place of the hot classes of the
    generated module whose globals are `namespace`."""
    module = load(name, sha256)
    if module is None:
        return False
    _SWAPS.extend(install(module, namespace))
    return True


def _swap_facts(cls: type, types: dict) -> None:
    """The generated facts naming classes (each field's type, each switch's cases) name the
    extension types in place of the Python classes they stand for."""
    def swapped(kind):
        return [swapped(kind[0])] if isinstance(kind, list) else types.get(kind, kind)
    for name in ("_field_types", "_switch_cases"):
        facts = cls.__dict__.get(name)
        if facts is None:
            continue
        if name == "_field_types":
            facts.update({field: swapped(kind) for field, kind in facts.items()})
        else:
            for cases in facts.values():
                cases.update({key: swapped(kind) for key, kind in cases.items()})


def install(module, namespace: dict) -> list[Swap]:
    """Put the extension types of the compiled `module` in place of the hot classes, wherever
    the generated module (its globals, `namespace`) names them, each reading with its compiled
    reader."""
    swaps = [Swap(pure, ext, fast, pure.__dict__["_read"], module.set_attr)
             for pure, ext, fast in module.install(namespace)]
    types = {s.pure: s.ext for s in swaps}
    for key, value in list(namespace.items()):
        if not isinstance(value, type):
            continue
        if value in types:
            namespace[key] = types[value]
        elif value not in types.values():  # a class left in Python: its nested classes
            for attr, inner in list(vars(value).items()):
                if isinstance(inner, type) and inner in types:
                    setattr(value, attr, types[inner])
    for cls in {*types.values(), *(v for v in namespace.values() if isinstance(v, type))}:
        _swap_facts(cls, types)
    namespace["_new"] = module.new  # the Python readers make extension types too
    for swap in swaps:
        swap.use(swap.compiled)
    _PACKERS.update(module.PACKERS)
    for ext, name, value in module.compiled_attributes():
        _ATTRIBUTES.append(Attribute(ext, name, value, ext.__dict__.get(name), module.set_attr))
        module.set_attr(ext, name, value)
    return swaps


def set_type_attr(cls: type, name: str, value) -> None:
    """setattr, also for the extension types in place of hot classes (static types, whose
    attributes setattr refuses to set): to patch a method in a test, say. An extension type's
    special methods are fixed in C when it is made: setting one is refused (TypeError) rather
    than left without effect."""
    swap = next((s for s in _SWAPS if s.ext is cls), None)
    if swap is None:
        setattr(cls, name, value)
    elif name.startswith("__") and name.endswith("__"):
        raise TypeError(f"{type_name(cls)} is an extension type: its special method {name} cannot be replaced")
    else:
        swap.set_attr(cls, name, value)


def compiled_types() -> list[str]:
    """The qualified names of the types read by compiled code now."""
    return [type_name(s.ext) for s in _SWAPS if s.ext.__dict__["_read"] is s.compiled]


@contextmanager
def pure():
    """The Python readers and writers for the duration, then whichever were in place (not
    thread-safe: for comparing the two). The objects stay of the same types."""
    before = [(s, s.ext.__dict__["_read"]) for s in _SWAPS]
    attributes = [(a, a.ext.__dict__[a.name]) for a in _ATTRIBUTES]
    for s in _SWAPS:
        s.use(s.python)
    for a, _ in attributes:
        a.set_attr(a.ext, a.name, a.python)
    try:
        yield
    finally:
        for s, reader in before:
            s.use(reader)
        for a, value in attributes:
            a.set_attr(a.ext, a.name, value)
