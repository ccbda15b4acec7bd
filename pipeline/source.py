"""The `kafka-log` data source for pyspark 4.x: Kafka log directories as DataFrames, with the
columns and options of Spark's own Kafka source."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace

from pyspark.sql.datasource import (DataSource, DataSourceReader, EqualTo, GreaterThan, GreaterThanOrEqual, In,
                                    InputPartition, LessThan, LessThanOrEqual)

from . import columns
from .decode import Slice, decode_slice
from .files import windows
from .headers import HEADER_COLUMNS, header_rows, projected
from .plan import OptionError, Plan, named_topics, options_for_schema, parse_options, planned
from .sink import KafkaLogWriter
from .values.columns import ColumnDecoder, ValueOptionError, typed_columns, with_typed


class SlicePartition(InputPartition):
    def __init__(self, work: Slice):
        super().__init__(work)


class KafkaLogReader(DataSourceReader):
    def __init__(self, plan: Plan):
        self.plan = plan
        self.pushed: dict = {}

    def partitions(self):
        # Spark plans a read in a Python process of its own on the driver: what `planned` logs goes to
        # the driver's console (or to spark.tvf.python_worker_logs() with spark.sql.pyspark.worker.logging.enabled)
        return [SlicePartition(s) for s in planned(self.plan, self.pushed)]

    def read(self, partition: SlicePartition):
        s: Slice | None = partition.value
        if s is None:  # pyspark's one partition of an empty plan
            return
        names = s.options.columns
        typed = [ColumnDecoder(column) for column in s.options.typed]
        # a header may name a record's schema: typed columns read the headers, shown or not
        hidden = bool(typed) and not s.options.include_headers
        if hidden:
            s = replace(s, options=replace(s.options, include_headers=True))
        for pos, data in windows(s):
            part = replace(s, start_pos=pos, end_pos=pos + len(data))
            if names is None:
                for batch in decode_slice(data, part, segment_name=s.path, base_pos=pos):
                    batch = with_typed(batch, typed)
                    yield batch.drop_columns(["headers"]) if hidden else batch
            elif HEADER_COLUMNS.issuperset(names):
                yield from header_rows(data, part, names, s.path, base_pos=pos)
            else:
                for batch in decode_slice(data, part, segment_name=s.path, base_pos=pos):
                    yield projected(with_typed(batch, typed), names)


def _millis(value) -> int:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return int(value.timestamp() * 1000)
    return int(value)


class PushdownReader(KafkaLogReader):
    """Takes topic, partition, offset and timestamp filters as bounds (pyspark 4.1+, with
    spark.sql.python.filterPushdown.enabled=true). Every filter is handed back, so Spark still
    evaluates it: the bounds only skip segments and batches."""

    def pushFilters(self, filters):
        p = self.pushed
        for f in filters:
            attribute = getattr(f, "attribute", ())  # Not(...) has a child filter instead
            column = attribute[0] if len(attribute) == 1 else None
            if isinstance(f, (EqualTo, In)):
                values = {f.value} if isinstance(f, EqualTo) else set(f.value)
                if column == "topic":
                    p["topics"] = values & p.get("topics", values)
                elif column == "partition":
                    p["partitions"] = values & p.get("partitions", values)
                elif column == "offset" and isinstance(f, EqualTo):
                    p["offset_lo"], p["offset_hi"] = max(p.get("offset_lo", f.value), f.value), \
                        min(p.get("offset_hi", f.value + 1), f.value + 1)
            elif column == "offset" and isinstance(f, (GreaterThan, GreaterThanOrEqual)):
                lo = f.value + (1 if isinstance(f, GreaterThan) else 0)
                p["offset_lo"] = max(p.get("offset_lo", lo), lo)
            elif column == "offset" and isinstance(f, (LessThan, LessThanOrEqual)):
                hi = f.value + (1 if isinstance(f, LessThanOrEqual) else 0)
                p["offset_hi"] = min(p.get("offset_hi", hi), hi)
            elif column == "timestamp" and isinstance(f, (GreaterThan, GreaterThanOrEqual)):
                lo = _millis(f.value)  # a record at the same millisecond may pass a GreaterThan on micros
                p["ts_lo"] = max(p.get("ts_lo", lo), lo)
            yield f


class KafkaLogDataSource(DataSource):
    """spark.read.format("kafka-log").load(path): a log-dirs root, a partition directory or a
    segment, on any filesystem pyarrow reaches."""

    pushdown = False  # register() picks the subclass matching the session's pushdown setting

    @classmethod
    def name(cls) -> str:
        return "kafka-log"

    def schema(self):
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return ", ".join([columns.ddl(include)] + [t.ddl() for t in self._typed()])

    def _typed(self) -> list:
        """The typed key and value columns the options ask for (values.columns)."""
        options = {k.lower(): v for k, v in dict(self.options).items()}
        try:
            return typed_columns(options, named_topics(options))
        except ValueOptionError as err:
            raise ValueError(f"kafka-log: {err}") from None

    def reader(self, schema):
        try:
            plan = parse_options(dict(self.options))
            plan = replace(plan, options=replace(plan.options, typed=tuple(self._typed())))
            plan = replace(plan, options=options_for_schema(schema, plan.options))
        except OptionError as err:
            raise ValueError(f"kafka-log: {err}") from None
        wants = str(self.options.get("pushFilters", "true" if self.pushdown else "false")).lower() == "true"
        return PushdownReader(plan) if wants else KafkaLogReader(plan)

    def writer(self, schema, overwrite: bool):
        return KafkaLogWriter(dict(self.options), schema, overwrite)


class KafkaLogPushdownDataSource(KafkaLogDataSource):
    pushdown = True
