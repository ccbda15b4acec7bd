"""The package configuration names every folder the wheel ships: setuptools builds it without
its warning that a folder it copies (the generator's templates) is absent from `packages`, the
form it says it will stop shipping."""
import os
import shutil
import subprocess
import sys
import zipfile

from tests.support import ROOT

SOURCES = ["kafkacodec", "runtime", "generated", "generator", "storage", "formatdocs", "pipeline", "codec", "cli"]


def test_the_wheel_builds_without_a_folder_missing_from_packages(tmp_path):
    tree = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside the sources
    for name in SOURCES:
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    env = {**os.environ, "KAFKACODEC_PURE": "1"}  # the configuration is the same; no compiler needed
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                            "-w", str(tmp_path / "dist"), str(tree)], capture_output=True, text=True, env=env)
    assert build.returncode == 0, build.stderr[-3000:]
    said = build.stdout + build.stderr
    assert "absent from the `packages` configuration" not in said, said[said.find("absent") - 300:][:800]
    (wheel,) = (tmp_path / "dist").glob("kafkacodec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    templates = sorted(p.name for p in (ROOT / "generator" / "templates").iterdir())
    assert sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("kafkacodec/generator/templates/")) == templates
