import os

import pytest

# the checks of tests/support/roundtrip.py report what differs, as a test's own asserts do
pytest.register_assert_rewrite("tests.support.roundtrip")

from tests.support.roundtrip import BACKENDS, missing_compiled  # noqa: E402


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
