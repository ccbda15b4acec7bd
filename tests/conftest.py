import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

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
    from kafkacodec.storage.samples.broker import write_sample

    root = tmp_path_factory.mktemp("logs")
    write_sample(root)
    return root


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # the S3 test's server accepts any credentials; workers inherit these from the JVM's start
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_EC2_METADATA_DISABLED", "true")):
        os.environ.setdefault(name, value)
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("kafkacodec-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .config("spark.driver.memory", "1g").config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .config("spark.sql.codegen.wholeStage", "false").config("spark.sql.adaptive.enabled", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    from kafkacodec.pipeline import register
    register(session)
    yield session
    session.stop()
