"""The facade's compiled kernels (codec/_facade.pyx: plain v0/v1 entries read into records, and
the loops writing records through the generated writers) when they are built, current and
wanted, else None; runtime/compiled.py loads them and says when they are current. Without them
codec/plain_legacy.py and the generated Python writers do the same."""
from __future__ import annotations

from kafkacodec.runtime.compiled import load, sha256_beside

_FACADE = f"{__package__}._facade"

facade = load(_FACADE, sha256_beside(_FACADE))
