"""Compiled extensions, built when Cython and a C compiler are present (and KAFKACODEC_PURE is
not 1); without them the package installs and runs in pure Python. Everything else is declared
in pyproject.toml."""
import hashlib
import os
from pathlib import Path

from setuptools import Extension, setup

# the modules translated and compiled side by side, one per core (the largest takes most of a minute)
JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
# (module, source): the runtime's kernels, and the readers generated for the -hot types
SOURCES = [("kafkacodec.runtime._kernels", Path("runtime/_kernels.pyx"))] + [
    (f"kafkacodec.generated.{p.stem}", p) for p in sorted(Path("generated").glob("_c_*.pyx"))]


def stamp(source: Path) -> None:
    """Compile the source's hash in (<name>_source.pxi): a module built from other source than
    the one its Python side expects is not used."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    pxi = source.with_name(f"{source.stem}_source.pxi")
    if not pxi.exists() or digest not in pxi.read_text():
        pxi.write_text(f'SOURCE_SHA256 = "{digest}"\n')


def extensions() -> list:
    if os.environ.get("KAFKACODEC_PURE") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    for _, source in SOURCES:
        stamp(source)
    modules = [Extension(name, [str(source)], include_dirs=["runtime"], optional=True) for name, source in SOURCES]
    return cythonize(modules, language_level=3, quiet=True, include_path=["runtime"], nthreads=JOBS)


setup(ext_modules=extensions(), options={"build_ext": {"parallel": JOBS}})
