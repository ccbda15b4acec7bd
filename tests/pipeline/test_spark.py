"""The Spark data sources on a local SparkSession, compared with the library's own decoding of
the same files."""
import os
import shutil
import sys
import zlib

import pytest

pytestmark = pytest.mark.spark

from kafkacodec.pipeline.reading import read as read_log, reader_of  # noqa: E402
from kafkacodec.storage.layout import logdir  # noqa: E402
from kafkacodec.storage.segments.reader import partition_records  # noqa: E402
from kafkacodec.storage.audit.verify import verify_partition  # noqa: E402
from kafkacodec.storage.state.groups import partition_committed_offsets  # noqa: E402

KAFKA_COLUMNS = [("key", "binary"), ("value", "binary"), ("topic", "string"), ("partition", "int"),
                 ("offset", "bigint"), ("timestamp", "timestamp"), ("timestampType", "int")]


def expected_rows(root, topics=None, control=True):
    """(topic, partition, offset, key, value, timestamp ms, timestamp type, headers, magic, codec,
    producer id) of every record, from the library's reader; no timestamp (-1, every v0 message's)
    is None, as Spark's NULL. `control`: with the control records (transaction markers)."""
    rows = []
    for part in logdir.open_log_dir(root).partitions:
        if topics and part.topic not in topics:
            continue
        for batch, r in partition_records(part):
            e = batch.entry
            if not control and not batch.is_legacy and e.is_control:
                continue
            pid = -1 if batch.is_legacy else e.producer_id
            ts_type = r.timestamp_type if batch.is_legacy else int(e.timestamp_type)
            headers = None if batch.is_legacy or not r.headers else [(h.key, bytes(h.value)) for h in r.headers]
            ts = None if r.timestamp == -1 else r.timestamp
            rows.append((part.topic, part.partition, r.offset, r.key, r.value, ts, ts_type, headers,
                         batch.magic, batch.compression, pid))
    return sorted(rows, key=lambda t: (t[0], t[1], t[2]))


def spark_rows(df):
    out = []
    for r in df.collect():
        ts = r["timestamp"]
        millis = None if ts is None else round(ts.timestamp() * 1000)
        headers = None if r["headers"] is None else [(h["key"], bytes(h["value"])) for h in r["headers"]]
        out.append((r["topic"], r["partition"], r["offset"], r["key"] and bytes(r["key"]),
                    r["value"] and bytes(r["value"]), millis, r["timestampType"], headers, r["magic"],
                    r["compression"], r["producerId"]))
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def read(spark, path, **options):
    reader = spark.read.format("kafka-log")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def test_schema_starts_with_sparks_kafka_columns(spark, sample):
    plain = read(spark, sample)
    assert [(f.name, f.dataType.simpleString()) for f in plain.schema.fields][:7] == KAFKA_COLUMNS
    with_headers = read(spark, sample, includeHeaders="true").schema
    assert with_headers.fields[7].name == "headers"
    assert with_headers.fields[7].dataType.simpleString() == "array<struct<key:string,value:binary>>"
    assert "headers" not in plain.columns and {"magic", "crcValid", "segment", "position"} <= set(plain.columns)


def test_every_column_equals_the_librarys_decoding(spark, sample):
    """Every record of every magic and codec, every Kafka column and the batch columns."""
    got = spark_rows(read(spark, sample, includeHeaders="true", includeControlRecords="true"))
    want = expected_rows(sample)
    assert len(got) == len(want) > 500
    assert got == want
    assert {r[8] for r in got} == {0, 1, 2} and {r[9] for r in got} == {"none", "gzip", "snappy", "lz4", "zstd"}
    # and as checksums, the way a user would check a migration
    assert sum(zlib.crc32(r[4] or b"") for r in got) == sum(zlib.crc32(r[4] or b"") for r in want)


def test_split_segments_give_the_same_rows(spark, sample):
    whole = read(spark, sample, subscribe="clicks")
    split = read(spark, sample, subscribe="clicks", maxBytesPerPartition="4096")
    assert split.rdd.getNumPartitions() > whole.rdd.getNumPartitions()
    assert split.select("offset", "partition", "value").exceptAll(whole.select("offset", "partition", "value")) \
        .count() == 0
    assert split.count() == whole.count()


def test_offset_options_and_pushdown_equal_a_filtered_full_scan(spark, sample):
    full = read(spark, sample)
    cols = ["topic", "partition", "offset", "value"]
    want = full.where("topic = 'clicks' and partition = 0 and offset >= 120 and offset < 300").select(cols)
    by_options = read(spark, sample, assign='{"clicks": [0]}', startingOffsets='{"clicks": {"0": 120}}',
                      endingOffsets='{"clicks": {"0": 300}}').select(cols)
    assert by_options.count() == 180 and by_options.exceptAll(want).count() == 0
    pushed = read(spark, sample, pushFilters="true")
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        narrowed = pushed.where("topic = 'clicks' and partition = 0 and offset >= 120 and offset < 300")
        assert narrowed.rdd.getNumPartitions() < full.rdd.getNumPartitions()  # segments were skipped
        assert sorted(narrowed.select(cols).collect()) == sorted(want.collect())
        late = pushed.where("timestamp >= timestamp'2020-09-13 12:31:00' and topic = 'clicks'")
        assert late.count() == full.where("timestamp >= timestamp'2020-09-13 12:31:00' and topic = 'clicks'").count()
        # filters without a column of their own (Not holds a filter) are handed back untouched
        negated = "not isControl and not (topic = 'clicks') and partition = 0"
        assert pushed.where(negated).count() == full.where(negated).count() > 0
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")


def test_starting_timestamp_reads_from_the_first_record_at_or_after_it(spark, sample):
    full = read(spark, sample, subscribe="clicks")
    t = 1_600_000_000_000 + 1000 * 200  # within clicks-0; clicks-1 ends before it
    first = full.where(f"partition = 0 and timestamp >= timestamp_millis({t})").agg({"offset": "min"}).first()[0]
    got = read(spark, sample, subscribe="clicks", startingTimestamp=str(t),
               startingOffsetsByTimestampStrategy="latest")
    assert got.where("partition = 1").count() == 0
    assert got.agg({"offset": "min"}).first()[0] == first
    assert got.count() == full.where(f"partition = 0 and offset >= {first}").count()
    with pytest.raises(Exception, match="no record at or after timestamp"):  # Spark's default: error
        read(spark, sample, subscribe="clicks", startingTimestamp=str(t)).count()


def test_read_committed_drops_aborted_and_control_records(spark, sample):
    committed = read(spark, sample, subscribe="payments", isolationLevel="read_committed")
    everything = read(spark, sample, subscribe="payments", includeControlRecords="true")
    default = read(spark, sample, subscribe="payments")  # as Spark's Kafka source: no control records
    assert default.where("isControl").count() == 0 < everything.where("isControl").count()
    assert default.count() == everything.count() - everything.where("isControl").count()
    assert committed.where("isControl").count() == 0
    past = everything.where("offset >= 63").count()  # the transaction open at 63 and after: past the stable offset
    aborted = everything.count() - everything.where("isControl").count() - committed.count() - past
    assert aborted == 10  # the two aborted transactions of the sample: 4 and 6 records
    offsets = {r["offset"] for r in committed.select("offset").collect()}
    assert not offsets & set(range(42, 46)) and not offsets & set(range(56, 62))


def test_read_committed_stops_at_the_last_stable_offset(spark, sample, tmp_path):
    """Nothing at or past the first offset of a transaction still open at the log end: the
    sample's payments-0 stops at producer 3000's open transaction (63), as the library's
    read-committed view does; a copy written back without markers, whose transactions are all
    open, stops at its first (30), its header-only reads too."""
    from kafkacodec.storage.state.transactions import read_committed
    part = logdir.open_partition(sample / "payments-0")
    committed = read(spark, sample, subscribe="payments", isolationLevel="read_committed")
    offsets = sorted(r["offset"] for r in committed.select("offset").collect())
    assert offsets == [r.offset for _, r in read_committed(part)] and max(offsets) < 63
    assert read(spark, sample, subscribe="payments").where("offset >= 63").count() == 5
    read(spark, sample, subscribe="payments").write.format("kafka-log").mode("append").save(str(tmp_path / "copy"))
    copy = read(spark, tmp_path / "copy", isolationLevel="read_committed")
    assert sorted(r["offset"] for r in copy.select("offset").collect()) == list(range(30))
    narrow = spark.read.format("kafka-log").schema("topic string, partition int, offset long") \
        .option("isolationLevel", "read_committed").load(str(tmp_path / "copy"))
    assert sorted(r["offset"] for r in narrow.collect()) == list(range(30))


def test_write_then_read_round_trip(spark, sample, tmp_path):
    source = read(spark, sample, includeHeaders="true", includeControlRecords="true")  # every record, markers too
    out = tmp_path / "copy"
    source.write.format("kafka-log").option("compression", "zstd").mode("overwrite").save(str(out))
    assert not (out / "_temporary").exists()
    for part in logdir.open_log_dir(out).partitions:
        assert all(r.ok for r in verify_partition(part)), part.path
    again = read(spark, out, includeHeaders="true", includeControlRecords="true")
    cols = ["topic", "partition", "offset", "key", "value", "timestamp", "headers", "producerId", "isControl"]
    assert again.select(cols).exceptAll(source.select(cols)).count() == 0
    assert source.select(cols).exceptAll(again.select(cols)).count() == 0
    assert {r["compression"] for r in again.select("compression").distinct().collect()} == {"zstd"}


def test_write_assigns_offsets_when_absent(spark, tmp_path):
    """A DataFrame as it comes, in three tasks, without offsets: the commit numbers its rows from
    0, the tasks in the order of their partition ids, each task's rows in order; the same
    DataFrame written again gets the same offsets."""
    df = spark.range(0, 25, 1, 3).selectExpr("binary(concat('k', id)) as key", "binary(concat('v', id)) as value",
                                             "'t' as topic", "0 as partition")
    assert df.rdd.getNumPartitions() == 3
    for out in ("new", "again"):
        df.write.format("kafka-log").option("recordsPerBatch", "10").mode("append").save(str(tmp_path / out))
    back = read(spark, tmp_path / "new").orderBy("offset").collect()
    assert [(r["offset"], bytes(r["value"])) for r in back] == [(i, b"v%d" % i) for i in range(25)]
    logs = [sorted((tmp_path / out / "t-0").glob("*.log")) for out in ("new", "again")]
    assert [f.read_bytes() for f in logs[0]] == [f.read_bytes() for f in logs[1]]


def test_a_damaged_segment_loses_only_its_damaged_batches(spark, sample, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(sample / "clicks-1", damaged / "clicks-1")
    log = damaged / "clicks-1" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")  # the second batch starts here
    data[second + 40] ^= 0xFF  # inside its CRC-covered header: the CRC no longer matches
    log.write_bytes(bytes(data))
    with pytest.raises(Exception, match="crc"):
        read(spark, damaged, onCorrupt="fail").count()
    whole = read(spark, sample, subscribe="clicks").where("partition = 1")
    skipped = read(spark, damaged, onCorrupt="skip")
    lost = whole.select("offset").exceptAll(skipped.select("offset")).collect()
    assert len(lost) == 5  # the records of that one batch
    report = read(spark, damaged, onCorrupt="report").where("corruption is not null").collect()
    assert len(report) == 1 and report[0]["position"] == second and "crc" in report[0]["corruption"]


def test_segments_table_matches_verify(spark, sample):
    rows = {(r["topic"], r["partition"], r["baseOffset"]): r
            for r in spark.read.format("kafka-log-segments").load(str(sample)).collect()}
    for part in logdir.open_log_dir(sample).partitions:
        for report in verify_partition(part):
            r = rows[(part.topic, part.partition, report.segment.base_offset)]
            assert r["batches"] == report.batches and r["validBytes"] == report.valid_bytes
            assert r["indexProblems"] is None and r["firstError"] is None
    payments = [r for k, r in rows.items() if k[0] == "payments"]
    assert sum(r["abortedTransactions"] for r in payments) == 2
    assert sum(r["records"] for r in rows.values()) == len(expected_rows(sample))


def test_export_command_writes_parquet_and_summarises(sample, tmp_path):
    """The command a user runs: its own local session, a Parquet table, a summary."""
    import subprocess

    import pyarrow.parquet as pq
    out = tmp_path / "table"
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "export", str(sample), str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    table = pq.read_table(out)
    assert table.num_rows == len(expected_rows(sample))
    assert set(table.column_names) >= {"key", "value", "topic", "partition", "offset", "headers", "corruption"}
    assert "aborted transactions: 2" in run.stdout and "payments" in run.stdout
    assert f"read by the {'jvm' if shutil.which('javac') else 'python'} reader" in run.stdout
    for piece in out.glob("*.parquet"):  # timestamps as INT64 micros, with the statistics to skip by time
        meta = pq.ParquetFile(piece).metadata
        column = meta.schema.column(meta.schema.names.index("timestamp"))
        assert column.physical_type == "INT64" and "timeUnit=microseconds" in str(column.logical_type)
        stats = meta.row_group(0).column(meta.schema.names.index("timestamp")).statistics
        assert stats is not None and stats.has_min_max
    again = subprocess.run([sys.executable, "-m", "kafkacodec", "export", str(sample), str(out)],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 1 and "error:" in again.stderr  # an existing table is kept unless --force
    by_python = subprocess.run([sys.executable, "-m", "kafkacodec", "export", "--reader", "python", str(sample),
                                str(tmp_path / "again")], capture_output=True, text=True, timeout=600)
    assert by_python.returncode == 0 and "read by the python reader" in by_python.stdout
    assert pq.read_table(tmp_path / "again").num_rows == table.num_rows


def test_reads_a_log_dir_in_an_s3_bucket(spark, sample):
    """An S3-compatible server (moto's, on 127.0.0.1) holding the sample: the same rows as local."""
    import boto3
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        s3 = boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1")
        s3.create_bucket(Bucket="retained")
        for f in sample.rglob("*"):
            if f.is_file():
                s3.upload_file(str(f), "retained", f"kafka/{f.relative_to(sample).as_posix()}")
        uri = f"s3://retained/kafka?endpoint_override={host}:{port}&scheme=http&region=us-east-1"
        remote = spark_rows(read(spark, uri, includeHeaders="true"))
        assert remote == expected_rows(sample, control=False)
        # kafkacodec's read() passes such a path to the Python source: pyarrow's options mean nothing to Hadoop
        through_read = read_log(spark, uri, includeHeaders=True)
        assert reader_of(through_read) == "python" and spark_rows(through_read) == remote
        one = read(spark, uri.replace("/kafka?", "/kafka/payments-0/00000000000000000034.log?"))
        from kafkacodec.storage.segments.reader import partition_batches
        data = [r for seg, b in partition_batches(logdir.open_partition(sample / "payments-0"))
                if seg.base_offset == 34 and (b.is_legacy or not b.entry.is_control) for r in b]
        assert one.count() == len(data) > 0  # the segment's records, its markers left out
    finally:
        server.stop()


def test_consumer_offsets_table_with_lag(spark, sample):
    parts = {(p.topic, p.partition): p for p in logdir.open_log_dir(sample).partitions}
    want = partition_committed_offsets(parts[("__consumer_offsets", 0)])
    rows = spark.read.format("kafka-consumer-offsets").load(str(sample)).collect()
    assert {(r["group"], r["topic"], r["partition"]): r["offset"] for r in rows} == \
        {k: c.offset for k, c in want.items()}
    for r in rows:
        end = max(rec.offset for _, rec in partition_records(parts[(r["topic"], r["partition"])])) + 1
        assert (r["logEndOffset"], r["lag"]) == (end, end - r["offset"])


def latest_by_library(root, read_committed=True):
    from kafkacodec.storage.state.latest import latest_values
    return {(p.topic, p.partition, k): (v.offset, v.timestamp, v.value, [tuple(h) for h in v.headers])
            for p in logdir.open_log_dir(root).partitions for k, v in latest_values(p, read_committed).items()}


def latest_by_spark(spark, root, out, read_committed=True):
    from kafkacodec.pipeline.latest import compact_table
    topics = compact_table(spark, str(root), str(out), read_committed=read_committed)
    rows = spark.read.parquet(str(out)).collect()
    got = {(r["topic"], r["partition"], bytes(r["key"])): (
        r["offset"], -1 if r["timestamp"] is None else int(r["timestamp"].timestamp() * 1000), bytes(r["value"]),
        [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in r["headers"] or []])
        for r in rows}
    assert sum(k for _, _, k in topics) == len(rows)
    return got


@pytest.mark.parametrize("read_committed", [True, False], ids=["read_committed", "read_uncommitted"])
def test_latest_value_per_key_equals_the_librarys_on_the_sample(spark, sample, tmp_path, read_committed):
    want = latest_by_library(sample, read_committed)
    assert want and latest_by_spark(spark, sample, tmp_path / "latest", read_committed) == want


def test_latest_value_per_key_of_a_million_records(spark, tmp_path):
    """Keys overwritten across segments, tombstones, an aborted transaction, headers: the Spark
    job and the library agree on every key of a log of 1,000,000 records."""
    from kafkacodec.storage.change.writer import PartitionWriter
    root = tmp_path / "logs"
    per_batch = 1000
    for p in range(2):
        with PartitionWriter(root / f"changelog-{p}", segment_bytes=16 << 20) as w:
            for b in range(500):
                recs = [{"key": b"key-%d" % ((b * per_batch + i) * 7919 % 40_000),
                         "value": None if (b * per_batch + i) % 97 == 0 else b"v%d" % (b * per_batch + i),
                         "timestamp": 1_700_000_000_000 + b * per_batch + i,
                         "headers": [("n", b"%d" % i)] if i % 5 == 0 else []} for i in range(per_batch)]
                if b == 250:  # an aborted transaction overwriting a thousand keys, then its marker
                    w.append(recs, compression="lz4", producer_id=7, producer_epoch=0, base_sequence=0,
                             is_transactional=True)
                    w.append([{"key": b"\x00\x00\x00\x00", "value": b"\x00\x00\x00\x00\x00\x00",
                               "timestamp": 1_700_000_000_000}], producer_id=7, producer_epoch=0,
                             is_transactional=True, is_control=True)
                else:
                    w.append(recs, compression="lz4")
    want = latest_by_library(root)
    assert len(want) > 70_000
    assert latest_by_spark(spark, root, tmp_path / "latest") == want


def test_reads_with_nothing_to_read_give_no_rows(spark, sample, tmp_path):
    """An empty plan (pyspark then hands the reader one partition holding None) is no rows, in
    every reader: a topic absent, a start past the end, an empty dir, no __consumer_offsets."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert read(spark, sample).where("topic = 'nope'").count() == 0
    assert read(spark, sample, startingTimestamp=str(2 ** 62), startingOffsetsByTimestampStrategy="latest").count() == 0
    assert read(spark, empty).count() == 0
    assert spark.read.format("kafka-log-segments").load(str(empty)).count() == 0
    assert spark.read.format("kafka-consumer-offsets").load(str(empty)).count() == 0
    without = tmp_path / "without-offsets"
    shutil.copytree(sample, without)
    shutil.rmtree(without / "__consumer_offsets-0")
    assert spark.read.format("kafka-consumer-offsets").load(str(without)).collect() == []


def test_export_of_a_log_dir_without_consumer_offsets(sample, tmp_path):
    """The usual investigation copy holds no __consumer_offsets: export still succeeds."""
    import subprocess

    import pyarrow.parquet as pq
    copy = tmp_path / "copy"
    shutil.copytree(sample, copy)
    shutil.rmtree(copy / "__consumer_offsets-0")
    out = tmp_path / "table"
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "export", str(copy), str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert pq.read_table(out).num_rows == len(expected_rows(sample)) - sum(
        1 for row in expected_rows(sample) if row[0] == "__consumer_offsets")


def test_register_says_how_to_fix_workers_that_cannot_import_the_package(tmp_path):
    """A user's own script, with Spark's workers on a Python without kafkacodec (the system's):
    register() fails at once with the fix, not at the first read with a worker traceback."""
    import subprocess
    other = shutil.which("python3", path="/usr/bin:/bin")
    if other is None or subprocess.run([other, "-c", "import kafkacodec.pipeline.decode"], capture_output=True,
                                       cwd=tmp_path).returncode == 0:
        pytest.skip("no Python without kafkacodec on this machine")
    script = tmp_path / "job.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "from kafkacodec.pipeline import WorkersCannotImport, register\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "try:\n"
        "    register(spark)\n"
        "except WorkersCannotImport as err:\n"
        "    print(err)\n"
        "spark.stop()\n")
    env = {**os.environ, "PYSPARK_PYTHON": other, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600,
                         cwd=tmp_path)
    assert f"Spark's Python workers run {other}, which cannot import kafkacodec (" in run.stdout, \
        run.stdout + run.stderr[-2000:]
    assert f"set PYSPARK_PYTHON={sys.executable} (this interpreter" in run.stdout


def test_a_narrower_schema_reads_batch_headers_alone_and_counts_the_same(spark, sample):
    """Spark's Python data sources prune no columns; a schema the user gives does: without key,
    value, headers and timestamp, rows come from batch headers, and agree with a full read."""
    full = spark.read.format("kafka-log").load(str(sample))
    narrow = spark.read.format("kafka-log").schema("offset long, topic string, partition int, isControl boolean") \
        .load(str(sample))
    assert narrow.columns == ["offset", "topic", "partition", "isControl"]
    assert narrow.count() == full.count() == len(expected_rows(sample, control=False))
    assert sorted(narrow.collect()) == sorted(full.select("offset", "topic", "partition", "isControl").collect())
    with_value = spark.read.format("kafka-log").schema("value binary, offset long").load(str(sample))
    key = (lambda r: (r.offset, r.value or b""))
    assert sorted(with_value.collect(), key=key) == sorted(full.select("value", "offset").collect(), key=key)
    for ddl, message in (("offset int", "kafka-log's is long"), ("nope string", "not a column of kafka-log")):
        with pytest.raises(Exception, match=message):
            spark.read.format("kafka-log").schema(ddl).load(str(sample)).collect()


def test_a_partition_written_by_many_tasks_gets_the_segments_one_writer_gives(spark, tmp_path):
    """Eight tasks write one partition: the commit joins their segments up to segmentBytes, with
    indexes as Kafka's recovery rebuilds them, and the records read back in order."""
    from kafkacodec.storage.indexes.index import iter_offset_index, rebuild
    from kafkacodec.storage.segments.scan import scan_file
    rows = [(b"k%d" % i, b"v" * 200, "t", 0, i) for i in range(4000)]
    df = spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long") \
        .repartitionByRange(8, "offset")
    for segment_bytes, expected in ((10 << 20, 1), (300_000, None)):
        out = tmp_path / str(segment_bytes)
        df.write.format("kafka-log").option("segmentBytes", str(segment_bytes)).option("recordsPerBatch", "50") \
            .mode("append").save(str(out))
        part = logdir.open_partition(out / "t-0")
        sizes = [s.log.stat().st_size for s in part.segments]
        assert all(size <= segment_bytes for size in sizes) and (expected is None or len(sizes) == expected)
        assert len(sizes) < 8 or segment_bytes < sum(sizes) / 8  # joined, not one per task
        for seg in part.segments:
            want, _ = rebuild(scan_file(seg.log).batches, seg.base_offset)
            assert list(iter_offset_index(seg.index, seg.base_offset, 1 << 20)) == want
        assert [r.offset for _, r in partition_records(part)] == list(range(4000))
        assert all(r.ok for r in verify_partition(part))


def test_export_of_timestamps_spark_cannot_hold(spark, tmp_path):
    """A partition whose largest timestamp is 2^62 (valid bytes; librdkafka's and kafka-python's
    edge cases write them): export writes every row, the timestamp NULL where Spark can hold no
    such time, and the segments table it summarises from says NULL too (it failed the export)."""
    import datetime as dt

    import pyarrow.parquet as pq

    from kafkacodec.pipeline.export import export
    from kafkacodec.storage.change.writer import PartitionWriter
    root, out = tmp_path / "logs", tmp_path / "table"
    with PartitionWriter(root / "far-0") as w:
        w.append([{"key": b"a", "value": b"now", "timestamp": 1_700_000_000_000},
                  {"key": b"b", "value": b"far", "timestamp": 2 ** 62}])
    summary = export(spark, str(root), str(out))
    assert summary.topics == [("far", 1, 2, (root / "far-0" / "00000000000000000000.log").stat().st_size)]
    rows = {r["value"]: r["timestamp"] for r in pq.read_table(out).to_pylist()}
    assert rows == {b"now": dt.datetime.fromtimestamp(1_700_000_000, dt.timezone.utc), b"far": None}
    (segment,) = spark.read.format("kafka-log-segments").load(str(root)).collect()
    assert segment["maxTimestamp"] is None and segment["records"] == 2


def test_a_subscription_of_topics_not_found_warns_the_driver(spark, sample):
    """subscribe("a|b") reads no rows: the planner, a Python process Spark starts on the driver,
    logs a warning naming what was not found, which Spark shows on the driver's console and, with
    its worker logging on, in python_worker_logs()."""
    conf = "spark.sql.pyspark.worker.logging.enabled"
    spark.conf.set(conf, "true")
    try:
        assert read(spark, sample, subscribe="a|b").count() == 0
        logs = spark.tvf.python_worker_logs().where("logger = 'kafkacodec.pipeline'").collect()
    finally:
        spark.conf.unset(conf)
    # the session's worker logs hold other tests' warnings too
    assert {(r["level"], r["msg"]) for r in logs if "subscribe names" in r["msg"]} == {
        ("WARNING", f"kafka-log: subscribe names topics with no partition under {sample}: 'a|b' (subscribe takes "
                    "topic names separated by commas; subscribePattern takes a regular expression)")}


def test_a_users_script_shows_the_warning_on_its_console(sample, tmp_path):
    """What a user's own pyspark script prints: the warning, on stderr, beside the empty count."""
    import subprocess
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "from kafkacodec.pipeline import register\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "register(spark, check=False)\n"
        "print('rows:', spark.read.format('kafka-log').option('subscribe', 'orders').load(sys.argv[1]).count())\n"
        "spark.stop()\n")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, str(script), str(sample)], capture_output=True, text=True, env=env,
                         timeout=600, cwd=tmp_path)
    assert run.returncode == 0 and "rows: 0" in run.stdout, run.stderr[-2000:]
    assert f"kafka-log: subscribe names topics with no partition under {sample}: 'orders'\n" in run.stderr


def test_a_copy_without_markers_warns_the_driver_of_the_transactions_left_open(spark, sample, tmp_path):
    """A read_committed read written back (the README's copy) holds no transaction marker: its
    transactions are open in the copy, read_committed consumers of it stop before the first, and
    the job's commit, run on the driver, says so in python_worker_logs() (and on its console), as
    the read's planning says where it stopped."""
    conf = "spark.sql.pyspark.worker.logging.enabled"
    spark.conf.set(conf, "true")
    try:
        read(spark, sample, subscribe="payments", isolationLevel="read_committed").repartition(
            2, "topic", "partition").write.format("kafka-log").mode("append").save(str(tmp_path / "copy"))
        logs = spark.tvf.python_worker_logs().where("logger = 'kafkacodec.pipeline'").collect()
    finally:
        spark.conf.unset(conf)
    # the session's worker logs hold other tests' warnings too: this read's and this write's name payments-0
    assert {(r["level"], r["msg"]) for r in logs if "payments-0" in r["msg"]} == {
        ("WARNING", "kafka-log: isolationLevel=read_committed reads nothing at or past a partition's last stable "
                    "offset, the first offset of its earliest transaction with no COMMIT or ABORT marker yet, as "
                    "Kafka's read_committed consumers do: payments-0 stops at 63, short of its log end 68 (open "
                    "transaction: producer 3000's from offset 63)"),
        ("WARNING", "kafka-log: payments-0: the rows written leave the transactions of producer 2000 from offset 30 "
                    "and of producer 3000 from offset 39 without a marker, so read_committed consumers stop before "
                    "offset 30; a kafka-log read gives them only with includeControlRecords=true")}
