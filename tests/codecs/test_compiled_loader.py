"""The one loader of compiled modules (runtime/compiled.py) refuses a build of other source, for
both kinds: a hand-written kernel whose .pyx beside it has another hash than the one built in, and
a generated reader whose build has another hash than the one its generated module names."""
import hashlib
import importlib
import os
import re
import subprocess
import sys

import pytest

from tests.support import ROOT

from kafkacodec.runtime import compiled, kernels

HAND_WRITTEN = [("runtime", "_kernels")]
GENERATED = ["record_batch", "legacy_log_entry"]


def built(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built")


def named_hash(schema: str) -> str:
    """The hash the generated module of `schema` names for its compiled twin."""
    text = (ROOT / "generated" / f"{schema}.py").read_text()
    return re.search(rf'_attach_compiled\("kafkacodec\.generated\._c_{schema}", "([0-9a-f]{{64}})"', text)[1]


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package of stand-ins for compiled modules (the loader asks only for SOURCE_SHA256), and a
    function writing one: (its dotted name, the hash built in, the .pyx beside it or None)."""
    name = f"standin_{tmp_path.name}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(compiled, "WANTED", True)  # whatever KAFKACODEC_PURE says: these are not compiled
    count = iter(range(1000))

    def write(built_in: str, pyx: bytes | None) -> str:
        stem = f"_mod{next(count)}"
        (tmp_path / name / f"{stem}.py").write_text(f'SOURCE_SHA256 = "{built_in}"\n')
        if pyx is not None:
            (tmp_path / name / f"{stem}.pyx").write_bytes(pyx)
        importlib.invalidate_caches()
        return f"{name}.{stem}"

    yield write
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_hand_written_module_is_current_only_when_the_pyx_beside_it_has_its_hash(package):
    source = b"def f():\n    return 1\n"
    current = package(digest(source), source)
    assert compiled.load(current, compiled.sha256_beside(current)).SOURCE_SHA256 == digest(source)
    edited = package(digest(source), source + b"# an edit not yet built\n")
    assert compiled.load(edited, compiled.sha256_beside(edited)) is None


def test_a_hand_written_module_with_no_pyx_beside_it_is_an_installed_build_and_current(package):
    wheel = package(digest(b"whatever it was built from"), None)
    assert compiled.sha256_beside(wheel) is None
    assert compiled.load(wheel, compiled.sha256_beside(wheel)) is not None


def test_a_generated_module_is_current_only_when_its_build_has_the_hash_it_names(package):
    named = digest(b"the .pyx the generator wrote")
    assert compiled.load(package(named, None), named) is not None
    assert compiled.load(package(digest(b"an older .pyx"), None), named) is None
    assert compiled.load(f"{package(named, None)}_not_built", named) is None


def test_pure_mode_loads_neither_kind(package, monkeypatch):
    source = b"x = 1\n"
    current = package(digest(source), source)
    monkeypatch.setattr(compiled, "WANTED", False)
    assert compiled.load(current, compiled.sha256_beside(current)) is None
    assert compiled.load(current, digest(source)) is None


@pytest.mark.parametrize("folder, stem", HAND_WRITTEN)
def test_the_built_kernels_are_refused_with_another_hash_and_used_with_their_pyxs(folder, stem):
    name = f"kafkacodec.{folder}.{stem}"
    module = built(name)
    if not compiled.WANTED:
        pytest.skip("KAFKACODEC_PURE=1")
    assert compiled.sha256_beside(name) == digest((ROOT / folder / f"{stem}.pyx").read_bytes())
    assert compiled.load(name, "0" * 64) is None
    assert compiled.load(name, compiled.sha256_beside(name)) is module
    assert {"_kernels": kernels.compiled}[stem] is module


@pytest.mark.parametrize("schema", GENERATED)
def test_the_built_readers_are_refused_with_another_hash_and_used_with_the_named_one(schema):
    name = f"kafkacodec.generated._c_{schema}"
    module = built(name)
    if not compiled.WANTED:
        pytest.skip("KAFKACODEC_PURE=1")
    assert compiled.load(name, "0" * 64) is None
    assert compiled.load(name, named_hash(schema)) is module


def test_pure_mode_in_the_environment_loads_neither_kind():
    probe = ("from kafkacodec.runtime import compiled, kernels; "
             "from kafkacodec.generated import record_batch, legacy_log_entry; "
             f"print(kernels.compiled, compiled.load('kafkacodec.generated._c_record_batch', "
             f"{named_hash('record_batch')!r}), compiled.compiled_types())")
    env = dict(os.environ, KAFKACODEC_PURE="1")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.split() == ["None", "None", "[]"], out.stderr


def test_pack_env_takes_a_compiled_module_by_the_loader_s_rule(package):
    """pack-env ships a checkout's compiled module only when the loader would use it there."""
    from kafkacodec.cli.commands.packenv import _built_from_source_beside

    current, stale, wheel = (package(digest(b"a"), b"a"), package(digest(b"a"), b"b"), package(digest(b"a"), None))
    assert _built_from_source_beside(current) is True
    assert _built_from_source_beside(stale) is False
    assert _built_from_source_beside(wheel) is True
