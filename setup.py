"""Compiled extensions, built when Cython and a C compiler are present (and KAFKACODEC_PURE is
not 1); without them the package installs and runs in pure Python. Everything else is declared
in pyproject.toml."""
import hashlib
import os
from pathlib import Path

from setuptools import Extension, setup

KERNELS = Path("runtime/_kernels.pyx")


def extensions() -> list:
    if os.environ.get("KAFKACODEC_PURE") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    # the source's hash, compiled in: runtime.kernels refuses a module built from other source
    digest = hashlib.sha256(KERNELS.read_bytes()).hexdigest()
    stamp = KERNELS.with_name("_kernels_source.pxi")
    if not stamp.exists() or digest not in stamp.read_text():
        stamp.write_text(f'SOURCE_SHA256 = "{digest}"\n')
    modules = [Extension("kafkacodec.runtime._kernels", [str(KERNELS)], optional=True)]
    return cythonize(modules, language_level=3, quiet=True)


setup(ext_modules=extensions())
