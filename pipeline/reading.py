"""read(spark, path, ...): kafka-log through the JVM reader where this machine can build it (javac and
pyspark), else through the Python data source, with the same options, columns and rows. Both plan
alike: the Python planner (plan.py: partitions, offsets through the indexes, the last stable offset,
aborted transactions, splits) hands the JVM reader its slices, so only the decoding differs."""
from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote, urlsplit

from . import jvm
from .columns import ddl
from .headers import HEADER_COLUMNS
from .plan import OptionError, named_topics, options_for_schema, parse_options, planned

log = logging.getLogger("kafkacodec.pipeline")
READERS = ("auto", "jvm", "python")
_said_why: set[str] = set()  # why the JVM reader is not used, said once per reason


def _option_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def hadoop_uri(uri: str, path: str) -> str:
    """The URI by which Hadoop's FileSystem opens `path`, a file the planner listed under `uri`,
    percent-encoded: pyarrow's path is the bucket and key for object stores (s3: is Hadoop's s3a:),
    and an absolute path under the URI's authority for the others (hdfs://namenode:8020/...)."""
    if "://" in uri and not uri.startswith("file://"):
        parts = urlsplit(uri)
        scheme = "s3a" if parts.scheme == "s3" else parts.scheme
        if path.startswith("/"):
            return f"{scheme}://{parts.netloc}{quote(path)}"
        return f"{scheme}://{quote(path)}"
    return Path(path).as_uri()


def _jvm_unavailable(spark, uri: str) -> jvm.JvmReaderUnavailable | None:
    """Why the JVM reader cannot read `uri` in this session's calling thread, or None when it is attached."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException
    try:
        jvm.attach(spark)
    except jvm.JvmReaderUnavailable as err:
        return err
    except (Py4JError, PySparkException) as err:  # Spark refusing ADD JAR (a Connect session has no JVM here)
        first = str(err).strip().splitlines()[0][:300] if str(err).strip() else repr(err)
        return jvm.JvmReaderUnavailable(f"the session does not take the JVM reader's jar: {first}")
    return _scheme_unavailable(spark, uri)


def _scheme_unavailable(spark, uri: str) -> jvm.JvmReaderUnavailable | None:
    """Why Hadoop's FileSystem, which the JVM reader opens files with, cannot open what pyarrow lists
    under `uri`: no connector for its scheme (s3a: needs hadoop-aws, which pyspark's pip package does
    not ship), or options in its query, which are pyarrow's; None when it can."""
    if "://" not in uri or uri.startswith("file://"):
        return None
    if "?" in uri:
        return jvm.JvmReaderUnavailable(f"the options in the path's query ({uri.split('?', 1)[1]}) are pyarrow's, "
                                        "which Hadoop's FileSystem does not take (set them as spark.hadoop.* instead)")
    from py4j.protocol import Py4JError
    scheme = hadoop_uri(uri, "x").split("://", 1)[0]
    try:
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
    except Py4JError as err:  # carrying the JVM's error (UnsupportedFileSystemException: no connector)
        said = next((line.strip() for line in str(err).splitlines() if "Exception" in line), str(err))[:300]
        return jvm.JvmReaderUnavailable(f"this session's Hadoop cannot open {scheme}: paths ({said}; a connector "
                                        "such as hadoop-aws for s3a: goes in spark.jars)")
    return None


def planned_slices(path: str, options: dict, schema=None, typed: tuple = ()) -> str:
    """The slices of a read as JSON, for the JVM reader's `slices` option (`typed`: the typed key
    and value columns a schema may name)."""
    try:
        plan = parse_options({**options, "path": path})
        plan = replace(plan, options=replace(plan.options, typed=tuple(typed)))
        if schema is not None:
            options_for_schema(schema, plan.options)  # the same checks, and messages, as the Python source
    except OptionError as err:
        raise ValueError(f"kafka-log: {err}") from None
    return json.dumps([{"uri": hadoop_uri(plan.uri, s.path), "segment": s.path, "topic": s.topic,
                        "partition": s.partition, "start": s.start_pos, "end": s.end_pos, "lo": s.start_offset,
                        "hi": s.end_offset, "aborted": [list(t) for t in s.aborted]} for s in planned(plan)])


def _typed_for_jvm(path: str, options: dict) -> tuple[list, jvm.JvmReaderUnavailable | None]:
    """The typed key and value columns the options ask for, and why the JVM reader cannot give
    them (None when it can)."""
    lowered = {k.lower(): v for k, v in options.items()}
    if not any(lowered.get(f"{f}format") for f in ("key", "value")):
        return [], None
    from .values.columns import ValueOptionError, typed_columns
    from .values.jvm_spec import why_not_jvm
    try:
        typed = typed_columns({**lowered, "path": path}, named_topics(lowered))
    except ValueOptionError as err:
        raise ValueError(f"kafka-log: {err}") from None
    for column in typed:
        why = why_not_jvm(column)
        if why is not None:
            return typed, jvm.JvmReaderUnavailable(f"{column.field}Format={column.format}: {why}")
    return typed, None


def _jvm_frame(spark, path: str, schema, options: dict, typed: list):
    frame = spark.read.format(jvm.SOURCE_NAME).options(**options)
    # what it reads, as the Python source reads it: the slices, every column, those of batch headers
    frame = frame.options(slices=planned_slices(path, options, schema, tuple(typed)),
                          columns=", ".join([ddl(True)] + [t.ddl() for t in typed]),
                          batchHeaderColumns=",".join(sorted(HEADER_COLUMNS)))
    if typed:
        from .values.jvm_spec import typed_columns_option
        frame = frame.option("typedColumns", typed_columns_option(typed))
    from pyspark.errors import IllegalArgumentException
    try:
        return (frame.schema(schema) if schema is not None else frame).load()
    except IllegalArgumentException as err:  # a reader's schema Avro's Java parser refuses, said so
        said = str(err).strip().splitlines()[0] if str(err).strip() else ""
        if jvm.CANNOT_DECODE not in said:
            raise
        raise jvm.JvmReaderUnavailable(said[said.index(jvm.CANNOT_DECODE):][:500]) from None


def read(spark, path, schema=None, reader: str = "auto", **options):
    """A DataFrame of the records under `path` (a log-dirs root, a partition directory or a segment),
    with the options of format("kafka-log") as keywords (subscribe="orders", includeHeaders=True, ...)
    and optionally a narrower schema of its columns. `reader`: "jvm" (fail if it cannot be used),
    "python" (the Python data source), or "auto": the JVM reader when it can be built and loaded,
    else the Python source, saying once why."""
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(READERS)}, not {reader!r}")
    options = {k: _option_text(v) for k, v in options.items()}
    if isinstance(schema, str):
        from pyspark.sql.types import _parse_datatype_string
        schema = _parse_datatype_string(schema)
    if reader != "python":
        typed, why_not = _typed_for_jvm(str(path), options)
        why_not = why_not or _jvm_unavailable(spark, str(path))
        if why_not is not None and reader == "jvm":
            raise why_not
        if why_not is not None and str(why_not) not in _said_why:
            _said_why.add(str(why_not))
            log.warning("kafka-log: the Python data source reads this (slower than the JVM reader): %s", why_not)
        if why_not is None:
            try:
                return _jvm_frame(spark, str(path), schema, options, typed)
            except jvm.JvmReaderUnavailable as err:
                if reader == "jvm":
                    raise
                log.warning("kafka-log: the Python data source reads this (slower than the JVM reader): %s", err)
    from .registration import register
    register(spark, check=False)
    frame = spark.read.format("kafka-log").options(**options)
    return (frame.schema(schema) if schema is not None else frame).load(str(path))


def reader_of(frame) -> str:
    """Which reader a DataFrame of `read` reads kafka-log through: "jvm" or "python"."""
    plan = frame._jdf.queryExecution().executedPlan().toString()
    return "jvm" if f"BatchScan {jvm.SOURCE_NAME}" in plan else "python"
