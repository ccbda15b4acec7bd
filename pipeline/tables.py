"""Tables beside the records, for audits at scale. `kafka-log-segments`: one row per segment
(sizes, counts, offsets, timestamps, the valid prefix as recovery finds it, the health of the
indexes). `kafka-consumer-offsets`: the committed offsets per group, topic and partition that
the log dir's `__consumer_offsets` partitions hold, with the lag behind the log end offset when
the partition is in the same log dir."""
from __future__ import annotations

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kafkacodec.codec.records import Batch, read_batches
from kafkacodec.runtime.errors import DecodeError, TruncatedError
from kafkacodec.storage.audit import verify
from kafkacodec.codec.internal_topics import CONSUMER_OFFSETS_TOPIC, committed_offsets
from kafkacodec.codec.places import SIZE_AT
from kafkacodec.storage.segments.scan import (HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, BatchInfo, ScanResult,
                                              batch_at)

from .columns import timestamp_micros
from .files import SegmentFiles, filesystem, list_log, read_at, read_range
from .segment_reads import log_end_offset, read_aborted, read_indexes

SEGMENTS_DDL = ("topic string, partition int, baseOffset long, segment string, sizeBytes long, batches long, "
                "records long, firstOffset long, lastOffset long, minTimestamp timestamp, maxTimestamp timestamp, "
                "validBytes long, invalidBytes long, firstError string, indexEntries int, timeIndexEntries int, "
                "abortedTransactions int, indexProblems string")


def scan_segment(uri: str, seg: SegmentFiles) -> tuple[ScanResult, int, int | None, int | None, int | None]:
    """Recovery's scan of a segment, one batch in memory at a time: the result (batch headers
    only), the record count, the first offset and the min and max timestamps."""
    fs, _ = filesystem(uri)
    result = ScanResult(file_size=seg.size)
    records, first, lo, hi = 0, None, None, None
    with fs.open_input_file(seg.log) as f:
        pos = 0
        while pos < seg.size:
            try:
                left = seg.size - pos
                if left <= HEADER_SIZE_UP_TO_MAGIC:
                    raise TruncatedError(f"{left} bytes at the end are too few for a batch header", 0, "log")
                head = read_at(f, LOG_OVERHEAD, pos)
                size = LOG_OVERHEAD + int.from_bytes(head[SIZE_AT:LOG_OVERHEAD], "big", signed=True)
                # a size below the minimum or past the end is batch_at's to report
                data = read_at(f, min(size, left), pos) if size > HEADER_SIZE_UP_TO_MAGIC else head
                info = batch_at(data, 0, len(data))
                batch = Batch(info.entry, pos, info.size)
                if batch.is_legacy:
                    n = len(batch.records())
                    stamps = [r.timestamp for r in batch]
                else:
                    n = info.entry.records_count
                    stamps = [info.entry.max_timestamp]
                    if info.entry.base_timestamp >= 0 and not info.entry.has_delete_horizon:
                        stamps.append(info.entry.base_timestamp)
            except DecodeError as err:
                err.file, err.position = seg.log, pos + (err.position or 0)
                result.error = err
                break
            records += n
            first = batch.base_offset if first is None else first
            real = [t for t in stamps if t is not None and t >= 0]
            if real:
                lo = min(real) if lo is None else min(lo, *real)
                hi = max(real) if hi is None else max(hi, *real)
            result.batches.append(BatchInfo(pos, info.size, info.magic, info.last_offset, info.max_timestamp, None))
            pos += info.size
            result.valid_bytes = pos
    return result, records, first, lo, hi


class SegmentsReader(DataSourceReader):
    def __init__(self, uri: str):
        self.uri = uri

    def partitions(self):
        return [InputPartition((p.topic, p.partition, seg)) for p in list_log(self.uri).partitions
                for seg in p.segments]

    def read(self, partition):
        if partition.value is None:  # pyspark's one partition of an empty plan: no segments
            return
        topic, number, seg = partition.value
        scan, records, first, lo, hi = scan_segment(self.uri, seg)
        problems = []
        offsets = times = []
        try:
            offsets, times = read_indexes(self.uri, seg)
            problems += verify.check_offset_index(offsets, scan, seg.base_offset)
            problems += verify.check_time_index(times, scan, seg.base_offset)
            aborted = len(read_aborted(self.uri, seg)) if seg.txn_index else 0
        except DecodeError as err:
            problems.append(str(err))
            aborted = None
        last = scan.batches[-1].last_offset if scan.batches else None
        row = [topic, number, seg.base_offset, seg.log, seg.size, len(scan.batches), records, first, last,
               timestamp_micros(lo), timestamp_micros(hi), scan.valid_bytes, scan.truncated_bytes,
               None if scan.error is None else str(scan.error), len(offsets), len(times), aborted, "; ".join(problems) or None]
        yield rows_batch(SEGMENTS_DDL, [row])


ARROW_TYPES = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_(),
               "timestamp": pa.timestamp("us", tz="UTC"), "array<int>": pa.list_(pa.int32()),
               "array<string>": pa.list_(pa.string())}


def rows_batch(ddl: str, rows: list[list]) -> pa.RecordBatch:
    """Rows as an Arrow batch of a DDL's types (flat ones and arrays of them; timestamps in microseconds)."""
    fields = [f.split() for f in ddl.split(", ")]
    schema = pa.schema([(name, ARROW_TYPES[kind]) for name, kind in fields])
    return pa.RecordBatch.from_arrays([pa.array([r[i] for r in rows], t) for i, t in enumerate(schema.types)],
                                      schema=schema)


class _PathTable(DataSource):
    """A fixed-schema table of what lies under `load(path)`."""
    NAME = DDL = ""
    READER: type = DataSourceReader

    @classmethod
    def name(cls) -> str:
        return cls.NAME

    def schema(self):
        return self.DDL

    def reader(self, schema):
        path = self.options.get("path")
        if not path:
            raise ValueError(f"{self.NAME}: load(path) needs a log dir")
        return self.READER(path)


class SegmentsDataSource(_PathTable):
    NAME, DDL, READER = "kafka-log-segments", SEGMENTS_DDL, SegmentsReader


OFFSETS_DDL = ("group string, topic string, partition int, offset long, leaderEpoch int, metadata string, "
               "commitTimestamp timestamp, expireTimestamp timestamp, logEndOffset long, lag long, "
               "offsetsPartition int, recordOffset long")


class ConsumerOffsetsReader(DataSourceReader):
    def __init__(self, uri: str):
        self.uri = uri

    def partitions(self):
        return [InputPartition(p.partition) for p in list_log(self.uri).partitions
                if p.topic == CONSUMER_OFFSETS_TOPIC]

    def read(self, partition):
        if partition.value is None:  # pyspark's one partition of an empty plan: no __consumer_offsets
            return
        listing = list_log(self.uri).partitions
        part = next(p for p in listing if p.topic == CONSUMER_OFFSETS_TOPIC and p.partition == partition.value)

        def records():
            for seg in part.segments:
                try:
                    for batch in read_batches(read_range(self.uri, seg.log)):
                        if batch.is_legacy or not batch.entry.is_control:
                            yield from ((r.offset, r.key, r.value) for r in batch)
                except DecodeError:
                    continue  # the valid prefix of a damaged segment counts, as recovery keeps it

        ends = {(p.topic, p.partition): p for p in listing}
        rows = []
        for (group, topic, number), c in sorted(committed_offsets(records()).items()):
            end = log_end_offset(self.uri, ends[(topic, number)]) if (topic, number) in ends else None
            commit, expire = (None if ms is None or ms < 0 else timestamp_micros(ms)
                              for ms in (c.commit_timestamp, c.expire_timestamp))
            rows.append([group, topic, number, c.offset, c.leader_epoch, c.metadata, commit, expire, end,
                         None if end is None else max(0, end - c.offset), partition.value, c.record_offset])
        if rows:
            yield rows_batch(OFFSETS_DDL, rows)


class ConsumerOffsetsDataSource(_PathTable):
    NAME, DDL, READER = "kafka-consumer-offsets", OFFSETS_DDL, ConsumerOffsetsReader
