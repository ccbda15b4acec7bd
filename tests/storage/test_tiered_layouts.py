"""Tiered storage copies read like log dirs: the layouts of Kafka's LocalTieredStorage and of Aiven's
tiered-storage plugin, built here from a partition the writer wrote, list as that partition's
segments and decode to the library's reading of it. No Spark."""
import json
import shutil

import pytest

from kafkacodec.pipeline.decode import decode_slice
from kafkacodec.pipeline.files import list_log, read_range
from kafkacodec.pipeline.plan import parse_options, slices
from kafkacodec.codec.records import Record
from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.change.writer import PartitionWriter

TOPIC = "orders.eu-west-1"  # '-' in the topic name
# Kafka Uuids as text (22 characters of URL-safe base64); this topic id holds '-' and ends in '-<digits>'
TOPIC_ID = "Mw-6FHTfRYy67jzwZd-123"
SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


def segment_id(n: int) -> str:
    return f"seg{n:03d}_xYz-AbCdEfGhIjKlM"[:22]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Two partitions of TOPIC as Kafka's log dir holds them, a few segments each."""
    root = tmp_path_factory.mktemp("live")
    for partition in (0, 3):
        with PartitionWriter(root / f"{TOPIC}-{partition}", segment_bytes=4000, index_interval_bytes=512) as w:
            for b in range(60):
                w.append([Record(key=b"k%d-%d" % (partition, i), value=b"v%d" % b * 20, timestamp=1000 + b)
                          for i in range(5)])
    return root


def segments_of(partition_dir):
    """base offset -> {suffix: path} of a live partition directory's segments."""
    out = {}
    for f in sorted(partition_dir.iterdir()):
        if f.suffix in SUFFIXES:
            out.setdefault(int(f.name.split(".")[0]), {})[f.suffix] = f
    return {base: files for base, files in out.items() if ".log" in files}


def rows_wanted(written, partitions=(0, 3)):
    return sorted((p.topic, p.partition, r.offset, r.key, r.value)
                  for n in partitions for p in [logdir.open_partition(written / f"{TOPIC}-{n}")]
                  for _, r in partition_records(p))


def decoded(path, max_bytes=None):
    work, skipped = slices(parse_options({"path": str(path)}), max_bytes)
    rows = []
    for s in work:
        for batch in decode_slice(read_range(s.uri, s.path, s.start_pos, s.end_pos), s, base_pos=s.start_pos):
            d = batch.to_pydict()
            rows += list(zip(d["topic"], d["partition"], d["offset"], d["key"], d["value"]))
    return sorted(rows)


def local_tiered(written, root, padded):
    """Kafka's LocalTieredStorage: <root>/<topic>-<partition>-<topic id>/<offset>-<segment id>.<Kafka suffix>,
    the files copied as they are (the offset plain or, in some Kafka versions, 20 digits)."""
    n = 0
    for partition in (0, 3):
        target = root / f"{TOPIC}-{partition}-{TOPIC_ID}"
        target.mkdir(parents=True)
        for base, files in segments_of(written / f"{TOPIC}-{partition}").items():
            n += 1
            stem = f"{base:020d}" if padded else str(base)
            for suffix, f in files.items():
                shutil.copyfile(f, target / f"{stem}-{segment_id(n)}{suffix}")
            (target / f"{stem}-{segment_id(n)}.leader_epoch_checkpoint").write_bytes(b"0\n1\n0 0\n")
    return root


def aiven_manifest(compression=False, encryption=None):
    manifest = {"version": "1", "chunkIndex": {"type": "fixed", "originalChunkSize": 4096,
                                                "originalFileSize": 0, "transformedChunkSize": 4096,
                                                "finalTransformedChunkSize": 0},
                "segmentIndexes": {}, "compression": compression}
    if encryption is not None:
        manifest["encryption"] = encryption
    return json.dumps(manifest).encode()


def aiven(written, root, prefix="tiered/"):
    """Aiven's plugin with compression and encryption off: <prefix><topic>-<topic id>/<partition>/
    <20-digit offset>-<segment id>.log (the segment's bytes), .indexes (Kafka's indexes one after
    another), .rsm-manifest (JSON)."""
    n = 0
    for partition in (0, 3):
        target = root / prefix / f"{TOPIC}-{TOPIC_ID}" / str(partition)
        target.mkdir(parents=True)
        for base, files in segments_of(written / f"{TOPIC}-{partition}").items():
            n += 1
            stem = target / f"{base:020d}-{segment_id(n)}"
            shutil.copyfile(files[".log"], f"{stem}.log")
            packed = b"".join(files[s].read_bytes() for s in (".index", ".timeindex", ".snapshot") if s in files)
            stem.with_name(stem.name + ".indexes").write_bytes(packed)
            stem.with_name(stem.name + ".rsm-manifest").write_bytes(aiven_manifest())
    return root / prefix


@pytest.mark.parametrize("padded", [False, True])
def test_local_tiered_storage_reads_as_the_partition(written, tmp_path, padded):
    root = local_tiered(written, tmp_path / "lts", padded)
    listing = list_log(str(root))
    assert [(p.topic, p.partition) for p in listing.partitions] == [(TOPIC, 0), (TOPIC, 3)]
    for part in listing.partitions:
        live = segments_of(written / f"{TOPIC}-{part.partition}")
        assert [s.base_offset for s in part.segments] == sorted(live)
        assert all(s.index and s.time_index and s.log.endswith(".log") for s in part.segments)
    assert decoded(root) == rows_wanted(written)
    assert decoded(root, max_bytes=700) == rows_wanted(written)  # split at the copied .index's entries
    one = listing.partitions[1]
    assert decoded(one.path) == rows_wanted(written, (3,))
    single = list_log(one.segments[1].log).partitions
    assert [(p.topic, p.partition, p.segments) for p in single] == [(TOPIC, 3, [one.segments[1]])]


def test_aiven_layout_reads_as_the_partition_without_indexes(written, tmp_path):
    prefix = aiven(written, tmp_path / "bucket")
    listing = list_log(str(prefix))
    assert [(p.topic, p.partition) for p in listing.partitions] == [(TOPIC, 0), (TOPIC, 3)]
    for part in listing.partitions:
        assert [s.base_offset for s in part.segments] == sorted(segments_of(written / f"{TOPIC}-{part.partition}"))
        assert all(s.index is s.time_index is s.txn_index is None for s in part.segments)
    assert listing.skipped == []
    want = rows_wanted(written)
    assert decoded(prefix) == want
    assert decoded(prefix, max_bytes=700) == want  # no index: a slice per segment, still every record once
    topic_dir = prefix / f"{TOPIC}-{TOPIC_ID}"
    assert decoded(topic_dir) == want
    assert decoded(topic_dir / "3") == rows_wanted(written, (3,))
    seg = listing.partitions[0].segments[2]
    assert [(p.topic, p.partition, p.segments) for p in list_log(seg.log).partitions] == [(TOPIC, 0, [seg])]
    # an offset range without indexes: the segments before it are passed over, the rest scanned
    plan = parse_options({"path": str(prefix), "startingOffsets": json.dumps({TOPIC: {"0": 100, "3": 0}}),
                          "endingOffsets": json.dumps({TOPIC: {"0": 150, "3": 5}})})
    work, _ = slices(plan)
    offsets = sorted(o for s in work
                     for b in decode_slice(read_range(s.uri, s.path, s.start_pos, s.end_pos), s, base_pos=s.start_pos)
                     for o in b.to_pydict()["offset"])
    assert offsets == sorted(list(range(100, 150)) + list(range(0, 5)))


def test_aiven_transformed_segments_are_passed_over_and_said_so(written, tmp_path):
    prefix = aiven(written, tmp_path / "bucket")
    part0 = prefix / f"{TOPIC}-{TOPIC_ID}" / "0"
    manifests = sorted(part0.glob("*.rsm-manifest"))
    manifests[1].write_bytes(aiven_manifest(compression=True))
    manifests[2].write_bytes(aiven_manifest(encryption={"dataKey": "x", "aad": "y"}))
    manifests[3].write_bytes(b"{not json")
    listing = list_log(str(prefix))
    refused = {m.name.split("-")[0]: why for m in manifests[1:4]
               for path, why in listing.skipped if path == str(m.with_suffix(".log"))}
    assert len(refused) == 3
    assert "compressed" in refused[manifests[1].name.split("-")[0]]
    assert "encrypted" in refused[manifests[2].name.split("-")[0]]
    assert "unreadable" in refused[manifests[3].name.split("-")[0]]
    kept = {s.base_offset for s in listing.partitions[0].segments}
    assert kept.isdisjoint(int(m.name.split("-")[0]) for m in manifests[1:4])
    with pytest.raises(ValueError, match="compressed"):
        list_log(str(manifests[1].with_suffix(".log")))


def test_a_segment_copied_twice_is_read_once(written, tmp_path):
    root = local_tiered(written, tmp_path / "lts", padded=True)
    part = root / f"{TOPIC}-0-{TOPIC_ID}"
    first = sorted(part.glob("*.log"))[0]
    again = part / (first.name.split("-")[0] + "-" + segment_id(999) + ".log")
    shutil.copyfile(first, again)
    (part / "00000000000000000000-orphanOrphanOrphan0000.index").write_bytes(b"")
    listing = list_log(str(root))
    assert [s.base_offset for s in listing.partitions[0].segments] == sorted(segments_of(written / f"{TOPIC}-0"))
    why = dict(listing.skipped)
    assert "another copy" in why[str(again)] and "orphan" in why[str(part / "00000000000000000000-orphanOrphanOrphan0000.index")]
    assert decoded(root) == rows_wanted(written)


def test_live_log_dirs_list_as_before(written, sample):
    """A topic id-like name on a live partition directory does not make it a tiered copy."""
    listing = list_log(str(written))
    assert [(p.topic, p.partition) for p in listing.partitions] == [(TOPIC, 0), (TOPIC, 3)]
    assert decoded(written) == rows_wanted(written)
    odd = written.parent / "odd"
    shutil.copytree(written / f"{TOPIC}-0", odd / f"x-{TOPIC_ID}-7")  # live dir whose topic ends like an id
    assert [(p.topic, p.partition) for p in list_log(str(odd)).partitions] == [(f"x-{TOPIC_ID}", 7)]
    assert list_log(str(sample)).partitions
