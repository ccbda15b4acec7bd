"""What each make target installs (make's plan, printed by `make -n` and run by nothing): `make
install` gives the package and its runtime dependencies only, as a user's `pip install` does;
the targets that need an extra add it on top, and `make test` on a fresh clone still installs
everything its tests need."""
import re
import shutil
import subprocess

import pytest

from tests.support import ROOT


def plan(target: str) -> str:
    """What make would run for `target` on a fresh clone (-B: as if nothing were installed yet)."""
    if shutil.which("make") is None:
        pytest.fail("make is needed")
    return subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def installs(target: str) -> list[str]:
    """What `pip install` is given, in order: the package (`.`), then the extras whose requirements
    are installed on top (`extra:NAME`, from the requirements file the Makefile writes for it)."""
    found = re.finditer(r"^\.venv/bin/pip install -q (?:--upgrade pip .*|-e (\S+)|-r \.venv/requirements-(\w+)\.txt)$",
                        plan(target), re.M)
    return [m[1] or f"extra:{m[2]}" for m in found if m[1] or m[2]]


def test_make_install_is_the_package_and_its_runtime_dependencies():
    assert installs("install") == ["."]


@pytest.mark.parametrize("target, extra", [("run", "extra:spark"), ("test", "extra:test"),
                                           ("test-cluster", "extra:test"), ("bench", "extra:bench")])
def test_each_target_adds_the_extra_it_needs_after_the_package(target, extra):
    assert installs(target)[0] == "." and installs(target)[-1] == extra


def test_an_extras_requirements_include_those_of_the_extras_it_names():
    """The test extra names kafkacodec[spark], which names kafkacodec[columnar] and [values]: the file
    the Makefile writes for it holds all of their requirements, and no kafkacodec[...] itself."""
    line = next(line for line in plan("test").splitlines() if "> .venv/requirements-test.txt" in line)
    listed = subprocess.run(line.split(" > ")[0], shell=True, cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    names = {re.split(r"[\[<>=]", r)[0] for r in listed}
    assert {"pyarrow", "pyspark", "fastavro", "grpcio-tools", "pytest", "confluent-kafka"} <= names
    assert not any(r.startswith("kafkacodec") for r in listed)


def test_the_extras_are_what_the_targets_say():
    import tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "kafkacodec[spark]" in extras["test"]  # make test-cluster's Spark tests
    assert any(r.startswith("pyspark") for r in extras["spark"]) and "kafkacodec[columnar]" in extras["spark"]
