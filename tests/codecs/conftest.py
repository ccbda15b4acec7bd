import os

import pytest

# the checks of tests/support/roundtrip.py report what differs, as a test's own asserts do
pytest.register_assert_rewrite("tests.support.roundtrip")

from tests.support.roundtrip import BACKENDS, missing_compiled  # noqa: E402
from kafkacodec.runtime.compiled import set_type_attr  # noqa: E402


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request) -> str:
    """Each backend in turn, "pure" then "compiled" (see tests/support/roundtrip.py). "compiled"
    is skipped when it is not built, and is a failure instead when KAFKACODEC_EXPECT_COMPILED=1
    (make test) says it must be; with KAFKACODEC_PURE=1 only "pure" runs."""
    if request.param == "compiled":
        if os.environ.get("KAFKACODEC_PURE") == "1":
            pytest.skip("KAFKACODEC_PURE=1: the pure backend alone")
        missing = missing_compiled()
        if missing and os.environ.get("KAFKACODEC_EXPECT_COMPILED") == "1":
            pytest.fail(f"KAFKACODEC_EXPECT_COMPILED=1, but not in use: {', '.join(missing)}", pytrace=False)
        if missing:
            pytest.skip(f"the compiled backend is not built: {', '.join(missing)} not in use")
    return request.param


@pytest.fixture
def patch_type():
    """monkeypatch.setattr for a generated class of either backend (an extension type in place of
    a hot class refuses setattr): each attribute set is put back after the test."""
    undo = []

    def patch(cls, name, value):
        undo.append((cls, name, cls.__dict__[name]))
        set_type_attr(cls, name, value)
    yield patch
    for cls, name, value in reversed(undo):
        set_type_attr(cls, name, value)
