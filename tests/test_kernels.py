"""The compiled kernels against their pure equivalents on the same inputs, and how the runtime
chooses between them."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

from kafkacodec.runtime import kernels

pa = pytest.importorskip("pyarrow")
compiled = pytest.mark.skipif(kernels.compiled is None, reason="the compiled kernels are not built")


def both_ways(monkeypatch, compute):
    """compute() with the compiled kernels, then with the pure paths: (fast, slow)."""
    fast = compute()
    monkeypatch.setattr(kernels, "compiled", None)
    slow = compute()
    monkeypatch.undo()
    return fast, slow


@compiled
@pytest.mark.parametrize("seed", range(20))
def test_gathered_slices_equal_arrows_own(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, 5000, dtype=np.uint8).tobytes()
    n = int(rng.integers(0, 300))
    cuts = np.sort(rng.integers(0, len(data), 2 * n))
    starts, ends = cuts[0::2], cuts[1::2]
    sizes = np.where(rng.random(n) < 0.2, -1, ends - starts)  # a fifth absent
    from kafkacodec.storage.columnar import binary_array
    fast, slow = both_ways(monkeypatch, lambda: binary_array(pa.py_buffer(data), starts, sizes))
    assert fast.equals(slow) and fast.null_count == int((sizes < 0).sum())
    assert fast.to_pylist() == [None if s < 0 else data[a:a + s] for a, s in zip(starts, sizes)]


@compiled
def test_gather_refuses_slices_outside_the_buffer():
    src = np.frombuffer(b"abcdef", np.uint8)
    for start, size in ((4, 3), (-1, 2), (7, 1)):
        with pytest.raises(ValueError, match="outside a buffer of 6 bytes"):
            kernels.compiled.gather(src, np.array([start], np.int64), np.array([size], np.int64), False,
                                    pa.allocate_buffer)


def test_pure_mode_is_chosen_by_the_environment():
    probe = "from kafkacodec.runtime import kernels; print(kernels.compiled, kernels.facade)"
    env = dict(os.environ, KAFKACODEC_PURE="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None None"


@pytest.mark.parametrize("name", ["_kernels", "_facade"])
def test_a_module_built_from_other_source_is_not_used(name):
    stale = types.SimpleNamespace(__name__=f"kafkacodec.runtime.{name}", SOURCE_SHA256="0" * 64)
    assert not kernels._current(stale)
    for module in (kernels.compiled, kernels.facade):
        if module is not None:
            assert kernels._current(module)


@pytest.mark.skipif(os.environ.get("KAFKACODEC_EXPECT_COMPILED") != "1", reason="make test sets it")
def test_make_test_runs_with_the_compiled_kernels():
    assert kernels.compiled is not None, "make install did not build runtime/_kernels.pyx"
    assert kernels.facade is not None, "make install did not build runtime/_facade.pyx"


def columns_or_error(seg, positions):
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.columnar import read_columns
    try:
        c = read_columns(seg, positions, verify=False)
    except KafkaCodecError as err:
        return type(err).__name__, err.position, str(err)
    return ([c.offset.tolist(), c.timestamp.tolist(), c.arrow_bytes("key").to_pylist(),
             c.arrow_bytes("value").to_pylist(), c.arrow_headers().to_pylist()])


@compiled
@pytest.mark.parametrize("seed", range(40))
def test_record_starts_equal_the_vectorised_ones_on_valid_and_damaged_batches(monkeypatch, seed):
    import random
    from kafkacodec import write_batch
    rng = random.Random(seed)
    batches, base = [], 0
    for _ in range(rng.randrange(1, 30)):
        n = rng.randrange(1, 40)
        records = [{"key": None if rng.random() < 0.2 else bytes(rng.randrange(50)),
                    "value": None if rng.random() < 0.1 else bytes(rng.randrange(300)), "timestamp": 10 + i,
                    "headers": [("h%d" % j, bytes(rng.randrange(20))) for j in range(rng.randrange(3))]}
                   for i in range(n)]
        batches.append(write_batch(records, base_offset=base))
        base += n
    seg = bytearray(b"".join(batches))
    positions = [sum(map(len, batches[:i])) for i in range(len(batches))]
    fast, slow = both_ways(monkeypatch, lambda: columns_or_error(bytes(seg), positions))
    assert fast == slow and isinstance(fast, list) and len(fast[0]) == base
    for _ in range(20):  # damage in the records (the headers' counts and sizes are read before)
        at = rng.choice(positions) + 61 + rng.randrange(200)
        if at < len(seg):
            damaged = bytearray(seg)
            damaged[at] = rng.choice([0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            fast, slow = both_ways(monkeypatch, lambda: columns_or_error(bytes(damaged), positions))
            assert fast == slow, at


@compiled
@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("max_bytes,zigzag", [(5, True), (5, False), (10, True)])
def test_varints_equal_the_vectorised_ones(monkeypatch, seed, max_bytes, zigzag):
    from kafkacodec.runtime import vectors
    from kafkacodec.runtime.errors import KafkaCodecError
    rng = np.random.default_rng(seed)
    high = rng.random(400) < rng.random()  # from none to most bytes continuing: varints of any length
    u8 = np.where(high, rng.integers(0x80, 256, 400), rng.integers(0, 0x80, 400)).astype(np.uint8)
    pos = np.sort(rng.integers(0, 400, int(rng.integers(1, 60)))).astype(np.int32)
    end = 400 if seed % 2 else np.minimum(pos + rng.integers(0, 12, pos.size), 400)

    def read():
        try:
            values, after = vectors.varints(u8, pos, end, max_bytes, zigzag, "x")
            return values.tolist(), after.tolist(), str(values.dtype), str(after.dtype)
        except KafkaCodecError as err:
            return type(err).__name__, err.position, str(err)
    fast, slow = both_ways(monkeypatch, read)
    assert fast == slow
