"""A test schema's generated modules built here: its Python module and its compiled readers,
built with Cython against the runtime's .pxd files (for the tests of shapes the Kafka schemas
do not use)."""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkacodec.generator.compile import compile_dir
from tests.support import ROOT

BUILD = """
import sys
from setuptools import Extension, setup
from Cython.Build import cythonize
sys.argv[1:] = ["build_ext", "--inplace", "-q"]
setup(ext_modules=cythonize([Extension({name!r}, [{name!r} + ".pyx"])], language_level=3, quiet=True,
                            include_path=[{runtime!r}]))
"""


def build(work: Path, schema: Path, imports: tuple[str, ...] = ()):
    """(the generated Python module of `schema`, loaded under a name of its own; its compiled
    module, loaded and not installed), generated and built in `work` (`imports`: schemas of
    schemas/ it imports)."""
    schemas = work / "schemas"
    schemas.mkdir()
    for name in imports:
        shutil.copy(ROOT / "schemas" / name, schemas)
    shutil.copy(schema, schemas)
    outputs = compile_dir(schemas)
    stem, compiled = schema.stem, f"_c_{schema.stem}"
    pyx = outputs[f"{compiled}.pyx"]
    (work / f"{stem}.py").write_text(outputs[f"{stem}.py"])
    (work / f"{compiled}.pyx").write_text(pyx)
    (work / f"{compiled}_source.pxi").write_text(f'SOURCE_SHA256 = "{hashlib.sha256(pyx.encode()).hexdigest()}"\n')
    built = subprocess.run([sys.executable, "-c", BUILD.format(name=compiled, runtime=str(ROOT / "runtime"))],
                           cwd=work, capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(built.stdout + built.stderr)
    spec = importlib.util.spec_from_file_location(f"{stem}_under_test", work / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loader = importlib.machinery.ExtensionFileLoader(compiled, str(next(work.glob(f"{compiled}*.so"))))
    fast = importlib.util.module_from_spec(importlib.util.spec_from_loader(compiled, loader))
    loader.exec_module(fast)
    return module, fast
