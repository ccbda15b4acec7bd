"""The compiled kernels (runtime/_kernels.pyx) when they are built, current and wanted, else None.

KAFKACODEC_PURE=1 in the environment forces the pure-Python paths, for comparison and for
platforms without a compiler; both paths give the same values and errors. A module built from
another version of the source than the one beside it (an old build in a checkout) is not used.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .compiled import WANTED


def _current(module) -> bool:
    source = Path(__file__).with_name("_kernels.pyx")
    if not source.exists():  # an installed wheel: the module was built with this package
        return True
    return hashlib.sha256(source.read_bytes()).hexdigest() == getattr(module, "SOURCE_SHA256", None)


compiled = None
if WANTED:
    try:
        from . import _kernels
    except ImportError:  # not built: no compiler at install time, or PyPy
        pass
    else:
        compiled = _kernels if _current(_kernels) else None
