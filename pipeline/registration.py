"""Registering kafkacodec's Spark data sources with a session, after checking that Spark's Python
workers can import kafkacodec (where the Python data sources run)."""
from __future__ import annotations

import json
import sys

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


class WorkersCannotImport(RuntimeError):
    """Spark's Python workers run an interpreter that cannot import kafkacodec."""


UNPACK = "rm -rf deps && mkdir deps && tar -xzf deps.tar.gz -C deps"
RECIPE = ("kafkacodec pack-env --force deps.tar.gz; " + UNPACK + "; spark-submit --archives deps.tar.gz#deps "
          "--conf spark.executorEnv.PYTHONPATH=./deps --conf spark.pyspark.python={python} "
          "--conf spark.pyspark.driver.python=$(command -v python) ...")


def _cause(err: BaseException) -> str:
    """The line of a Spark error that says why a Python worker did not start or import."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    for pattern in ("Cannot run program", "[PYTHON_VERSION_MISMATCH]", "ModuleNotFoundError", "ImportError"):
        for line in lines:
            if pattern in line:
                return line[line.index(pattern):][:400]
    return (lines[0] if lines else type(err).__name__)[:400]


def _driver_planner(spark) -> tuple[str, str | None]:
    """(interpreter, what stops it importing kafkacodec or None) of the Python that plans Python data
    sources' reads on the driver: a worker of Spark's own, started with the executors' interpreter
    path and spark.executorEnv.* environment, in the driver's working directory."""
    from pyspark.sql.datasource import DataSource  # pyspark: an optional extra, needed once a session exists

    class DriverCheck(DataSource):  # defined here, so that it travels by value: the planner need not import us
        @classmethod
        def name(cls):
            return "kafkacodec-driver-check"

        def schema(self):  # its imports here too, as the planner runs it without this module
            import importlib
            import json
            import sys

            from pyspark.sql.types import IntegerType, StructField, StructType
            try:
                importlib.import_module("kafkacodec.pipeline.decode")  # what every read plans with
                problem = None
            except ImportError as err:
                problem = str(err)
            return StructType([StructField(json.dumps([sys.executable, problem]), IntegerType())])

    spark.dataSource.register(DriverCheck)
    try:
        (column,) = spark.read.format(DriverCheck.name()).load().columns
    except Exception as err:  # the planner did not start: no such interpreter here, another Python version
        return spark.sparkContext.pythonExec, _cause(err)
    executable, problem = json.loads(column)
    return executable, problem


def check_workers(spark) -> None:
    """Raise WorkersCannotImport, saying how to fix it, when the Python that Spark starts for its
    workers (spark.pyspark.python or PYSPARK_PYTHON, else `python3` on the PATH) cannot import
    kafkacodec: every read would fail later with "No module named 'kafkacodec'" from deep inside
    Spark. On a cluster, that Python runs on the executors and, to plan each read of a Python data
    source, on the driver too (with the executors' settings, in the driver's working directory);
    both are checked."""
    def worker_python(_):  # defined here, so that it travels by value: the worker need not import us
        import importlib
        import sys
        try:
            importlib.import_module("kafkacodec.pipeline.decode")  # what every read runs there
        except ImportError as err:
            return sys.executable, str(err)
        return sys.executable, None

    sc = spark.sparkContext
    local = sc.master.startswith("local")
    try:
        executable, problem = sc.parallelize([0], 1).map(worker_python).collect()[0]
    except Exception as err:  # the worker did not start: no such interpreter, another Python version
        if local:
            raise
        executable, problem = sc.pythonExec, _cause(err)
    version = "%d.%d" % sys.version_info[:2]
    if problem is not None:
        node_python = f"/usr/bin/python{version}"
        fix = (f"set PYSPARK_PYTHON={sys.executable} (this interpreter, which has it) before the session starts"
               if local else
               "ship kafkacodec with the job as the README's cluster recipe does (Spark section; "
               "docs/recipes/spark-cluster.sh runs it), or install it in that "
               f"Python on every node: {RECIPE.format(python=node_python)} ({node_python}: a Python {version}, "
               "the driver's version, that every node has at that path)")
        raise WorkersCannotImport(f"Spark's Python workers run {executable}, which cannot import kafkacodec "
                                  f"({problem}): {fix}")
    if local:  # the planner is the same interpreter, in the same place
        return
    executable, problem = _driver_planner(spark)
    if problem is not None:
        raise WorkersCannotImport(
            f"Spark's Python on the driver ({executable}), where Python data sources plan their reads, cannot "
            f"import kafkacodec ({problem}): it is the executors' spark.pyspark.python, run with their "
            "spark.executorEnv.PYTHONPATH in the directory you submitted from; unpack the archive there as the "
            f"README's cluster recipe does ({UNPACK}), and make {executable} a Python {version} on this "
            "machine too")


def register(spark, check: bool = True) -> None:
    """Register `kafka-log`, `kafka-log-segments`, `kafka-consumer-offsets`, `kafka-cluster-metadata`
    and `kafka-cluster-state` with this session.
    Filter pushdown is used when the session enables it (a reader that pushes filters fails every
    query where it is off); option("pushFilters", ...) overrides that per query. `check`: first
    run one small task to make sure the workers' Python can import kafkacodec, and on a cluster
    the driver's planning Python too (check_workers)."""
    # the data sources need pyspark, an optional extra: imported when a session registers them, not
    # whenever a module of this package is
    from .cluster_metadata import ClusterMetadataDataSource, ClusterStateDataSource
    from .source import KafkaLogDataSource, KafkaLogPushdownDataSource
    from .tables import ConsumerOffsetsDataSource, SegmentsDataSource

    if check:
        check_workers(spark)

    enabled = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    spark.dataSource.register(KafkaLogPushdownDataSource if enabled else KafkaLogDataSource)
    spark.dataSource.register(SegmentsDataSource)
    spark.dataSource.register(ConsumerOffsetsDataSource)
    spark.dataSource.register(ClusterMetadataDataSource)
    spark.dataSource.register(ClusterStateDataSource)
