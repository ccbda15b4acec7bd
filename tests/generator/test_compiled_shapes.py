"""Every field shape the compiled backend reads (tests/schemas_hot/toy_hot.ksy, nothing of Kafka in
it), built with Cython here and compared with the Python reader on the same bytes, valid and
mutated: same values, same errors."""
import random

import pytest

from tests.support import TESTS
from tests.support.fallback import python_readers_refused
from tests.support.toy_build import build
from kafkacodec.runtime.compiled import install as install_compiled
from kafkacodec.runtime.errors import KafkaCodecError

pytest.importorskip("Cython")
pytestmark = pytest.mark.compiles


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """(the Python module, the swaps of its hot types, the compiled module)."""
    module, fast = build(tmp_path_factory.mktemp("toy_hot"), TESTS / "schemas_hot" / "toy_hot.ksy",
                         ("varint.ksy", "uvarint.ksy"))
    swaps = install_compiled(fast, vars(module))
    assert len(swaps) == 5  # the root, box, item, entry and rest
    return module, swaps, fast


def read_with(toy, compiled: bool, data: bytes):
    module, swaps, _ = toy
    for s in swaps:
        s.use(s.compiled if compiled else s.python)
    try:
        obj = module.ToyHot.from_bytes(data, verify=False)
        return obj.to_dict(), obj.crc_valid, obj.blob, obj.to_bytes()
    except KafkaCodecError as err:
        return type(err).__name__, err.position, err.path, str(err)
    finally:
        for s in swaps:
            s.use(s.python)


def sample(module, rng: random.Random) -> bytes:
    T = module.ToyHot
    items = [T.Item(delta=rng.randrange(-300, 300),
                    data=None if rng.random() < 0.3 else rng.randbytes(rng.randrange(9)))
             for _ in range(rng.randrange(4))]
    entries = [T.Entry(delta=rng.randrange(-(1 << 31), 1 << 31), name="n\u00e9%d" % i) for i in range(rng.randrange(4))]
    version = rng.choice([1, 2])
    obj = T(tag=rng.randrange(1 << 64), flags=rng.randrange(-5, 5001), version=version,
            stamp=rng.randrange(-(1 << 31), 1 << 31) if version == 2 else None, label="lbl" * rng.randrange(3),
            note=T.Plain(text=rng.randbytes(rng.randrange(5))), box=T.Box(entries=items), items=entries,
            blob=None if rng.random() < 0.3 else rng.randbytes(rng.randrange(20)),
            rest=T.Rest(tail=rng.randbytes(rng.randrange(6))))
    return obj.to_bytes()


@pytest.mark.parametrize("seed", range(30))
def test_every_shape_reads_alike_valid_and_mutated(toy, seed):
    rng = random.Random(seed)
    data = sample(toy[0], rng)
    fast, slow = read_with(toy, True, data), read_with(toy, False, data)
    assert fast == slow and isinstance(fast[0], dict)
    for _ in range(60):
        damaged = bytearray(data)
        at = rng.randrange(len(damaged))
        if rng.random() < 0.75:
            damaged[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        else:
            del damaged[at:]
        assert read_with(toy, True, bytes(damaged)) == read_with(toy, False, bytes(damaged)), at


def test_valid_input_is_read_by_compiled_code_alone(toy):
    module, swaps, fast = toy
    rng = random.Random(7)
    with python_readers_refused(fast, swaps):
        for _ in range(20):
            data = sample(module, rng)
            obj = module.ToyHot.from_bytes(data)
            # the generated classes, their parents linked as the Python reader links them
            assert type(obj) is module.ToyHot and obj.box._parent is obj and obj.rest._parent is obj
            assert all(i._parent is obj.box and i.at == obj.flags + i.delta for i in obj.box.entries)
            assert all(e._parent is obj and e.at == obj.flags + e.delta for e in obj.items)
            assert obj.to_bytes() == data
        with pytest.raises(AssertionError, match="fell back"):  # and damaged input is handed back
            module.ToyHot.from_bytes(data[:-1] if data[-1:] else data + b"x")


def test_the_compiled_writers_write_or_raise_as_the_python_ones(toy):
    """The types whose fields compiled code writes (varints, bytes and text sized by derived
    lengths, absent ones): `_pack` against the Python class's on values of every kind, as
    tests/codecs/test_encode_kernels.py does for Kafka's."""
    from tests.support.roundtrip import odd_value, packed
    module, _, fast = toy
    types = {ext: ext._qualname for ext in fast.PACKERS}
    assert sorted(types.values()) == ["ToyHot.Entry", "ToyHot.Item"]
    rng = random.Random(11)
    for ext, name in types.items():
        python = getattr(module, name.replace(".", "_")).__dict__["_pack"].__func__
        for _ in range(2000):
            args = tuple(odd_value(rng) for _ in range(2))
            assert packed(ext._pack, args) == packed(python, args), args
