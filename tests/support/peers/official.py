"""The official Kaitai Struct compiler (npm kaitai-struct-compiler, run with node through ksc.js)
turning our schemas into Python parsers, for the cross-check tests and the benchmark."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def available() -> bool:
    return shutil.which("node") is not None and (ROOT / "node_modules" / "kaitai-struct-compiler").is_dir()


def compile_schemas(out: Path, names: list[str] | None = None) -> Path:
    """Compile schemas/<name>.ksy (every schema by default) into Python modules in `out`."""
    jsons = []
    for ksy in sorted((ROOT / "schemas").glob("*.ksy")):
        if names is None or ksy.stem in names:
            j = out / f"{ksy.stem}.json"
            # YAML's !!binary (a tagged field's bytes default, which the compiler ignores) as its hex
            j.write_text(json.dumps(yaml.safe_load(ksy.read_text()), default=bytes.hex))
            jsons.append(str(j))
    subprocess.run([shutil.which("node"), str(Path(__file__).with_name("ksc.js")), str(out), *jsons], check=True,
                   env={"NODE_PATH": str(ROOT / "node_modules"), "PATH": "/usr/bin:/bin"})
    return out
