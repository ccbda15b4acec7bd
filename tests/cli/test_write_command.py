"""`kafkacodec write`: every value out of what Kafka writes is an error naming the line and the
field, with nothing written; a full or read-only disk is an error naming the file, with no
`.tmp` left; `--index` on a file not named by an offset indexes from its first batch."""
import copy
import os
import json
import subprocess
import sys

import pytest

from tests.support.disks import remount, tmpfs
from kafkacodec import read_batches, write_batch
from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.exchange.jsonl import to_json
from kafkacodec.storage.segments.scan import scan_file


def kc(*args, stdin=b""):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, input=stdin)


def obj(records, **options):
    """A batch as `dump --json` shows it, without the keys that describe where and how it was
    written (size, crc, crcValid, position), so that batches made apart can be written together."""
    (batch,) = read_batches(write_batch(records, **options))
    shown = json.loads(json.dumps(to_json(batch)))
    for key in ("size", "crc", "crcValid", "position"):
        del shown[key]
    return shown


def v2(base=10):
    return obj([{"key": b"k%d" % i, "value": b"v", "timestamp": 1000 + i, "headers": [("h", b"x")]} for i in range(3)],
               base_offset=base, producer_id=5, producer_epoch=1, base_sequence=0, is_transactional=True,
               partition_leader_epoch=3)


def legacy(magic, base=10):
    return obj([{"key": b"k", "value": b"v", "timestamp": 1000 if magic else None}], magic=magic, base_offset=base)


def lines(*objs):
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def changed(make, change):
    o = make()
    change(o)
    return o


def setter(path, value):
    def change(o):
        *parents, last = path
        for key in parents:
            o = o[key]
        o[last] = value
    return change


def without(key):
    return lambda o: o.pop(key)


BAD = [
    (v2, setter(["baseOffset"], -1), "baseOffset: -1 is out of range"),
    (v2, setter(["baseOffset"], 2 ** 63), "baseOffset: 9223372036854775808 is out of range"),
    (v2, setter(["lastOffset"], 9), "lastOffset: 9 is below baseOffset 10"),
    (v2, setter(["lastOffset"], 10 + 2 ** 31), "lastOffset: 2147483658 is more than 2^31-1 above baseOffset"),
    (v2, setter(["records", 0, "timestamp"], 2 ** 63), "records[0].timestamp: 9223372036854775808 is out of range"),
    (v2, setter(["records", 0, "headers", 0, 0], "\ud800"), 'records[0].headers[0]: key "\\ud800" is not valid'),
    (v2, setter(["records", 0, "timestamp"], -2), "records[0].timestamp: -2 is out of range"),
    (v2, setter(["records", 0, "timestamp"], 1.5), "records[0].timestamp: 1.5 is not an integer"),
    (v2, setter(["firstTimestamp"], 2 ** 64), "firstTimestamp: 18446744073709551616 is out of range"),
    (v2, setter(["maxTimestamp"], True), "maxTimestamp: true is not an integer"),
    (v2, setter(["producerEpoch"], 40_000), "producerEpoch: 40000 is out of range"),
    (v2, setter(["producerEpoch"], -2), "producerEpoch: -2 is out of range"),
    (v2, setter(["producerEpoch"], -1), "producerEpoch: -1, but producer 5's batch needs an epoch"),
    (v2, setter(["baseSequence"], -5), "baseSequence: -5 is out of range"),
    (v2, setter(["baseSequence"], -1), "baseSequence: -1, but producer 5's data batch needs a sequence"),
    (v2, setter(["partitionLeaderEpoch"], -7), "partitionLeaderEpoch: -7 is out of range"),
    (v2, setter(["partitionLeaderEpoch"], 2 ** 31), "partitionLeaderEpoch: 2147483648 is out of range"),
    (v2, setter(["producerId"], -3), "producerId: -3 is out of range"),
    (v2, setter(["producerId"], -1), "isTransactional: a transactional batch needs a producerId"),
    (v2, setter(["isTransactional"], "yes"), 'isTransactional: "yes" is not true or false'),
    (v2, setter(["magic"], "2"), 'magic: "2" is not one of 0, 1, 2'),
    (v2, setter(["compression"], "brotli"), 'compression: "brotli" is not one of none, gzip'),
    (v2, setter(["timestampType"], "NoTimestampType"), 'timestampType: "NoTimestampType" is not one of'),
    (v2, without("records"), "records: missing"),
    (v2, setter(["records", 0], "x"), 'records[0]: "x" is not a JSON object'),
    (v2, setter(["records", 1, "offset"], 10), "records[1].offset: 10 does not rise above the previous record's 10"),
    (v2, setter(["records", 2, "offset"], 13), "records[2].offset: 13 is outside the batch's offsets 10 to 12"),
    (v2, setter(["records", 0, "key"], 7), "records[0].key: 7 is not base64 text or null"),
    (v2, setter(["records", 0, "value"], "not base64!"), "records[0].value: not standard base64"),
    (v2, setter(["records", 0, "headers", 0, 0], 5), "records[0].headers[0]: key 5 is not a string"),
    (v2, setter(["records", 0, "headers", 0, 0], "\ud800"), "records[0].headers[0]: key"),
    (v2, setter(["records", 0, "headers", 0], ["h"]), 'records[0].headers[0]: ["h"] is not a [key, value] pair'),
    (v2, setter(["records", 0, "headers"], {}), "records[0].headers: {} is not a list"),
    (v2, setter(["count"], 7), "count: 7, but 3 records are listed"),
    (lambda: legacy(1), setter(["records", 0, "headers"], [["h", None]]),
     "records[0].headers: magic 1 messages cannot carry headers"),
    (lambda: legacy(1), setter(["compression"], "zstd"), "compression: zstd needs magic 2, not 1"),
    (lambda: legacy(1), setter(["producerId"], 5), "producerId: 5, but magic 1 has no such field (-1 expected)"),
    (lambda: legacy(1), setter(["isTransactional"], True), "isTransactional: true, but magic 1 has no such field"),
    (lambda: legacy(1), setter(["records"], []), "records: empty, but a magic 1 entry holds at least one message"),
    (lambda: legacy(1), setter(["baseOffset"], 9), "baseOffset: 9 to 10, but the messages' offsets are 10 to 10"),
    (lambda: legacy(0), setter(["records", 0, "timestamp"], 5), "records[0].timestamp: 5, but magic 0 has no"),
    (lambda: legacy(0), setter(["timestampType"], "CreateTime"), 'timestampType: "CreateTime" is not one of'),
]


@pytest.mark.parametrize("make,change,message", BAD, ids=[m for _, _, m in BAD])
def test_a_bad_value_names_its_line_and_field_and_writes_nothing(tmp_path, make, change, message):
    out = tmp_path / "00000000000000000000.log"
    run = kc("write", "--index", str(out), stdin=lines(legacy(1, base=0), changed(make, change)))
    assert run.returncode == 2, run.stderr
    assert run.stderr.decode().startswith(f"error: line 2: {message}"), run.stderr
    assert b"Traceback" not in run.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text,message", [
    (b"{not json\n", "line 1: not JSON"),
    (b"\xff\xfe{}\n", "line 1: not UTF-8 text"),
    (b"[1, 2]\n", "line 1: [1, 2] is not a JSON object"),
    (b"[" * 100_000 + b"\n", "line 1: not JSON"),
    (b"1" * 5000 + b"\n", "line 1: not JSON"),
    (lines(v2(base=10), v2(base=12)), "line 2: baseOffset: 12 does not rise above the previous batch's last offset 12"),
])
def test_lines_that_are_not_batches_are_refused(tmp_path, text, message):
    out = tmp_path / "x.log"
    run = kc("write", str(out), stdin=text)
    assert run.returncode == 2 and run.stderr.decode().startswith(f"error: {message}"), run.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_values_kafka_writes_for_none_are_taken(tmp_path):
    """-1 timestamps (none), producer fields -1, an empty v2 batch left by the cleaner, the
    extremes of each range."""
    out = tmp_path / "00000000000000000000.log"
    none = obj([{"value": b"v", "timestamp": -1}])
    top = obj([{"value": b"v", "timestamp": 2 ** 63 - 1}], base_offset=2 ** 31, producer_id=2 ** 63 - 1,
              producer_epoch=2 ** 15 - 1, base_sequence=2 ** 31 - 1, partition_leader_epoch=2 ** 31 - 1)
    empty = copy.deepcopy(top)
    empty.update(baseOffset=2 ** 31 + 5, lastOffset=2 ** 31 + 5, records=[], count=0)
    run = kc("write", str(out), stdin=lines(none, top, empty))
    assert run.returncode == 0, run.stderr
    batches = list(read_batches(out.read_bytes()))
    assert [(b.base_offset, b.last_offset) for b in batches] == [(0, 0), (2 ** 31, 2 ** 31), (2 ** 31 + 5, 2 ** 31 + 5)]
    assert [r.timestamp for b in batches for r in b] == [-1, 2 ** 63 - 1]


def test_an_index_beyond_32_bits_of_the_base_is_refused(tmp_path):
    out = tmp_path / "00000000000000000000.log"
    far = obj([{"value": b"v", "timestamp": 1}], base_offset=2 ** 31)
    run = kc("write", "--index", str(out), stdin=lines(obj([{"value": b"v", "timestamp": 1}]), far))
    assert run.returncode == 2 and b"line 2: lastOffset: 2147483648 is not within 0 to 2^31-1 above" in run.stderr
    assert list(tmp_path.iterdir()) == []
    assert kc("write", str(out), stdin=lines(obj([{"value": b"v", "timestamp": 1}]), far)).returncode == 0


def test_index_of_a_file_not_named_by_an_offset_starts_at_its_first_batch(tmp_path):
    batches = [obj([{"value": b"x" * 3000, "timestamp": 100 + i}], base_offset=500 + i) for i in range(6)]
    out = tmp_path / "suspect.log"
    run = kc("write", "--index", str(out), stdin=lines(*batches))
    assert run.returncode == 0, run.stderr
    assert b"suspect.log is not named by an offset" in run.stderr and b"500" in run.stderr
    seg = logdir.segment_of(out)
    assert seg.base_offset == 500
    offsets, times = index.rebuild(scan_file(out).batches, 500)
    assert offsets and index.read_offset_index(seg.index.read_bytes(), 500) == offsets
    assert index.read_time_index(seg.time_index.read_bytes(), 500) == times


def test_a_full_disk_is_an_error_naming_the_file_and_leaves_nothing(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        out = disk / "00000000000000000000.log"
        big = obj([{"value": bytes(range(256)) * 400, "timestamp": 1}])
        run = kc("write", "--index", str(out), stdin=lines(big))
        assert run.returncode == 2
        assert run.stderr.decode() == f"error: {out}: no space left on the device\n"
        assert list(disk.iterdir()) == []


def test_a_read_only_file_system_is_an_error_naming_the_file(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        out = disk / "00000000000000000000.log"
        remount(disk, "ro")
        try:
            run = kc("write", str(out), stdin=lines(v2()))
        finally:
            remount(disk, "rw")
        assert run.returncode == 2
        assert run.stderr.decode() == f"error: {out}: the file system is read-only\n"
        assert list(disk.iterdir()) == []


def test_a_header_key_that_is_not_utf8_comes_back_as_its_bytes(tmp_path):
    from kafkacodec.generated.record_batch import RecordBatch
    batch = RecordBatch.from_bytes(write_batch([{"key": b"k", "value": b"v", "timestamp": 1,
                                                 "headers": [("ok", b"x"), ("fine", b"y")]}]))
    batch.records.items[0].headers[0].key = b"\xffk\xc3".decode("utf-8", "surrogateescape")
    source = tmp_path / "00000000000000000000.log"
    source.write_bytes(batch.to_bytes())
    dumped = kc("dump", "--json", str(source))
    assert dumped.returncode == 0 and b'"\\udcffk\\udcc3"' in dumped.stdout, dumped.stdout
    again = tmp_path / "again.log"
    run = kc("write", str(again), stdin=dumped.stdout)
    assert run.returncode == 0, run.stderr
    assert again.read_bytes() == source.read_bytes()


def b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode()


def test_minimal_json_gives_kafka_pythons_bytes(tmp_path):
    """Only records given: offsets, count, first and max timestamps and the "none" values are
    derived as kafka-python's batch builder (an independent writer) derives them."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    records = [(b"k1", b"first", 1700), (None, b"second", 1500), (b"k3", None, 1900)]
    out = tmp_path / "00000000000000000000.log"
    minimal = {"records": [{"key": k and b64(k), "value": v and b64(v), "timestamp": ts} for k, v, ts in records]}
    second = {"records": [{"value": b64(b"next"), "timestamp": 2000}]}
    run = kc("write", str(out), stdin=lines(minimal, second))
    assert run.returncode == 0, run.stderr
    expected = b""
    for base, batch in ((0, records), (3, [(None, b"next", 2000)])):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for i, (k, v, ts) in enumerate(batch):
            builder.append(i, timestamp=ts, key=k, value=v, headers=[])
        built = bytearray(builder.build())
        built[0:8] = base.to_bytes(8, "big")  # kafka-python leaves offsets relative to 0; a log has them absolute
        built[12:16] = b"\xff" * 4  # and writes leader epoch 0 where a producer's batch (ours) has -1
        expected += bytes(built)
    written = out.read_bytes()
    assert written == expected
    batches = list(read_batches(written))
    assert [(b.entry.base_timestamp, b.entry.max_timestamp, b.entry.records_count) for b in batches] == \
        [(1700, 1900, 3), (2000, 2000, 1)]


def test_a_given_derived_key_that_the_records_contradict_is_refused(tmp_path):
    """The batch whose false maxTimestamp once verified and hid it from time lookups."""
    out = tmp_path / "x.log"
    lying = changed(v2, setter(["maxTimestamp"], 5000))
    run = kc("write", str(out), stdin=lines(lying))
    assert run.returncode == 2
    assert run.stderr.decode().startswith("error: line 1: maxTimestamp: 5000, but the largest of the records' "
                                          "timestamps is 1002")
    appended = changed(v2, setter(["timestampType"], "LogAppendTime"))
    run = kc("write", str(out), stdin=lines(appended))
    assert run.returncode == 2 and b"records[0].timestamp: 1000, but a LogAppendTime batch's records all report " \
                                   b"its maxTimestamp 1002" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_every_problem_of_a_line_is_reported_at_once(tmp_path):
    bad = v2()
    bad.update(magic="2", producerEpoch=40_000, count=9)
    bad["records"][1]["key"] = 7
    del bad["records"][2]["offset"]
    bad["records"][0]["headers"] = {}
    run = kc("write", str(tmp_path / "x.log"), stdin=lines(bad))
    assert run.returncode == 2
    assert run.stderr.decode().splitlines() == [
        'error: line 1: magic: "2" is not one of 0, 1, 2',
        "line 1: records[0].headers: {} is not a list",
        "line 1: records[1].key: 7 is not base64 text or null",
        "line 1: count: 9, but 3 records are listed",
        "line 1: producerEpoch: 40000 is out of range (-1 for none, else 0 to 32767)"]


def test_keys_that_describe_the_bytes_are_checked_unless_recomputed(tmp_path):
    """size, crc, crcValid, position from `dump --json` hold for the same bytes; after an edit
    they name what changed, and --recompute takes the bytes' own."""
    source = tmp_path / "00000000000000000000.log"
    source.write_bytes(write_batch([{"key": b"k", "value": b"v", "timestamp": 1}]) +
                       write_batch([{"key": b"k", "value": b"w", "timestamp": 2}], base_offset=1))
    dumped = [json.loads(line) for line in kc("dump", "--json", str(source)).stdout.splitlines()]
    dumped[0]["records"][0]["value"] = b64(b"longer value")
    out = tmp_path / "out.log"
    run = kc("write", str(out), stdin=lines(*dumped))
    assert run.returncode == 2
    problems = run.stderr.decode().splitlines()
    assert problems[0].startswith(f"error: line 1: size: {dumped[0]['size']}, but the batch written has "
                                  f"{dumped[0]['size'] + 11}")
    assert problems[1].startswith("line 1: crc: ") and len(problems) == 2
    assert kc("write", "--recompute", str(out), stdin=lines(*dumped)).returncode == 0
    assert [r.value for b in read_batches(out.read_bytes()) for r in b] == [b"longer value", b"w"]
    del dumped[0]
    run = kc("write", "--force", str(out), stdin=lines(*dumped))
    assert run.returncode == 2 and b"line 1: position: 70, but the batch written has 0" in run.stderr


def test_a_delete_horizon_survives_dump_and_write(tmp_path):
    from kafkacodec.generated.record_batch import RecordBatch
    batch = RecordBatch.from_bytes(write_batch([{"key": b"k", "value": None, "timestamp": 10}], producer_id=-1))
    batch.attributes |= 0x40  # the cleaner's rewrite: the horizon as base timestamp, deltas from it
    batch.base_timestamp = 99_000
    batch.records.items[0].timestamp_delta = 10 - 99_000
    source = tmp_path / "00000000000000000000.log"
    source.write_bytes(batch.to_bytes())
    dumped = kc("dump", "--json", str(source)).stdout
    assert json.loads(dumped)["deleteHorizonMs"] == 99_000
    out = tmp_path / "again.log"
    assert kc("write", str(out), stdin=dumped).returncode == 0
    assert out.read_bytes() == source.read_bytes()


def test_a_missing_output_directory_is_an_error_not_a_traceback(tmp_path):
    out = tmp_path / "nowhere" / "00000000000000000000.log"
    run = kc("write", str(out), stdin=lines(v2()))
    assert run.returncode == 2 and run.stderr.decode() == f"error: {out.parent}: no such directory (create it first)\n"


def test_write_refuses_what_would_destroy_a_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    run = kc("write", "--force", str(fifo), stdin=lines(v2()))
    assert run.returncode == 2 and "not a regular file" in run.stderr.decode() and fifo.is_fifo()
    run = kc("write", "--index", str(tmp_path / "x.index"), stdin=lines(v2()))
    assert run.returncode == 2 and "OUT must be the .log" in run.stderr.decode()
    beyond = {"baseOffset": 2 ** 63 - 1, "records": [{"value": "YQ=="}, {"value": "YQ=="}]}
    run = kc("write", str(tmp_path / "y.log"), stdin=lines(beyond))
    assert run.returncode == 2 and b"records[1].offset: left out, and the offset after" in run.stderr
    run = kc("write", str(tmp_path / "z.log"), stdin=b'{"records": [], "records": []}\n')
    assert run.returncode == 2 and b"records: given twice" in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]
