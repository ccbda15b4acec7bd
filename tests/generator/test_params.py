"""Types that take params (Kaitai `params`), as one type per message takes its version: the
reader passes them down, the object keeps them, the writer passes them again (the enclosing
type's value wins), and a type read or written alone says which params it lacks."""
import struct

import pytest

from tests.support import TESTS
from tests.generator.test_generator import load_module
from kafkacodec.generator.compile import compile_dir
from kafkacodec.runtime.errors import EncodeError, UsageError


@pytest.fixture(scope="module")
def V(tmp_path_factory):
    out = tmp_path_factory.mktemp("params")
    (out / "versioned.py").write_text(compile_dir(TESTS / "schemas_params")["versioned.py"])
    return load_module(out / "versioned.py", "versioned_params").Versioned


def thing(version: int, a: int, b: int | None = None, items=()) -> bytes:
    out = struct.pack(">i", a)
    if version >= 1:
        out += struct.pack(">hB", b, len(items))
        for x, y in items:
            out += bytes([x]) + (bytes([y]) if version >= 2 else b"")
    return out


@pytest.mark.parametrize("version", [0, 1, 2])
def test_each_version_reads_its_own_fields_and_writes_the_same_bytes(V, version):
    data = bytes([0, version]) + thing(version, -5, 7, [(1, 2), (3, 4)])
    message = V.from_bytes(data)
    body = message.body
    assert body.version == version and body.a == -5
    assert (body.b, body.items_count) == ((None, None) if version == 0 else (7, 2))
    if version:
        assert [(i.version, i.x, i.y) for i in body.items] == [
            (version, 1, 2 if version >= 2 else None), (version, 3, 4 if version >= 2 else None)]
    assert message.to_bytes() == data and message.size() == len(data)


def test_an_unknown_version_stays_raw(V):
    data = bytes([0, 3]) + b"\x01\x02\x03"
    assert V.from_bytes(data).body == b"\x01\x02\x03"
    assert isinstance(V.from_bytes(bytes([1, 0, 0, 0, 0, 9])).body, V.Other)


def test_the_enclosing_writer_passes_its_version_down(V):
    body = V.Thing(a=1, b=2, items=[V.Item(x=1, y=2)])
    assert body.version is None
    message = V(kind=0, version=2, body=body)
    assert message.size() == 2 + len(thing(2, 1, 2, [(1, 2)]))
    assert body.version is None  # size() leaves the objects as they were
    data = message.to_bytes()
    assert data == bytes([0, 2]) + thing(2, 1, 2, [(1, 2)])
    assert body.version == 2 and body.items[0].version == 2  # written as version 2, kept as such
    # the message's version decides, whatever its body held; version 1 has no y, which must be
    # emptied first: writing it there would drop it
    message.version = 1
    with pytest.raises(EncodeError, match=r"versioned/item/y: holds a value, but version 1 has no such field"):
        message.to_bytes()
    body.items[0].y = None
    assert message.to_bytes() == bytes([0, 1]) + thing(1, 1, 2, [(1, 2)]) and body.version == 1
    assert V.from_bytes(message.to_bytes()) == message


def test_a_type_alone_is_given_its_params(V):
    data = thing(1, 9, 8, [(7, 6)])
    with pytest.raises(UsageError, match=r"Versioned.Thing is read with params: give version=\.\.\."):
        V.Thing.from_bytes(data)
    alone = V.Thing.from_bytes(data, version=1)
    assert (alone.version, alone.b, [i.x for i in alone.items]) == (1, 8, [7])
    assert V.Thing.read(b"\0" + data, 1, version=1)[0] == alone
    assert alone.to_bytes() == data and alone.size() == len(data)
    alone.items, alone.b = None, None
    assert alone.size(version=0) == 4 and alone.to_bytes(version=0) == thing(0, 9)
    assert alone.version == 0  # written at version 0, and kept so
    with pytest.raises(EncodeError, match="versioned/thing/version: param is not set"):
        V.Thing(a=1).to_bytes()
    with pytest.raises(TypeError):
        V.Other.from_bytes(b"\0\0\0\1", level=1)


def test_params_are_part_of_the_value(V):
    a = V.Thing.from_bytes(thing(0, 1), version=0)
    b = V.Thing(version=0, a=1)
    assert a == b and a.to_dict() == {"version": 0, "a": 1, "b": None, "items_count": None, "items": None}
    assert a != V.Thing(version=1, a=1)
    assert "version=0" in repr(a)


def test_a_param_taken_from_a_derived_field_sizes_as_it_writes(V):
    counted = V(kind=2, version=0, body=V.Counted(version=0, cells=[V.Cell(x=1, y=2), V.Cell(x=3, y=4)]))
    assert counted.size() == len(counted.to_bytes()) == 2 + 1 + 4
    counted.body.cells.pop()
    counted.body.cells[0].y = None  # one cell: no y
    assert counted.size() == len(counted.to_bytes()) == 2 + 1 + 1
    assert V.from_bytes(counted.to_bytes()) == counted
