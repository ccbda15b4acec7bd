"""The hand-written compiled kernels when they are built, current and wanted, else None:
`compiled`, the columnar reader's (runtime/_kernels.pyx); `facade`, the facade's
(runtime/_facade.pyx). runtime/compiled.py loads them and says when they are current.

KAFKACODEC_PURE=1 in the environment forces the pure-Python paths, for comparison and for
platforms without a compiler; both paths give the same values and errors.
"""
from __future__ import annotations

from .compiled import load, sha256_beside

_KERNELS, _FACADE = f"{__package__}._kernels", f"{__package__}._facade"

compiled = load(_KERNELS, sha256_beside(_KERNELS))
facade = load(_FACADE, sha256_beside(_FACADE))
