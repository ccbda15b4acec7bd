"""The hand-written compiled kernels of the runtime when they are built, current and wanted,
else None: `compiled`, the columnar reader's Arrow gather and the compiled code's CRC-32
(runtime/_kernels.pyx). runtime/compiled.py loads them and says when they are current.

KAFKACODEC_PURE=1 in the environment forces the pure-Python paths, for comparison and for
platforms without a compiler; both paths give the same values and errors.
"""
from __future__ import annotations

from .compiled import load, sha256_beside

_KERNELS = f"{__package__}._kernels"

compiled = load(_KERNELS, sha256_beside(_KERNELS))
