"""kafkajs (npm) as an independent writer of v2 record batches, through tests/support/peers/kafkajs_batches.js."""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).resolve().parent / "kafkajs_batches.js"
CODECS = {"none": 0, "gzip": 1}  # kafkajs needs plugins for the others


def available() -> bool:
    return shutil.which("node") is not None and (ROOT / "node_modules" / "kafkajs").is_dir()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def encode_batches(batches, codec: str = "none") -> bytes:
    """Batches of (offset, timestamp, key, value, [(header key, header value)]) tuples, framed by kafkajs."""
    request = {"codec": CODECS[codec], "batches": [
        [{"offset": o, "timestamp": t, "key": _b64(k), "value": _b64(v),
          "headers": [[hk, _b64(hv)] for hk, hv in h]} for o, t, k, v, h in batch] for batch in batches]}
    done = subprocess.run(["node", str(SCRIPT)], input=json.dumps(request).encode(), cwd=ROOT,
                          capture_output=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"kafkajs failed: {done.stderr.decode(errors='replace')}")
    return done.stdout
