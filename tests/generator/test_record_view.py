"""The record view (-record) of a format with nothing of Kafka in it (tests/schemas_hot/
toy_record.ksy), built with Cython here: the compiled and the Python `_record_run` give the same
records, holders and positions on the same bytes, valid and mutated, with CRCs checked or not."""
import random
import zlib
from dataclasses import dataclass, field

import pytest

from tests.support import TESTS
from tests.support.toy_build import build
from kafkacodec.runtime.compiled import install as install_compiled

pytest.importorskip("Cython")
pytestmark = pytest.mark.compiles


@dataclass(slots=True)
class Row:
    kind: int = 0
    number: int = 0
    body: bytes | None = None
    tail: bytes | None = None
    notes: list = field(default_factory=list)


class Held:
    __slots__ = ("at", "length", "row", "source", "checked", "nothing")


HOLDER = (Held, (("at", "start"), ("length", "size"), ("row", "record"), ("source", "buffer"),
                 ("checked", "verify"), ("nothing", None)), Row)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(the Python _record_run, the compiled one, the compiled _held_iter)."""
    module, fast = build(tmp_path_factory.mktemp("toy_record"), TESTS / "schemas_hot" / "toy_record.ksy")
    python_run = module.ToyRecord._record_run
    install_compiled(fast, vars(module))
    assert module.ToyRecord._record_run is not python_run
    return python_run, module.ToyRecord._record_run, module.ToyRecord._held_iter


def instance(rng: random.Random, kind=None, body=None) -> bytes:
    """One instance: a head (its CRC-32 from its kind on) and a tail, each of odd sizes."""
    body = rng.randbytes(rng.randrange(12)) if body is None else body
    has_extra = rng.random() < 0.5
    head = bytes([rng.choice([0, 1, 7]) if kind is None else kind, int(has_extra)])
    head += rng.randrange(-(1 << 31), 1 << 31).to_bytes(4, "big", signed=True) if has_extra else b""
    head += len(body).to_bytes(2, "big") + body
    head = zlib.crc32(head).to_bytes(4, "big") + head
    tail = None if rng.random() < 0.3 else rng.randbytes(rng.randrange(6))
    size = (len(tail) if tail is not None else -1).to_bytes(1, "big", signed=True)
    return len(head).to_bytes(2, "big") + head + size + (tail or b"")


def plain(outcome, buf):
    """A run's outcome as values: records, and holders' slots."""
    if isinstance(outcome, BaseException):
        return type(outcome).__name__, str(outcome)
    out, pos = outcome
    return [(o.at, o.length, o.row, o.source is buf, o.checked, o.nothing) if isinstance(o, Held) else o
            for o in out], pos


def both(toy, buf, *args):
    """The Python and the compiled _record_run on the same arguments, as values."""
    got = []
    for run in toy[:2]:
        try:
            got.append(plain(run(buf, *args), buf))
        except (ValueError, TypeError, OverflowError) as err:
            got.append(plain(err, buf))
    return got


@pytest.mark.parametrize("seed", range(12))
def test_the_backends_read_runs_alike_valid_and_mutated(toy, seed):
    rng = random.Random(seed)
    buf = b"".join(instance(rng, kind=rng.choice([0, 1])) for _ in range(rng.randrange(1, 8)))
    for into in (Row, HOLDER):
        python, compiled = both(toy, buf, 0, len(buf), True, 100, into, rng.randrange(-9, 9), 100)
        assert python == compiled and python[1] == len(buf) and python[0]
    for _ in range(150):
        bad = bytearray(buf + instance(rng))
        at = rng.randrange(len(bad))
        if rng.random() < 0.75:
            bad[at] = rng.choice([0x00, 0x01, 0x07, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        else:
            del bad[at:]
        args = (rng.randrange(3), len(bad), rng.random() < 0.5, rng.randrange(1, 9), rng.choice([Row, HOLDER]),
                rng.randrange(-(1 << 31), 1 << 31), rng.randrange(12))
        python, compiled = both(toy, bytes(bad), *args)
        assert python == compiled, args


def test_a_run_stops_where_the_view_does_not_take_an_instance(toy):
    """At its `when` (a kind it skips, a body over the limit), at a checksum that does not match
    when verifying, at the count asked for; bounds out of the buffer are refused."""
    rng = random.Random(3)
    first, skipped = instance(rng, kind=1, body=b"abc"), instance(rng, kind=7)
    buf = first + skipped + first
    wrong_crc = first.replace(b"abc", b"abd")
    for data, args, stop in ((buf, (True, 9, Row, 0, 100), len(first)),  # kind 7 is skipped
                             (buf, (True, 1, Row, 0, 100), len(first)),  # one asked for
                             (buf, (True, 9, Row, 0, 2), 0),  # a body of 3 bytes, over the limit
                             (wrong_crc + first, (True, 9, Row, 0, 100), 0),
                             (wrong_crc + first, (False, 9, Row, 0, 100), 2 * len(first))):
        python, compiled = both(toy, data, 0, len(data), *args)
        assert python == compiled and python[1] == stop and len(python[0]) == (stop > 0) + (stop > len(first))
    for start, end in ((-1, 3), (0, len(buf) + 1), (5, 4)):
        python, compiled = both(toy, buf, start, end, True, 9, Row, 0, 100)
        assert python == compiled and python[0] == "ValueError"


def test_records_hold_what_the_view_says(toy):
    rng = random.Random(5)
    buf = instance(rng, kind=1)
    (rows, pos), _ = both(toy, buf, 0, len(buf), True, 9, Row, 4, 100)
    (row,) = rows
    has_extra = buf[2 + 4 + 1]
    extra = int.from_bytes(buf[2 + 4 + 2:2 + 4 + 6], "big", signed=True) if has_extra else None
    assert row.kind == 1 and row.number == (extra + 4 if has_extra else -1) and row.notes == []
    python_rows, compiled_rows = (toy[i](buf, 0, len(buf), True, 9, Row, 0, 100)[0] for i in (0, 1))
    assert python_rows[0].notes is not compiled_rows[0].notes  # each a new list


def test_the_held_iterator_gives_a_holders_record(toy):
    rng = random.Random(9)
    buf = instance(rng, kind=0)
    held = toy[1](buf, 0, len(buf), False, 9, HOLDER, 0, 100)[0][0]
    assert list(toy[2](held)) == [held.row]
    with pytest.raises(TypeError):
        toy[2](Row())
