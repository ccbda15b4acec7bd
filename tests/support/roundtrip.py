"""The pure and the compiled backend on the same input: one way for every parity test to run a
computation under a backend and check that the other gives the same value, the same bytes, or
the same error (class, byte position, path and message).

- `using(backend)`: "compiled" is the process as loaded; "pure" swaps the compiled paths back to
  their Python ones for the duration (the generated readers, record views and writers, and the
  columnar kernels; only the iterator of a plain batch's one record stays, see
  compiled_bindings and test_kernels).
- `alike(compute, backend)`: compute()'s outcome under `backend`; under "compiled" the pure
  backend must give the same (or any other `ways` of computing it given).
- `check_table(cls, table, backend)`: parse, check, build back and size a table of `Sample`s of
  a generated class, as construct's tests do with their samples.
- `kernel_alike(pure, compiled, calls, backend)`: a Python function and its compiled twin on the
  same arguments.

tests/codecs/conftest.py's `backend` fixture runs a test once for each backend.
"""
from __future__ import annotations

import importlib
import random
import sys
from contextlib import ExitStack, contextmanager
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any, Callable, NamedTuple

from kafkacodec.runtime import compiled, kernels
from kafkacodec.runtime.errors import KafkaCodecError

BACKENDS = ("pure", "compiled")
# the generated modules with compiled readers, and the top type of each
GENERATED_TWINS = {"kafkacodec.generated.record_batch": "RecordBatch",
                   "kafkacodec.generated.legacy_log_entry": "LegacyLogEntry"}


def missing_compiled() -> list[str]:
    """The compiled modules that are not in use (not built, built from other source, or
    KAFKACODEC_PURE=1): empty when the compiled backend is whole."""
    for name in GENERATED_TWINS:
        importlib.import_module(name)  # a generated module attaches its compiled readers on import
    read_compiled = {name.partition(".")[0] for name in compiled.compiled_types()}
    missing = ["runtime/_kernels.pyx"] if kernels.compiled is None else []
    return missing + [f"generated/_c_{name.rpartition('.')[2]}.pyx" for name, top in GENERATED_TWINS.items()
                      if top not in read_compiled]


@contextmanager
def patched(target, **values):
    """`target`'s attributes set to `values` for the duration, then put back."""
    before = {name: getattr(target, name) for name in values}
    for name, value in values.items():
        setattr(target, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(target, name, value)


@contextmanager
def using(backend: str):
    """Everything read and written under `backend` for the duration (not thread-safe)."""
    if backend == "compiled":
        missing = missing_compiled()
        assert not missing, f"the compiled backend is not whole: {', '.join(missing)} not in use"
        yield
        return
    assert backend == "pure", backend
    with ExitStack() as stack:
        stack.enter_context(compiled.pure())
        stack.enter_context(patched(kernels, compiled=None))
        yield


def compiled_bindings() -> list[str]:
    """Where a loaded kafkacodec module, or a class of one, holds a function of a compiled module
    of the package now: under using("pure") nothing should, or the pure backend is not all Python."""
    built = {name for name, module in list(sys.modules.items()) if name.startswith("kafkacodec.")
             and (getattr(module, "__file__", None) or "").endswith(tuple(EXTENSION_SUFFIXES))}
    found = []
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("kafkacodec.") and module_name not in built:
            found += _held(module_name, vars(module), module_name, built)
    return sorted(found)


def _held(where: str, namespace: dict, module_name: str, built: set) -> list[str]:
    """compiled_bindings() in one namespace, and in the classes (nested ones too) it defines."""
    found = []
    for name, value in list(namespace.items()):
        if isinstance(value, type):
            if value.__module__ == module_name and value.__qualname__.endswith(name):
                found += _held(f"{where}.{name}", vars(value), module_name, built)
            continue
        function = getattr(value, "__func__", value)  # a classmethod's or staticmethod's function
        if callable(function) and getattr(function, "__module__", None) in built:
            found.append(f"{where}.{name}")
    return found


class Raised(NamedTuple):
    """An error as the backends must agree on it."""
    kind: str
    position: int | None
    path: str | None
    message: str

    @classmethod
    def of(cls, err: BaseException) -> "Raised":
        return cls(type(err).__name__, getattr(err, "position", None), getattr(err, "path", None), str(err))


def outcome(compute: Callable[[], Any], errors=KafkaCodecError):
    """compute()'s value, or the error of class `errors` it raised as a Raised (any other error
    goes on: the test fails)."""
    try:
        return compute()
    except errors as err:
        return Raised.of(err)


def _agree(backend: str, way: str, found, other, same, case) -> None:
    where = f"{backend} and {way} disagree" + ("" if case is None else f" on {case!r}")
    if same is None or isinstance(found, Raised) or isinstance(other, Raised):
        assert found == other, where
    else:
        assert same(found, other), f"{where}: {found!r} != {other!r}"


def alike(compute: Callable[[], Any], backend: str, *, ways: dict | None = None, errors=KafkaCodecError,
          same: Callable[[Any, Any], bool] | None = None, case=None):
    """compute()'s outcome (see `outcome`) under `backend`, after checking that each of `ways`
    (name: a function giving a context manager, entered under `backend`) gives the same. By
    default the compiled backend is checked against the pure one, and the pure one against
    nothing else. `same`: how two values are compared (== by default); `case`: what the input
    was, for the message of a failure."""
    if ways is None:
        ways = {"pure": lambda: using("pure")} if backend == "compiled" else {}
    with using(backend):
        found = outcome(compute, errors)
        for way, enter in ways.items():
            with enter():
                other = outcome(compute, errors)
            _agree(backend, way, found, other, same, case)
    return found


class Sample(NamedTuple):
    """One row of a table for check_table: bytes and what parsing them must give. `value`: the
    parsed object's to_dict(); `fields`: paths (attributes, indexes, `name()` for a method
    without arguments, dotted) and what they hold, for what to_dict() does not show; `error`:
    the class and byte position of the error parsing must raise instead; `built`: a function
    making from scratch the object that must write `data` and equal what is parsed from it."""
    name: str
    data: bytes
    value: dict | None = None
    fields: dict = {}
    error: tuple[type, int | None] | None = None
    built: Callable[[], Any] | None = None


def resolve(obj, path: str):
    """What `path` (see Sample.fields) holds in `obj`."""
    for part in path.split("."):
        if part.endswith("()"):
            obj = getattr(obj, part[:-2])()
        elif part.lstrip("-").isdigit():
            obj = obj[int(part)]
        else:
            obj = getattr(obj, part)
    return obj


def parsed(cls, sample: Sample) -> dict:
    """What parsing `sample.data` as `cls` gives, in the form compared between backends."""
    obj = cls.from_bytes(sample.data)
    return {"value": obj.to_dict(), "fields": {path: resolve(obj, path) for path in sample.fields},
            "bytes": obj.to_bytes(), "size": obj.size()}


def check_table(cls, table: list[Sample], backend: str) -> None:
    """Each sample of `table` parsed as `cls` under `backend` (from_bytes), checked (value and
    fields, or the error's class and position), built back (to_bytes gives the same bytes),
    sized (size() is their length) and, under "compiled", given alike by the pure backend; a
    sample's object built from scratch writes the same bytes and reads back as parsed."""
    for sample in table:
        got = alike(lambda: parsed(cls, sample), backend, case=sample.name)
        if sample.error is not None:
            kind, position = sample.error
            assert isinstance(got, Raised) and (got.kind, got.position) == (kind.__name__, position), \
                f"{sample.name}: expected {kind.__name__} at byte {position}, got {got!r}"
            continue
        assert not isinstance(got, Raised), f"{sample.name}: {got!r}"
        if sample.value is not None:
            assert got["value"] == sample.value, sample.name
        assert got["fields"] == sample.fields, sample.name
        assert got["bytes"] == sample.data, f"{sample.name}: built back otherwise"
        assert got["size"] == len(sample.data), f"{sample.name}: size() is not the length"
        if sample.built is not None:
            with using(backend):
                obj = sample.built()
                assert obj.to_bytes() == sample.data, f"{sample.name}: built from scratch otherwise"
                assert obj == cls.from_bytes(sample.data), f"{sample.name}: built from scratch, read otherwise"
            # what writing computes (lengths, counts, checksums) is set on the object as it is read
            assert scalars(obj.to_dict()) == scalars(got["value"]), f"{sample.name}: written otherwise"


def scalars(value: dict) -> dict:
    """The top level of a to_dict(): a record built on its own has no batch to take its offset
    and timestamp from, as a record read in one has."""
    return {name: v for name, v in value.items() if not isinstance(v, (dict, list))}


def kernel_alike(pure: Callable, fast: Callable | None, calls, backend: str, *, errors=Exception,
                 same: Callable[[Any, Any], bool] | None = None) -> list:
    """A Python function and its compiled twin (`fast`, used only under "compiled") called with
    the same arguments: `calls` are (name, args) or (name, args, expected), where expected is
    what `pure` must give. Under "pure", `pure` alone (and its expected values); under
    "compiled", `fast` must give the same value or the same error (class, message, position)
    as `pure`. The outcomes under `backend`, in order."""
    out = []
    for name, args, *expected in calls:
        with using("pure"):
            found = outcome(lambda: pure(*args), errors)
        if expected:
            assert found == expected[0], name
        if backend == "compiled":
            with using("compiled"):
                other = outcome(lambda: fast(*args), errors)
            _agree("the compiled kernel", "its Python twin", other, found, same, name)
            found = other
        out.append(found)
    return out


def odd_value(rng: random.Random, depth: int = 0):
    """A value of any kind a field may be handed: numbers at and past every width's bounds,
    bytes and bytes-likes, text beyond ASCII, tuples and lists of such (items of a repeat)."""
    kinds = [None, True, 1.5, 0, -1, 127, 128, -129, 255, 1 << 31, -(1 << 31) - 1, (1 << 32), (1 << 63) - 1, 1 << 63,
             -(1 << 63) - 1, b"", b"k", rng.randbytes(rng.randrange(300)), bytearray(b"x"), memoryview(b"y"), "h",
             "héllo", "\udcff", "\ud800"]
    if depth < 2:
        kinds += [[odd_value(rng, depth + 1) for _ in range(rng.randrange(3))],
                  tuple(odd_value(rng, depth + 1) for _ in range(rng.randrange(4)))]
    return rng.choice(kinds)


def packed(pack, args) -> tuple:
    """What `pack` leaves in a bytearray that held bytes already, or the error it raised."""
    out = bytearray(b"before")
    try:
        pack(out, *args)
    except Exception as e:  # noqa: BLE001: each error is compared, class and message
        return type(e).__name__, str(e), bytes(out)
    return "written", bytes(out)
