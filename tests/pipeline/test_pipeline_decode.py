"""The pipeline's planning and Arrow decoding without Spark: slices of the sample decode to the
library's records, whatever the batch and split sizes."""
import pytest

from kafkacodec.pipeline.columns import arrow_schema
from kafkacodec.pipeline.decode import ReadOptions, decode_slice
from kafkacodec.pipeline.files import read_range
from kafkacodec.pipeline.plan import OptionError, parse_options, slices
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records


def decoded(plan, max_bytes=None, rows_per_batch=None):
    work, _ = slices(plan, max_bytes)
    rows = []
    for s in work:
        if rows_per_batch:
            s = s.__class__(**{**s.__dict__, "options": ReadOptions(**{**s.options.__dict__,
                                                                          "rows_per_batch": rows_per_batch})})
        for batch in decode_slice(read_range(s.uri, s.path, s.start_pos, s.end_pos), s, base_pos=s.start_pos):
            assert batch.schema == arrow_schema(s.options.include_headers)
            assert batch.num_rows < (rows_per_batch or ReadOptions().rows_per_batch) + 50  # flushed between Kafka batches
            d = batch.to_pydict()
            rows += list(zip(d["topic"], d["partition"], d["offset"], d["key"], d["value"]))
    return sorted(rows), len(work)


def test_any_batch_and_split_size_gives_every_record_once(sample):
    want = sorted((p.topic, p.partition, r.offset, r.key, r.value)
                  for p in logdir.open_log_dir(sample).partitions for _, r in partition_records(p))
    plan = parse_options({"path": str(sample), "includeControlRecords": "true"})
    whole, n_whole = decoded(plan)
    assert whole == want
    small, n_small = decoded(plan, max_bytes=2000, rows_per_batch=7)
    assert small == want and n_small > n_whole


def test_options_are_checked(sample):
    for options, message in (({}, "a path is needed"),
                             ({"subscribe": "a", "assign": "{}"}, "at most one"),
                             ({"onCorrupt": "ignore"}, "onCorrupt"),
                             ({"startingOffsets": "latest"}, "not allowed"),
                             ({"endingOffsets": "{oops"}, "endingOffsets"),
                             ({"includeHeaders": "yes"}, "includeHeaders"),
                             ({"includeControlRecords": "1"}, "includeControlRecords must be true or false")):
        with pytest.raises(OptionError, match=message):
            parse_options({"path": str(sample), **options} if options else {})


def test_an_offset_range_plans_only_the_bytes_around_it(tmp_path):
    """Both bounds of an offset range cut byte ranges through the .index: what is planned is the
    range's batches plus at most an index interval before it and two after, and decodes to
    exactly the range's records."""
    from kafkacodec.codec.records import Record
    from kafkacodec.storage.change.writer import PartitionWriter

    path = tmp_path / "orders-0"
    with PartitionWriter(path, segment_bytes=1 << 20) as w:
        for b in range(1500):
            w.append([Record(key=b"k%d" % i, value=b"v" * 40, timestamp=1000 + b) for i in range(10)])
    part = logdir.open_partition(path)
    size = part.segments[0].log.stat().st_size
    per_record = size / 15000
    for lo, hi in ((0, 150), (5005, 5155), (14850, 15000), (7000, 7001)):
        plan = parse_options({"path": str(path), "startingOffsets": f'{{"orders": {{"0": {lo}}}}}',
                              "endingOffsets": f'{{"orders": {{"0": {hi}}}}}'})
        rows, _ = decoded(plan, max_bytes=1 << 20)
        assert [o for _, _, o, _, _ in rows] == list(range(lo, hi))
        work, _ = slices(plan, 1 << 20)
        planned = sum((size if s.end_pos is None else s.end_pos) - s.start_pos for s in work)
        assert planned <= (hi - lo) * per_record + 3 * (4096 + 10 * per_record)  # an index interval before, two after


HEADER_NAMES = ("topic", "partition", "offset", "sequence", "producerId", "producerEpoch", "compression", "position",
                "isControl", "isTransactional", "timestampType", "crcValid", "magic", "segment", "corruption")


def header_and_full_rows(plan, max_bytes, names=HEADER_NAMES):
    from kafkacodec.pipeline.headers import header_rows, projected
    work, _ = slices(plan, max_bytes)
    fast, full = [], []
    for s in work:
        data = read_range(s.uri, s.path, s.start_pos, s.end_pos)
        fast += [r for b in header_rows(data, s, names, s.path, base_pos=s.start_pos) for r in b.to_pylist()]
        full += [r for b in decode_slice(data, s, segment_name=s.path, base_pos=s.start_pos)
                 for r in projected(b, names).to_pylist()]
    return fast, full


@pytest.mark.parametrize("options", [{}, {"isolationLevel": "read_committed"},
                                     {"startingOffsets": '{"clicks": {"0": 17}}', "endingOffsets": '{"clicks": {"0": 90}}',
                                      "subscribe": "clicks"}])
@pytest.mark.parametrize("max_bytes", [None, 3000])
def test_reading_batch_headers_alone_gives_the_rows_a_full_read_gives(sample, options, max_bytes):
    """Legacy entries, compacted batches, transactions, bounds: the header-only path's rows equal
    those of a full read, column for column."""
    fast, full = header_and_full_rows(parse_options({"path": str(sample), **options}), max_bytes)
    assert fast == full and len(fast) > 50


def test_the_header_only_path_meets_damage_as_a_full_read_does(sample, tmp_path):
    import shutil

    from tests.support.damage import V2_RECORDS_AT
    copy = tmp_path / "c"
    shutil.copytree(sample, copy)
    seg = sorted((copy / "clicks-1").glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    data[V2_RECORDS_AT + 3] ^= 0xFF  # the first batch's CRC no longer matches
    seg.write_bytes(bytes(data))
    for on_corrupt in ("skip", "report"):
        fast, full = header_and_full_rows(parse_options({"path": str(copy / "clicks-1"), "onCorrupt": on_corrupt}),
                                          None)
        assert fast == full and any(r["corruption"] for r in fast) == (on_corrupt == "report")


@pytest.mark.parametrize("window", [1, 700, 5000])
def test_a_slice_read_in_windows_of_whole_batches_gives_the_rows_of_one_read(sample, tmp_path, window):
    """Windows smaller than a batch, than a few, and larger: the same rows as the slice read at
    once; damage (a size field that is no size, a cut last batch) is met and reported the same."""
    import shutil

    from dataclasses import replace

    from kafkacodec.pipeline.files import windows
    copy = tmp_path / "c"
    shutil.copytree(sample, copy)
    seg = sorted((copy / "clicks-1").glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")
    data[second + 8:second + 12] = (3).to_bytes(4, "big")
    seg.write_bytes(bytes(data))
    last = sorted((copy / "clicks-0").glob("*.log"))[-1]
    last.write_bytes(last.read_bytes()[:-7])
    work, _ = slices(parse_options({"path": str(copy), "onCorrupt": "report"}), 3000)
    for s in work:
        once = [r for b in decode_slice(read_range(s.uri, s.path, s.start_pos, s.end_pos), s, base_pos=s.start_pos)
                for r in b.to_pylist()]
        pieces = [r for pos, piece in windows(s, window)
                  for b in decode_slice(piece, replace(s, start_pos=pos, end_pos=pos + len(piece)), base_pos=pos)
                  for r in b.to_pylist()]
        order = (lambda r: (r["position"], -1 if r["offset"] is None else r["offset"]))  # a task's rows are a set
        assert sorted(pieces, key=order) == sorted(once, key=order)


def read_all(path, **options) -> list[dict]:
    """Every row the kafka-log reader gives for `path`, as Spark's tasks would produce them."""
    from kafkacodec.pipeline.source import KafkaLogReader
    reader = KafkaLogReader(parse_options({"path": str(path), **options}))
    return [r for p in reader.partitions() for b in reader.read(p) for r in b.to_pylist()]


def test_timestamps_spark_cannot_hold_are_null_and_the_others_exact(tmp_path):
    """A producer may write any long as a timestamp (librdkafka's and kafka-python's edge cases
    write 2^62): Spark holds the years 1 to 9999, so a record outside them reads NULL, in whole
    batches (read by columns), in batches cut by an offset bound (read record by record), and in
    the segments table, whose min and max timestamps were 2^62 * 1000 microseconds before."""
    import datetime as dt

    from kafkacodec.pipeline.tables import SegmentsReader
    from kafkacodec.storage.change.writer import PartitionWriter

    earliest, latest = -62_135_596_800_000, 253_402_300_799_999  # 0001-01-01, 9999-12-31 23:59:59.999
    stamps = [1_700_000_000_000, 2 ** 62, latest, latest + 1, earliest, earliest - 1, -(2 ** 62)]
    with PartitionWriter(tmp_path / "far-0") as w:
        w.append([{"key": b"k", "value": b"%d" % i, "timestamp": t} for i, t in enumerate(stamps)])
    utc = dt.timezone.utc
    want = [dt.datetime.fromtimestamp(1_700_000_000, utc), None, dt.datetime(9999, 12, 31, 23, 59, 59, 999000, utc),
            None, dt.datetime(1, 1, 1, tzinfo=utc), None, None]
    assert [r["timestamp"] for r in read_all(tmp_path / "far-0")] == want
    cut = read_all(tmp_path / "far-0", startingOffsets='{"far": {"0": 1}}', endingOffsets='{"far": {"0": 6}}')
    assert [r["timestamp"] for r in cut] == want[1:6]
    segments = SegmentsReader(str(tmp_path / "far-0"))
    (row,) = [r for p in segments.partitions() for b in segments.read(p) for r in b.to_pylist()]
    # the table's smallest is of the batch's first and largest timestamps (1_700_000_000_000 and 2^62)
    assert (row["minTimestamp"], row["maxTimestamp"], row["records"]) == (want[0], None, len(stamps))


def test_a_record_without_a_timestamp_reads_null(tmp_path):
    """v0 messages have no timestamp (Kafka reports -1): NULL, not 1969-12-31 23:59:59.999, for
    librdkafka's v0 messages as its mock broker stored them, and for v1 and v2 records written
    without one; their neighbours keep theirs."""
    from pathlib import Path

    from kafkacodec import write_batch
    from kafkacodec.codec.records import Record

    fixtures = Path(__file__).parents[1] / "fixtures" / "librdkafka"
    (tmp_path / "old-0").mkdir()
    (tmp_path / "old-0" / "00000000000000000000.log").write_bytes((fixtures / "v0_none.bin").read_bytes())
    rows = read_all(tmp_path / "old-0")
    assert len(rows) == 12 and {r["magic"] for r in rows} == {0}
    assert [(r["timestamp"], r["timestampType"]) for r in rows] == [(None, -1)] * 12
    (tmp_path / "new-0").mkdir()
    records = [Record(key=b"k", value=b"v", timestamp=t, offset=i) for i, t in enumerate((-1, 1_700_000_000_000))]
    log = b"".join(write_batch([r], magic=magic, base_offset=r.offset) for magic, r in zip((1, 2), records))
    log += write_batch([Record(key=b"k", value=b"v", timestamp=None, offset=2)], magic=2, base_offset=2)
    (tmp_path / "new-0" / "00000000000000000000.log").write_bytes(log)
    rows = read_all(tmp_path / "new-0")
    assert [(r["magic"], r["timestamp"] and r["timestamp"].timestamp()) for r in rows] == \
        [(1, None), (2, 1_700_000_000.0), (2, None)]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize("narrow", [False, True], ids=["full", "batch_headers"])
def test_transaction_markers_are_rows_only_when_asked_for(sample, isolation, narrow):
    """Spark's Kafka source gives no control records: a read leaves the sample's transaction
    markers out unless includeControlRecords=true, and then gives each, as the library reads
    them; the data rows are the same either way, in a full read and from batch headers alone."""
    from kafkacodec.pipeline.headers import header_rows

    part = logdir.open_partition(sample / "payments-0")
    markers = {r.offset for b, r in partition_records(part) if not b.is_legacy and b.entry.is_control}
    assert len(markers) >= 4

    def rows(**options):
        plan = parse_options({"path": str(part.path), "isolationLevel": isolation, **options})
        out = []
        for s in slices(plan)[0]:
            data = read_range(s.uri, s.path, s.start_pos, s.end_pos)
            batches = header_rows(data, s, HEADER_NAMES, s.path, s.start_pos) if narrow else \
                decode_slice(data, s, base_pos=s.start_pos)
            out += [(r["offset"], r["isControl"]) for b in batches for r in b.to_pylist()]
        return sorted(out)

    default, asked = rows(), rows(includeControlRecords="true")
    assert not any(control for _, control in default)
    assert {o for o, control in asked if control} == markers
    assert [r for r in asked if not r[1]] == default and len(default) > 10


@pytest.mark.parametrize("option,value,said,reads", [
    ("subscribe", "a|b", "subscribe names topics with no partition under {root}: 'a|b' (subscribe takes topic "
                         "names separated by commas; subscribePattern takes a regular expression)", set()),
    ("subscribe", "clicks, orders,payments", "subscribe names topics with no partition under {root}: 'orders'",
     {"clicks", "payments"}),
    ("subscribePattern", "click", "subscribePattern 'click' matches no topic under {root}", set()),
    ("assign", '{"clicks": [1, 2], "nope": [0]}', "assign names partitions not under {root}: clicks-2, nope-0",
     {"clicks"})])
def test_topics_and_partitions_not_found_are_warned_of(sample, caplog, option, value, said, reads):
    """A subscription that names what the log dir does not hold reads no rows of it, which looks
    like an empty topic: the planning logs a warning naming what was not found (Spark shows a
    planner's log on the driver's console); what is found is read."""
    import logging

    from kafkacodec.pipeline.source import KafkaLogReader
    reader = KafkaLogReader(parse_options({"path": str(sample), option: value}))
    with caplog.at_level(logging.WARNING, logger="kafkacodec.pipeline"):
        work = reader.partitions()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == \
        [(logging.WARNING, "kafka-log: " + said.format(root=sample))]
    assert {p.value.topic for p in work if p.value is not None} == reads
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkacodec.pipeline"):
        KafkaLogReader(parse_options({"path": str(sample), "subscribe": "clicks,payments"})).partitions()
        KafkaLogReader(parse_options({"path": str(sample), "subscribePattern": "cl.*"})).partitions()
        KafkaLogReader(parse_options({"path": str(sample), "assign": '{"clicks": [0, 1]}'})).partitions()
    assert caplog.records == []
