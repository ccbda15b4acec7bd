"""CPU instructions per record under valgrind's callgrind: repeatable where wall-clock time on a
shared machine is not. Each workload runs in its own process; a process that only builds the
corpus is subtracted."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

SETUP = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import run as B
from reference_reader import read_records
data = B.corpus(100, 30)
blobs = [B.kp_encode(b, 'none') for b in data]
records = B.kc_records(data)
B.kc_decode(blobs[:1]); B.kp_decode(blobs[:1]); read_records(blobs[0])  # imports and warm-up
B.kc_encode(records[0], 'none'); B.kp_encode(data[0], 'none')
"""

WORKLOADS = {
    "decode kafkacodec": "B.kc_decode(blobs)",
    "decode kafka-python": "B.kp_decode(blobs)",
    "decode hand-written reference": "[read_records(b) for b in blobs]",
    "encode kafkacodec": "[B.kc_encode(b, 'none') for b in records]",
    "encode kafka-python": "[B.kp_encode(b, 'none') for b in data]",
}
RECORDS = 3000
# each workload runs this many times, so that it outweighs how much the imports of the setup
# vary from process to process (a few million instructions: a whole decode, now)
REPEAT = 10


def instructions(statement: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(SETUP + "\n" + statement + "\n")
        out = Path(tmp) / "callgrind.out"
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
                              str(script)], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        found = re.search(r"Collected : (\d+)", run.stderr)
        if run.returncode != 0 or not found:
            raise RuntimeError(run.stderr[-2000:])
        return int(found.group(1))


def table() -> list[dict] | None:
    if shutil.which("valgrind") is None:
        return None
    base = instructions("pass")
    per = {name: (instructions(f"for _ in range({REPEAT}):\n    {stmt}") - base) / (RECORDS * REPEAT)
           for name, stmt in WORKLOADS.items()}
    rows = []
    for op in ("decode", "encode"):
        peer = per[f"{op} kafka-python"]
        for name, value in per.items():
            if name.startswith(op):
                rows.append({"workload": name, "instructions_per_record": round(value),
                             "vs_kafka_python": peer / value})
    return rows
