"""The compiled kernels when they are built, current and wanted, else None: `compiled`, the
columnar reader's (runtime/_kernels.pyx); `facade`, the facade's (runtime/_facade.pyx).

KAFKACODEC_PURE=1 in the environment forces the pure-Python paths, for comparison and for
platforms without a compiler; both paths give the same values and errors. A module built from
another version of the source than the one beside it (an old build in a checkout) is not used.
"""
from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

from .compiled import WANTED


def _current(module) -> bool:
    source = Path(__file__).with_name(module.__name__.rpartition(".")[2] + ".pyx")
    if not source.exists():  # an installed wheel: the module was built with this package
        return True
    return hashlib.sha256(source.read_bytes()).hexdigest() == getattr(module, "SOURCE_SHA256", None)


def _load(name: str):
    if not WANTED:
        return None
    try:
        module = importlib.import_module(f"{__package__}.{name}")
    except ImportError:  # not built: no compiler at install time, or PyPy
        return None
    return module if _current(module) else None


compiled = _load("_kernels")
facade = _load("_facade")
