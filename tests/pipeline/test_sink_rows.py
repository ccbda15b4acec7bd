"""The kafka-log writer's task, without Spark: Arrow batches as Spark hands them in, segments out,
checked byte for byte against the same rows appended one batch at a time through PartitionWriter
in the order the writer promises (per topic-partition, by offset, a batch wherever the source
batch changes or recordsPerBatch fills)."""
import random
from pathlib import Path

import pyarrow as pa
import pytest

from kafkacodec.pipeline.plan import parse_options
from kafkacodec.pipeline.sink import KafkaLogWriter
from kafkacodec.pipeline.source import KafkaLogReader
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.change.lock import LOCK_NAME
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter


class Schema:
    def __init__(self, names):
        self.names = list(names)

    def fieldNames(self):
        return self.names


def rows_of(path: Path) -> pa.Table:
    reader = KafkaLogReader(parse_options({"path": str(path), "includeheaders": "true",
                                           "includecontrolrecords": "true"}))
    return pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])


def write(table: pa.Table, out: Path, batch_rows: int = 37, **options) -> None:
    writer = KafkaLogWriter({"path": str(out), **options}, Schema(table.column_names), overwrite=False)
    messages = [writer.write(iter(table.to_batches(batch_rows)))]
    writer.commit(messages)


def reference(table: pa.Table, out: Path, records_per_batch: int, compression: str, **writer_options) -> None:
    """The rows one at a time, as a writer of rows would take them."""
    rows = [r for r in table.to_pylist() if not r.get("corruption")]
    for topic, partition in sorted({(r["topic"], r["partition"]) for r in rows}):
        mine = sorted((r for r in rows if (r["topic"], r["partition"]) == (topic, partition)),
                      key=lambda r: r["offset"])
        chunks: list[list[dict]] = []
        for r in mine:
            source = (r["segment"], r["position"])
            if not chunks or len(chunks[-1]) >= records_per_batch or \
                    (chunks[-1][0]["segment"], chunks[-1][0]["position"]) != source:
                chunks.append([])
            chunks[-1].append(r)
        with PartitionWriter(out / f"{topic}-{partition}", start_offset=mine[0]["offset"], **writer_options) as w:
            for chunk in chunks:
                first = chunk[0]
                options = {"compression": compression}
                if first["producerId"] >= 0:
                    options.update(producer_id=first["producerId"], producer_epoch=first["producerEpoch"],
                                   base_sequence=first["sequence"], is_transactional=first["isTransactional"])
                if first["isControl"]:
                    options["is_control"] = True
                if first["timestampType"] == 1:
                    options["timestamp_type"] = "LogAppendTime"
                w.append([{"key": r["key"], "value": r["value"], "offset": r["offset"],
                           "timestamp": -1 if r["timestamp"] is None else int(r["timestamp"].timestamp() * 1000),
                           "headers": [(h["key"], h["value"]) for h in r["headers"] or []]} for r in chunk],
                         **options)


def files(root: Path) -> dict:
    """Every file but the log dir's lock, which the commit takes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != LOCK_NAME}


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_shuffled_rows_of_the_sample_give_the_segments_a_row_writer_gives(sample, tmp_path, compression):
    table = rows_of(sample)
    order = list(range(table.num_rows))
    random.Random(7).shuffle(order)
    shuffled = table.take(pa.array(order))
    write(shuffled, tmp_path / "columns", compression=compression, recordsPerBatch="5")
    reference(table, tmp_path / "rows", 5, compression)
    assert files(tmp_path / "columns") == files(tmp_path / "rows")
    back = logdir.open_log_dir(tmp_path / "columns")
    assert all(r.ok for part in back.partitions for r in verify_partition(part))
    for part in logdir.open_log_dir(sample).partitions:
        copy = logdir.open_partition(tmp_path / "columns" / part.path.name)
        want = [(r.offset, r.key, r.value, r.timestamp, list(r.headers)) for _, r in partition_records(part)]
        got = [(r.offset, r.key, r.value, r.timestamp, list(r.headers)) for _, r in partition_records(copy)]
        assert got == want, part.path.name


def test_rows_without_offsets_are_numbered_in_the_order_they_come(tmp_path):
    n = 23
    table = pa.table({"key": [b"k%d" % i for i in range(n)], "value": [b"v%d" % i for i in range(n)],
                      "topic": ["t"] * n, "partition": pa.array([3] * n, pa.int32()),
                      "offset": pa.array([None] * n, pa.int64())})
    write(table, tmp_path / "out", batch_rows=4, recordsPerBatch="10")
    part = logdir.open_partition(tmp_path / "out" / "t-3")
    got = [(r.offset, r.value, r.timestamp) for _, r in partition_records(part)]
    assert got == [(i, b"v%d" % i, -1) for i in range(n)]
    assert [s.base_offset for s in part.segments] == [0]


def test_timestamps_nulls_and_damaged_rows(tmp_path):
    micros = [-1_500, None, 1_700_000_000_123_999, 0]
    table = pa.table({"value": [b"a", b"b", b"c", None], "topic": ["t"] * 4, "partition": [0] * 4,
                      "offset": [0, 1, 2, 3], "timestamp": pa.array(micros, pa.timestamp("us", tz="UTC")),
                      "corruption": [None, None, None, "a damaged batch"]})
    write(table, tmp_path / "out")
    got = [(r.offset, r.value, r.timestamp) for _, r in partition_records(logdir.open_partition(tmp_path / "out/t-0"))]
    # milliseconds floored, as Spark's unix_millis; no timestamp is -1; the report row holds no record
    assert got == [(0, b"a", -2), (1, b"b", -1), (2, b"c", 1_700_000_000_123)]
    as_longs = table.drop_columns(["timestamp"]).append_column("timestamp", pa.array([5, None, 7, 8], pa.int64()))
    write(as_longs, tmp_path / "longs")
    got = [r.timestamp for _, r in partition_records(logdir.open_partition(tmp_path / "longs/t-0"))]
    assert got == [5, -1, 7]


@pytest.mark.parametrize("topic,partition,message", [
    ("t", None, "a row has no partition"), ("../../escape", 0, "not a topic name Kafka accepts"),
    ("a/b", 0, "not a topic name Kafka accepts"), ("..", 0, "not a topic name"), ("x" * 250, 0, "not a topic name"),
    ("t", -1, "partition -1 of 't' is outside 0 to 2147483647")])
def test_rows_that_name_no_partition_directory_kafka_would_make_are_refused(tmp_path, topic, partition, message):
    table = pa.table({"value": [b"a", b"b"], "topic": ["t", topic],
                      "partition": pa.array([0, partition], pa.int64())})
    with pytest.raises(ValueError, match=message):
        write(table, tmp_path / "logs" / "out")
    assert [p.name for p in tmp_path.rglob("*") if p.name.endswith(("-0", "-1"))] == []


def test_jobs_writing_one_log_dir_commit_in_turn(tmp_path):
    """A commit waits for the log dir's lock (another job's commit, or a command) and then
    publishes; a job's temporary folder goes with it and leaves another job's alone."""
    import threading

    from kafkacodec.storage.change.lock import holding

    root = tmp_path / "out"
    tables = {name: pa.table({"value": [b"%s-%d" % (name.encode(), i) for i in range(30)], "topic": [name] * 30,
                              "partition": pa.array([0] * 30, pa.int32())}) for name in ("a", "b")}
    writers = {name: KafkaLogWriter({"path": str(root)}, Schema(t.column_names), overwrite=False)
               for name, t in tables.items()}
    messages = {name: [writers[name].write(iter(t.to_batches()))] for name, t in tables.items()}
    root.mkdir(exist_ok=True)
    with holding(root, "another job"):
        waiting = threading.Thread(target=writers["a"].commit, args=(messages["a"],))
        waiting.start()
        waiting.join(1.0)
        assert waiting.is_alive() and not (root / "a-0").exists()  # waits for the lock
    waiting.join(30)
    assert not waiting.is_alive()
    assert (root / "_temporary" / writers["b"].job).is_dir()  # the other job's tasks are kept
    writers["b"].commit(messages["b"])
    for name in ("a", "b"):
        got = [r.value for _, r in partition_records(logdir.open_partition(root / f"{name}-0"))]
        assert got == tables[name]["value"].to_pylist()
    assert not (root / "_temporary").exists()


HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


@pytest.mark.parametrize("columns,message", [
    ({"offset": pa.array([0, 1, 1, 2], pa.int64())}, "t-0: offset 1 is given to more than one row"),
    ({"headers": pa.array([[None], [], [], []], HEADERS)}, "t-0: a row has a null header"),
    ({"value": pa.array([1, 2, 3, 4], pa.int32())}, "the value column is int32: give binary or string")])
def test_rows_a_batch_cannot_hold_are_refused_before_anything_is_written(tmp_path, columns, message):
    table = pa.table({"value": [b"a", b"b", b"c", b"d"], "topic": ["t"] * 4, "partition": [0] * 4})
    for name, column in columns.items():
        table = table.drop_columns([name]) if name in table.column_names else table
        table = table.append_column(name, column)
    with pytest.raises(ValueError, match=message):
        write(table, tmp_path / "out")
    assert not (tmp_path / "out" / "t-0").exists()


def test_strings_dictionaries_and_timestamp_units_are_taken_as_spark_would_give_them(tmp_path):
    """String keys and values as their UTF-8 bytes (as Spark's Kafka sink takes them), dictionary
    topics as their values, timestamps of any unit floored to milliseconds."""
    units = {"s": [-1, 2], "ms": [None, 2 ** 62], "ns": [-1, 5_999_999]}
    for unit, stamps in units.items():
        table = pa.table({"key": pa.array(["ké", None]), "value": pa.array(["v", "w"], pa.large_string()),
                          "topic": pa.array(["t", "t"]).dictionary_encode(), "partition": [0, 0],
                          "timestamp": pa.array(stamps, pa.timestamp(unit))})
        write(table, tmp_path / unit)
        part = logdir.open_partition(tmp_path / unit / "t-0")
        got = [(r.key, r.value, r.timestamp) for _, r in partition_records(part)]
        millis = {"s": [-1000, 2000], "ms": [-1, 2 ** 62], "ns": [-1, 5]}[unit]
        assert got == [("ké".encode(), b"v", millis[0]), (None, b"w", millis[1])], unit


def task_rows(task: int, n: int, transaction: str | None = None) -> pa.Table:
    """`n` rows of t-0 without offsets, in batches of 25 (a batch per `position`); `transaction`:
    'open' makes them a transaction of producer 7, 'abort' adds its ABORT marker after them."""
    values = [b"task %d row %d " % (task, i) + b"." * 90 for i in range(n)]
    control = [False] * n
    keys = [b"k%d" % i for i in range(n)]
    if transaction == "abort":
        values, keys, control = values + [b"\x00\x00\x00\x00\x00\x00"], keys + [b"\x00\x00\x00\x00"], control + [True]
    m = len(values)
    producer = transaction is not None
    return pa.table({
        "key": keys, "value": values, "topic": ["t"] * m, "partition": pa.array([0] * m, pa.int32()),
        "timestamp": pa.array([1_700_000_000_000_000 + 1000 * (task * 1000 + i) for i in range(m)],
                              pa.timestamp("us", tz="UTC")),
        "timestampType": pa.array([0] * m, pa.int32()),
        "headers": pa.array([[{"key": "task", "value": b"%d" % task}]] * m, HEADERS),
        "producerId": pa.array([7 if producer else -1] * m, pa.int64()),
        "producerEpoch": pa.array([0 if producer else -1] * m, pa.int32()),
        "sequence": pa.array([(task * 1000 + i // 25 * 25) if producer and not c else -1
                              for i, c in zip(range(m), control)], pa.int32()),
        "isTransactional": [producer] * m, "isControl": control,
        "segment": ["task %d" % task] * m, "position": pa.array([i // 25 + (i >= n) for i in range(m)], pa.int64())})


@pytest.mark.parametrize("segment_bytes", [1 << 30, 30_000])
def test_rows_without_offsets_from_several_tasks_are_numbered_in_task_order(tmp_path, segment_bytes):
    """Three tasks write one partition without offsets, their commit messages in any order: the
    commit numbers the rows from 0, task by task in the order of their ids (Spark's partition
    ids) and each task's rows in the order they came, and the partition is byte for byte what one
    writer gives the same rows in that order: segments, indexes, and the producer state that the
    tasks could not know alone (a transaction opened by one task and aborted by the next, in the
    .txnindex and the snapshots)."""
    tables = {2: task_rows(2, 60), 0: task_rows(0, 110, "open"), 1: task_rows(1, 80, "abort")}
    writer = KafkaLogWriter({"path": str(tmp_path / "out"), "segmentBytes": str(segment_bytes)},
                            Schema(tables[0].column_names), overwrite=False)
    messages = []
    for task, table in tables.items():  # tasks finish in any order
        messages.append(writer.write(iter(table.to_batches(33))))
        messages[-1].task = task
    writer.commit(messages[::-1])
    in_order = pa.concat_tables([tables[task] for task in sorted(tables)])
    in_order = in_order.append_column("offset", pa.array(range(in_order.num_rows), pa.int64()))
    reference(in_order, tmp_path / "one-writer", 1000, "none", segment_bytes=segment_bytes)
    part, one = (logdir.open_partition(tmp_path / d / "t-0") for d in ("out", "one-writer"))
    assert (len(part.segments) > 1) == (segment_bytes < 1 << 30)
    if len(part.segments) == 1:
        assert files(tmp_path / "out") == files(tmp_path / "one-writer")
    else:  # the tasks' segments, joined while they fit, end elsewhere than one writer's rolls
        def joined(p, kind):
            return b"".join(getattr(s, kind).read_bytes() for s in p.segments if getattr(s, kind) is not None)
        assert joined(part, "log") == joined(one, "log") and joined(part, "txn_index") == joined(one, "txn_index")
        last = max(part.snapshots)
        assert last == max(one.snapshots) and part.snapshots[last].read_bytes() == one.snapshots[last].read_bytes()
    assert [(r.offset, r.value) for _, r in partition_records(part)] == \
        list(enumerate(in_order["value"].to_pylist()))
    assert all(r.ok for r in verify_partition(part))
    assert any(seg.txn_index for seg in part.segments)  # the abort of task 0's transaction, by task 1's marker


def test_rows_with_offsets_from_some_tasks_and_without_from_others_are_refused(tmp_path):
    with_offsets = task_rows(0, 10).append_column("offset", pa.array(range(10), pa.int64()))
    writer = KafkaLogWriter({"path": str(tmp_path / "out")}, Schema(with_offsets.column_names), overwrite=False)
    messages = [writer.write(iter(with_offsets.to_batches())), writer.write(iter(task_rows(1, 10).to_batches()))]
    with pytest.raises(ValueError, match="t-0: the rows of 1 of its 2 tasks had no offsets and the others' had: "
                                         "give every row an offset, or none"):
        writer.commit(messages)
    assert not (tmp_path / "out" / "t-0").exists() and not (tmp_path / "out" / "_temporary").exists()


@pytest.mark.parametrize("segment_bytes", [1 << 30, 30_000])
def test_a_transaction_aborted_by_another_task_of_rows_with_offsets_keeps_its_txnindex_entry(tmp_path, segment_bytes):
    """Two tasks write one partition with the offsets the rows hold: a transaction opened by the
    first is aborted by the second's marker. Neither task alone knows where the transaction began,
    so the commit replays the producer state of the gathered partition: its .txnindex and snapshots
    are what one writer of the same rows gives, and verify finds nothing wrong."""
    first, second = task_rows(0, 110, "open"), task_rows(1, 80, "abort")
    first = first.append_column("offset", pa.array(range(100, 210), pa.int64()))
    second = second.append_column("offset", pa.array(range(210, 210 + second.num_rows), pa.int64()))
    writer = KafkaLogWriter({"path": str(tmp_path / "out"), "segmentBytes": str(segment_bytes)},
                            Schema(first.column_names), overwrite=False)
    messages = [writer.write(iter(first.to_batches(33))), writer.write(iter(second.to_batches(33)))]
    messages[0].task, messages[1].task = 0, 1
    writer.commit(messages[::-1])
    reference(pa.concat_tables([first, second]), tmp_path / "one-writer", 1000, "none", segment_bytes=segment_bytes)
    part, one = (logdir.open_partition(tmp_path / d / "t-0") for d in ("out", "one-writer"))

    def joined(p, kind):
        return b"".join(getattr(s, kind).read_bytes() for s in p.segments if getattr(s, kind) is not None)
    assert joined(part, "log") == joined(one, "log")
    assert joined(part, "txn_index") == joined(one, "txn_index") != b""
    last = max(part.snapshots)
    assert last == max(one.snapshots) and part.snapshots[last].read_bytes() == one.snapshots[last].read_bytes()
    assert [r.problems for r in verify_partition(part) if not r.ok] == []


def test_rows_of_one_task_with_offsets_and_without_are_refused(tmp_path):
    """Offsets a user gave are never dropped without a word: a partition's rows some of which hold
    an offset and some none are refused, naming the partition and how many lack one (they were
    numbered from 0 with the given offsets ignored)."""
    table = task_rows(0, 10).append_column("offset", pa.array([5, 6, None, 8, 9, 10, 11, None, 13, 14], pa.int64()))
    with pytest.raises(ValueError, match=r"t-0: 2 of its 10 rows have no offset: give every row an offset, or none"):
        write(table, tmp_path / "out")
    assert not (tmp_path / "out" / "t-0").exists()


def test_a_copy_of_a_read_without_markers_warns_of_the_transactions_it_leaves_open(sample, tmp_path, caplog):
    """A kafka-log read leaves transaction markers out unless includeControlRecords=true: its rows
    written back make every transaction open (read_committed consumers of the copy stop before
    the first). The commit says so for each producer whose transaction the rows leave without a
    marker, and says nothing of a copy with its markers but the transaction the log left open."""
    def read(**options):
        reader = KafkaLogReader(parse_options({"path": str(sample / "payments-0"), "includeheaders": "true",
                                               **options}))
        return pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])
    marker = "a kafka-log read gives them only with includeControlRecords=true"
    with caplog.at_level("WARNING", logger="kafkacodec.pipeline"):
        write(read(), tmp_path / "without")
    warned = [r.getMessage() for r in caplog.records if r.name == "kafkacodec.pipeline"]
    assert warned == [f"kafka-log: payments-0: the rows written leave the transactions of producer 2000 from "
                      f"offset 30 and of producer 3000 from offset 39 without a marker, so read_committed "
                      f"consumers stop before offset 30; {marker}"]
    caplog.clear()
    with caplog.at_level("WARNING", logger="kafkacodec.pipeline"):
        write(read(includecontrolrecords="true"), tmp_path / "with")
    warned = [r.getMessage() for r in caplog.records if r.name == "kafkacodec.pipeline"]
    assert warned == [f"kafka-log: payments-0: the rows written leave the transaction of producer 3000 from "
                      f"offset 63 without a marker, so read_committed consumers stop before offset 63; {marker}"]


def test_offsets_of_several_tasks_that_interleave_are_refused_saying_how_to_write_them(tmp_path):
    """df.repartition(n) of rows read with their offsets deals them round robin: every task holds
    offsets between another's. The commit joins each task's segments whole, so it refuses them,
    once for the partition however many tasks, saying which ranges overlap and what to do (it said
    'two tasks wrote overlapping offsets' for every pair, as if rows had repeated offsets)."""
    rows = task_rows(0, 30).append_column("offset", pa.array(range(30), pa.int64()))
    writer = KafkaLogWriter({"path": str(tmp_path / "out")}, Schema(rows.column_names), overwrite=False)
    messages = [writer.write(iter(rows.take(list(range(task, 30, 3))).to_batches())) for task in range(3)]
    with pytest.raises(ValueError) as refused:
        writer.commit(messages)
    assert str(refused.value) == (
        "kafka-log: t-0: the offsets that 3 tasks wrote overlap (0 to 27 and 1 to 28 of two of them): a partition's "
        "rows from several tasks are joined a task at a time, so each task must hold offsets after the previous "
        "one's; repartition by topic and partition, or order by topic, partition and offset, before writing")
    assert not (tmp_path / "out" / "t-0").exists() and not (tmp_path / "out" / "_temporary").exists()
