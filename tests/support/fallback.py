"""A compiled module bound to Python readers that fail the test: valid input must then be read by
compiled code alone, with nothing handed back (else a reader that always handed back would pass
every comparison with the Python reader)."""
from contextlib import contextmanager


@contextmanager
def python_readers_refused(fast, namespace: dict, swaps):
    """`fast`: the compiled module of the generated module whose globals are `namespace`;
    `swaps`: (class, compiled reader, Python reader) of its hot types. Each class's `_read` is
    left as it was found."""
    before = [(cls, cls.__dict__["_read"]) for cls, _, _ in swaps]

    def refused(cls, *args):
        raise AssertionError(f"{cls.__qualname__} fell back to the Python reader")
    try:
        for cls, _, _ in swaps:
            cls._read = classmethod(refused)
        fast.install(namespace)  # binds the refusing readers as the ones to hand back to
        for cls, reader, _ in swaps:
            cls._read = reader
        yield
    finally:
        for cls, _, slow in swaps:
            cls._read = slow
        fast.install(namespace)
        for cls, reader in before:
            cls._read = reader
