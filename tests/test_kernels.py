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


def arrays_both_ways(monkeypatch, buffer, starts, sizes, kind=None):
    from kafkacodec.storage.columnar import binary_array
    fast = binary_array(buffer, starts, sizes, kind)
    monkeypatch.setattr(kernels, "compiled", None)
    slow = binary_array(buffer, starts, sizes, kind)
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
    fast, slow = arrays_both_ways(monkeypatch, pa.py_buffer(data), starts, sizes)
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
    probe = "from kafkacodec.runtime import kernels; print(kernels.compiled is None)"
    env = dict(os.environ, KAFKACODEC_PURE="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_module_built_from_other_source_is_not_used():
    stale = types.SimpleNamespace(SOURCE_SHA256="0" * 64)
    assert not kernels._current(stale)
    if kernels.compiled is not None:
        assert kernels._current(kernels.compiled)


@pytest.mark.skipif(os.environ.get("KAFKACODEC_EXPECT_COMPILED") != "1", reason="make test sets it")
def test_make_test_runs_with_the_compiled_kernels():
    assert kernels.compiled is not None, "make install did not build runtime/_kernels.pyx"
