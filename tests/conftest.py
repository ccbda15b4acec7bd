import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))  # for tests/peers

import os  # noqa: E402

from hypothesis import settings  # noqa: E402

# CI explores the same examples on every run, so main stays green or red for a reason; local
# runs keep drawing new examples and so keep finding new cases.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample log dir (`kafkacodec sample`), written once per test module that asks for it."""
    from kafkacodec.storage.sample import write_sample

    root = tmp_path_factory.mktemp("logs")
    write_sample(root)
    return root
