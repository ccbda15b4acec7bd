"""What each make target installs (make's plan, printed by `make -n` and run by nothing): `make
install` gives the package and its runtime dependencies only, as a user's `pip install` does;
the targets that need an extra add it on top, and `make test` on a fresh clone still installs
everything its tests need."""
import re
import shutil
import subprocess

import pytest

from tests.support import ROOT


def installs(target: str) -> list[str]:
    """What `pip install` is given, in order, when `target` is made on a fresh clone (-B: as if
    nothing were installed yet)."""
    if shutil.which("make") is None:
        pytest.fail("make is needed")
    plan = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [m[1] for m in re.finditer(r"^\.venv/bin/pip install -q (?:--upgrade pip .*|-e (\S+))$", plan, re.M) if m[1]]


def test_make_install_is_the_package_and_its_runtime_dependencies():
    assert installs("install") == ["."]


@pytest.mark.parametrize("target, extra", [("run", "'.[spark]'"), ("test", "'.[test]'"),
                                           ("test-cluster", "'.[test]'"), ("bench", "'.[bench]'")])
def test_each_target_adds_the_extra_it_needs_after_the_package(target, extra):
    assert installs(target)[0] == "." and installs(target)[-1] == extra


def test_the_extras_are_what_the_targets_say():
    import tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "kafkacodec[spark]" in extras["test"]  # make test-cluster's Spark tests
    assert any(r.startswith("pyspark") for r in extras["spark"]) and "kafkacodec[columnar]" in extras["spark"]
