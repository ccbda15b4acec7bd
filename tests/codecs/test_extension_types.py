"""The compiled backend's hot types are extension types with their Python classes' API: the same
names, values, repr, copies and equality, and pickles that either backend reads back."""
import copy
import os
import pickle
import subprocess
import sys
import weakref

import pytest

from kafkacodec import write_batch
from kafkacodec.codec.kafka_json import jackson, message_json
from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.runtime import compiled
from kafkacodec.runtime.node import is_node

HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class statement's; an extension type is static
SWAPS = [s for s in compiled._SWAPS]
built = pytest.mark.skipif(not SWAPS, reason="the compiled backend is not built")
# what an extension type has and its Python class has not: where its Python class's name and
# module are kept (its own `__module__` and `__qualname__` are its C name's, not in its dict)
OWN = {"_qualname", "_module"}
PURE_ONLY = {"__weakref__", "__module__"}  # weak references it has, without the attribute


def batch_bytes() -> bytes:
    return write_batch([{"key": b"k%d" % i, "value": None if i == 2 else b"v" * i, "timestamp": 1000 + i,
                         "headers": [("h", b"x")] * (i % 3)} for i in range(5)], base_offset=7)


@built
@pytest.mark.parametrize("swap", SWAPS, ids=lambda s: s.pure.__qualname__)
def test_each_hot_type_is_an_extension_type_with_its_classes_names(swap):
    assert not swap.ext.__flags__ & HEAP_TYPE and swap.pure.__flags__ & HEAP_TYPE
    assert set(dir(swap.ext)) - OWN == set(dir(swap.pure)) - PURE_ONLY
    for name in ("_parent_ref",) + swap.pure.__slots__:  # read inline by CPython, as a slot is
        assert type(swap.ext.__dict__[name]).__name__ == "member_descriptor", name
    assert swap.ext.__doc__ == swap.pure.__doc__


@built
def test_the_modules_name_the_extension_types():
    assert type(RecordBatch.read(batch_bytes())[0]) is RecordBatch
    assert RecordBatch.Record is compiled._SWAPS[[s.pure.__qualname__ for s in SWAPS].index("RecordBatch.Record")].ext
    assert LegacyLogEntry.MessageSet.__dict__["_qualname"] == "LegacyLogEntry.MessageSet"


@built
def test_values_repr_copies_and_equality_are_the_python_classes():
    batch = RecordBatch.from_bytes(batch_bytes())
    with compiled.pure():
        same = RecordBatch.from_bytes(batch_bytes())
    assert batch == same and batch.to_dict() == same.to_dict() and repr(batch) == repr(same)
    record = batch.records.items[1]
    assert repr(record).startswith("RecordBatch.Record(") and record.offset == 8
    assert copy.copy(record) == record and copy.deepcopy(batch) == batch
    twin = copy.deepcopy(batch)
    assert twin.records.items[0]._parent._parent is twin
    record.value = b"changed"
    assert record != same.records.items[1] and record.to_bytes() != same.records.items[1].to_bytes()
    with pytest.raises(TypeError, match="unhashable"):
        hash(record)
    with pytest.raises(AttributeError):
        RecordBatch.Record.__new__(RecordBatch.Record).no_such_field = 1


@built
def test_objects_are_freed_without_the_collector():
    batch = RecordBatch.from_bytes(batch_bytes())
    record = batch.records.items[1]
    gone = weakref.ref(batch)
    del batch
    assert gone() is None and record._parent is None and record.headers[0]._parent is record


@pytest.mark.parametrize("backend_env", ["0", "1"])
def test_pickles_read_back_under_either_backend(backend_env):
    """Pickled under this process's backend, unpickled with KAFKACODEC_PURE=0 and 1: the class of
    the backend in use there, the same values."""
    batch = RecordBatch.from_bytes(batch_bytes())
    batch.records  # decoded, so that the pickle holds the records
    program = ("import pickle, sys\n"
               "from kafkacodec.runtime.compiled import compiled_types\n"
               "obj = pickle.loads(sys.stdin.buffer.read())\n"
               "print(type(obj).__module__, bool(compiled_types()), obj.records.items[3].value, "
               "obj.records.items[1].headers[0]._parent is obj.records.items[1], "
               "obj.to_bytes() == obj.from_bytes(obj.to_bytes()).to_bytes())\n")
    env = {**os.environ, "KAFKACODEC_PURE": backend_env}
    done = subprocess.run([sys.executable, "-c", program], input=pickle.dumps(batch), env=env,
                          capture_output=True, check=True)
    module, compiled_there, value, linked, writes = done.stdout.decode().split()
    if backend_env == "1" or SWAPS:  # else: built there or not, as here it may not be
        assert compiled_there == str(backend_env == "0")
    assert module == ("kafkacodec.generated._c_record_batch" if compiled_there == "True" else
                      "kafkacodec.generated.record_batch")
    assert (value, linked, writes) == ("b'vvv'", "True", "True")
    assert pickle.loads(pickle.dumps(batch)) == batch


def test_a_new_object_has_every_field_unset_and_is_a_node():
    """As object.__new__ makes a Python class's: reading a field raises until it is set; and
    either backend's objects are told by is_node (an extension type cannot derive from Node),
    so the Kafka JSON of a hot object is its fields'."""
    blank = RecordBatch.__new__(RecordBatch)
    with pytest.raises(AttributeError, match="base_offset"):
        blank.base_offset
    header = RecordBatch.Header.from_bytes(b"\x02h\x02x")
    assert is_node(header) and not is_node(header.key)
    assert jackson(message_json(header)) == '{"key":"h","value":"eA=="}'


@built
def test_a_special_method_of_an_extension_type_is_refused_not_ignored():
    with pytest.raises(TypeError, match="special method __repr__"):
        compiled.set_type_attr(RecordBatch.Header, "__repr__", lambda self: "patched")
    assert repr(RecordBatch.Header(key="k", value=None)).startswith("RecordBatch.Header(")


def test_a_long_chain_of_objects_is_freed_without_deep_recursion():
    """A million records each holding the next (as a user may build): freeing the head frees
    them all one after another, not by a C recursion a million deep."""
    program = ("from kafkacodec.generated.record_batch import RecordBatch\n"
               "head = tail = RecordBatch.Record()\n"
               "for _ in range(1_000_000):\n"
               "    tail.value = tail = RecordBatch.Record()\n"
               "del head, tail\n"
               "print('freed')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.strip()) == (0, "freed"), done.stderr[-2000:]
