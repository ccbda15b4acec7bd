"""The JVM reader (kafka-log-jvm, read through kafkacodec.pipeline.read) against the Python data
source, its reference: equal schemas and equal rows (exceptAll both ways) over logs of every codec,
with headers, transactions, control batches, offset bounds, splits and damage."""
import logging
import random
import shutil

import pytest

pytestmark = pytest.mark.spark

from kafkacodec.pipeline import jvm  # noqa: E402
from kafkacodec.pipeline.reading import read  # noqa: E402
from kafkacodec.storage.change.writer import PartitionWriter  # noqa: E402
from tests.storage.test_tiered_layouts import aiven, local_tiered, written  # noqa: E402,F401 (a fixture)

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


@pytest.fixture(scope="module")
def codecs_log(tmp_path_factory):
    """Two partitions of v2 batches in every codec: keys and values null, empty and random, headers on
    some records, log-append time on some batches, segments rolled small."""
    root = tmp_path_factory.mktemp("codecs")
    rng = random.Random(31)
    for p in range(2):
        with PartitionWriter(root / f"mixed-{p}", segment_bytes=40_000) as w:
            for b in range(60):
                records = [{"key": rng.choice([None, b"", b"k%d" % i, rng.randbytes(30)]),
                            "value": rng.choice([None, b"", rng.randbytes(rng.randrange(400))]),
                            "timestamp": 1_700_000_000_000 + b * 100 + i,
                            "headers": [("h%d" % j, rng.choice([None, b"", rng.randbytes(8)]))
                                        for j in range(rng.choice([0, 0, 1, 3]))]}
                           for i in range(rng.randrange(1, 40))]
                options = {"compression": CODECS[b % len(CODECS)]}
                if b % 7 == 3:
                    options.update(timestamp_type="LogAppendTime", log_append_time=1_700_000_999_000 + b)
                w.append(records, **options)
    return root


def same_rows(spark, path, **options):
    jvm_rows = read(spark, path, reader="jvm", **options)
    python_rows = read(spark, path, reader="python", **options)
    assert jvm_rows.schema == python_rows.schema
    assert jvm_rows.exceptAll(python_rows).count() == 0
    assert python_rows.exceptAll(jvm_rows).count() == 0
    return jvm_rows.count()


@pytest.mark.parametrize("options", [
    {}, {"includeHeaders": True}, {"maxBytesPerPartition": 9000, "includeHeaders": True},
    {"startingOffsets": '{"mixed": {"0": 333}}', "endingOffsets": '{"mixed": {"0": 901, "1": 77}}'},
    {"assign": '{"mixed": [1]}', "verifyCrc": False},
], ids=["plain", "headers", "split", "offsets", "assign-no-crc"])
def test_every_codec_reads_as_the_python_source_reads(spark, codecs_log, options):
    assert same_rows(spark, codecs_log, **options) > 0


@pytest.mark.parametrize("options", [
    {}, {"isolationLevel": "read_committed"}, {"includeControlRecords": True, "includeHeaders": True},
    {"isolationLevel": "read_committed", "includeControlRecords": True},
], ids=["uncommitted", "committed", "control", "committed-control"])
def test_transactions_read_as_the_python_source_reads(spark, sample, options):
    for topic in ("payments", "__consumer_offsets", "__transaction_state"):
        same_rows(spark, sample, subscribe=topic, **options)


def test_narrow_schemas_and_filters_give_the_python_sources_rows(spark, codecs_log):
    """A schema of batch-header columns (read from the headers alone), and filters pushed down."""
    for schema in ("topic string, partition int, offset long, compression string, crcValid boolean",
                   "value binary, offset long", "sequence int, position long, segment string"):
        assert same_rows(spark, codecs_log, schema=schema) > 0
    both = [read(spark, codecs_log, reader=r).where("partition = 1 and offset between 100 and 640 and topic = 'mixed'")
            for r in ("jvm", "python")]
    assert both[0].count() == both[1].count() > 0
    assert both[0].exceptAll(both[1]).count() == 0
    plan = both[0]._jdf.queryExecution().executedPlan().toString()
    assert "kafka-log-jvm" in plan


def test_an_empty_read_gives_no_rows(spark, codecs_log):
    assert read(spark, codecs_log, reader="jvm", subscribe="nothing-here").count() == 0
    assert read(spark, codecs_log, reader="jvm").where("offset < 0").count() == 0


def where(corruption: str) -> str:
    """A corruption's file, byte and field ("file: byte N: path: reason"), the reason's wording being
    each reader's own."""
    return ": ".join(corruption.split(": ", 3)[:3])


def damaged_copy(src, dst, flips):
    shutil.copytree(src, dst)
    log = sorted(dst.rglob("*.log"))[0]
    data = bytearray(log.read_bytes())
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    for batch, at in flips:
        data[starts[batch] + at] ^= 0xFF
    log.write_bytes(bytes(data))
    return log, starts


@pytest.mark.parametrize("verify", [True, False], ids=["crc", "no-crc"])
def test_damage_is_handled_as_the_python_source_handles_it(spark, codecs_log, tmp_path, verify):
    """A changed byte in a header's CRC-covered part, one inside a compressed payload, and a cut tail."""
    log, starts = damaged_copy(codecs_log / "mixed-0", tmp_path / "d" / "mixed-0", [(1, 40), (3, 70)])
    log.write_bytes(log.read_bytes()[:-5])
    path = tmp_path / "d"
    with pytest.raises(Exception, match=f"{log}: byte"):
        read(spark, path, reader="jvm", verifyCrc=verify).count()
    assert same_rows(spark, path, onCorrupt="skip", verifyCrc=verify) > 0
    said = [{r["position"]: r["corruption"] for r in
             read(spark, path, reader=reader, onCorrupt="report", verifyCrc=verify)
             .where("corruption is not null").collect()} for reader in ("jvm", "python")]
    assert said[0].keys() == said[1].keys() and len(said[0]) >= 2  # the payload's damage and the cut tail
    assert (starts[1] in said[0]) == verify  # a header's damage, caught by its CRC alone
    assert {k: where(v) for k, v in said[0].items()} == {k: where(v) for k, v in said[1].items()}


@pytest.mark.parametrize("options", [
    {}, {"includeHeaders": True, "verifyCrc": False}, {"startingOffsets": '{"clicks": {"0": 17}}'},
    {"maxBytesPerPartition": 700},
], ids=["plain", "headers-no-crc", "offsets", "split"])
def test_the_sample_with_its_legacy_sets_reads_as_the_python_source_reads(spark, sample, options):
    """clicks-0 holds magic 0 and 1 entries, compressed wrappers in every codec among them."""
    assert same_rows(spark, sample, **options) > 0


def test_damaged_legacy_entries_are_handled_as_the_python_source_handles_them(spark, sample, tmp_path):
    """Bytes changed in legacy entries and wrappers (the CRC not checked, so that the damage reaches the
    readers): skipped and reported alike."""
    log = sorted((sample / "clicks-0").glob("*.log"))[0]
    data = log.read_bytes()
    starts, pos = [], 0
    while pos < len(data) and data[pos + 16] < 2:
        starts.append(pos)
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    rng = random.Random(7)
    flips = [(b, rng.randrange(12, 60)) for b in rng.sample(range(len(starts)), min(12, len(starts)))]
    damaged_copy(sample / "clicks-0", tmp_path / "d" / "clicks-0", flips)
    path = tmp_path / "d"
    assert same_rows(spark, path, onCorrupt="skip", verifyCrc=False) > 0
    said = [{r["position"]: where(r["corruption"]) for r in
             read(spark, path, reader=reader, onCorrupt="report", verifyCrc=False)
             .where("corruption is not null").collect()} for reader in ("jvm", "python")]
    assert said[0] == said[1] and said[0]


def test_auto_says_once_why_it_reads_through_the_python_source(spark, codecs_log, monkeypatch, caplog):
    def unavailable(_spark):
        raise jvm.JvmReaderUnavailable("no JDK (javac) here")
    monkeypatch.setattr(jvm, "attach", unavailable)
    with caplog.at_level(logging.WARNING, logger="kafkacodec.pipeline"):
        first = read(spark, codecs_log).count()
        read(spark, codecs_log).count()
    assert first == read(spark, codecs_log, reader="python").count()
    said = [r.getMessage() for r in caplog.records if "JVM reader" in r.getMessage()]
    assert said == ["kafka-log: the Python data source reads this (slower than the JVM reader): no JDK (javac) here"]
    with pytest.raises(jvm.JvmReaderUnavailable):
        read(spark, codecs_log, reader="jvm")


def test_a_field_of_the_headers_and_extreme_offset_bounds_read_as_in_the_python_source(spark, codecs_log):
    """Spark prunes nested fields (headers.key alone); a bound at the largest long is no bound."""
    for query in (lambda df: df.select("offset", "headers.key"),
                  lambda df: df.where("array_contains(headers.value, X'')").select("offset"),
                  lambda df: df.where("offset <= 9223372036854775807").select("offset", "value"),
                  lambda df: df.where("offset > 9223372036854775806").select("offset")):
        got = [query(read(spark, codecs_log, reader=r, includeHeaders=True)) for r in ("jvm", "python")]
        assert got[0].exceptAll(got[1]).count() == 0 and got[1].exceptAll(got[0]).count() == 0
    assert read(spark, codecs_log, reader="jvm").where("offset <= 9223372036854775807").count() > 0


def test_a_batch_whose_records_do_not_decode_is_damage_even_for_a_count(spark, codecs_log, tmp_path):
    """A valid CRC over a codec id no reader knows (7), and over a negative record count: a count(), which
    needs no column of the records, still finds them, as the Python source does."""
    import crc32c
    for attributes_or, count in ((7, None), (0, -1)):
        log, starts = damaged_copy(codecs_log / "mixed-1", tmp_path / f"c{count}" / "mixed-1", [])
        data = bytearray(log.read_bytes())
        at = starts[2]
        if count is None:
            data[at + 22] |= attributes_or
        else:
            data[at + 23:at + 27] = (count - 1).to_bytes(4, "big", signed=True)  # last offset delta
            data[at + 57:at + 61] = count.to_bytes(4, "big", signed=True)
        data[at + 17:at + 21] = crc32c.crc32c(bytes(data[at + 21:starts[3]])).to_bytes(4, "big")
        log.write_bytes(bytes(data))
        path = log.parent.parent
        with pytest.raises(Exception, match=f"{log}: byte"):
            read(spark, path, reader="jvm").count()
        counts = [read(spark, path, reader=r, onCorrupt="skip").count() for r in ("jvm", "python")]
        assert counts[0] == counts[1] > 0


def test_a_log_dir_whose_path_needs_escaping_reads_as_in_the_python_source(spark, codecs_log, tmp_path):
    odd = tmp_path / "a dir %41 with #"
    shutil.copytree(codecs_log, odd)
    assert same_rows(spark, odd, includeHeaders=True) > 0


@pytest.mark.parametrize("layout", ["local-tiered", "aiven"])
def test_tiered_storage_copies_read_as_in_the_python_source(spark, written, tmp_path, layout):
    """The layouts of Kafka's LocalTieredStorage and of Aiven's plugin, which the planner lists and the
    JVM reader then reads as any segment."""
    root = local_tiered(written, tmp_path / "rsm", padded=True) if layout == "local-tiered" else \
        aiven(written, tmp_path / "bucket")
    assert same_rows(spark, root, includeHeaders=True) == 2 * 60 * 5
