"""A compiled module bound to Python readers that fail the test: valid input must then be read by
compiled code alone, with nothing handed back (else a reader that always handed back would pass
every comparison with the Python reader)."""
from contextlib import contextmanager


@contextmanager
def python_readers_refused(fast, swaps):
    """`fast`: a compiled module; `swaps`: the runtime.compiled.Swap of its hot types. Each reads
    with its compiled reader for the duration, then as it was found."""
    before = [(s, s.ext.__dict__["_read"]) for s in swaps]

    def refused(cls, *args):
        raise AssertionError(f"{cls.__qualname__} fell back to the Python reader")
    try:
        for s in swaps:
            s.pure._read = classmethod(refused)
            s.use(s.compiled)
        fast.bind_python_readers()
        yield
    finally:
        for s, reader in before:
            s.pure._read = s.python
            s.use(reader)
        fast.bind_python_readers()
