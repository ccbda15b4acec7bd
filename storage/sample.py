"""A sample log directory, the same bytes on every run: what a broker's disk looks like after a
topic lived through the message-format upgrades, plus producers of every kind.

- clicks-0: magic 0, then magic 1 (a log-append-time wrapper among them), then v2 with headers,
  in every codec, over several segments with indexes;
- clicks-1: v2 with null keys and tombstones (null values);
- payments-0: an idempotent producer, then a transactional one: a committed transaction and an
  aborted one, each closed by its control marker.
Plus the log dir's checkpoints, meta.properties and each partition's partition.metadata and
leader-epoch-checkpoint.
"""
from __future__ import annotations

import base64
from pathlib import Path

from . import textfiles
from .writer import PartitionWriter

T0 = 1_600_000_000_000
SEGMENT_BYTES = 16 * 1024
CODECS = ("none", "gzip", "snappy", "lz4")


def _events(start: int, n: int, headers: bool = False, size: int = 60):
    return [{"key": b"user-%d" % ((start + i) % 7),
             "value": (b'{"n":%d,"pad":"' % (start + i)) + b"x" * (size + (start + i) % 40) + b'"}',
             "timestamp": T0 + 1000 * (start + i),
             "headers": [("source", b"web"), ("trace", b"%08x" % (start + i))] if headers and i % 2 == 0 else []}
            for i in range(n)]


def _marker(kind: int, epoch: int = 0) -> list[dict]:
    """A transaction marker: control key (version 0, type) and EndTransactionMarker value."""
    return [{"key": b"\x00\x00" + kind.to_bytes(2, "big"), "value": b"\x00\x00" + epoch.to_bytes(4, "big"),
             "timestamp": T0 + 999_999}]


def _clicks_0(w: PartitionWriter) -> None:
    n = 0
    for magic, codecs in ((0, CODECS), (1, CODECS), (2, CODECS + ("zstd",))):
        for codec in codecs * 3:
            options = {"magic": magic, "compression": codec}
            if magic == 1 and codec == "lz4":
                options.update(timestamp_type="LogAppendTime", log_append_time=T0 + 1000 * (n + 10))
            w.append(_events(n, 10, headers=magic == 2), **options)
            n += 10


def _clicks_1(w: PartitionWriter) -> None:
    for i in range(20):
        recs = _events(i * 5, 5, headers=True)
        for j, r in enumerate(recs):
            if (i + j) % 4 == 0:
                r["key"] = None
            if (i + j) % 5 == 0:
                r["value"] = None  # a tombstone
        w.append(recs, compression=CODECS[i % 4])


def _payments_0(w: PartitionWriter) -> None:
    for seq in range(0, 30, 5):  # idempotent producer 1000
        w.append(_events(seq, 5), producer_id=1000, producer_epoch=0, base_sequence=seq, compression="lz4")
    txn = {"producer_id": 2000, "producer_epoch": 3, "is_transactional": True}
    w.append(_events(100, 4), base_sequence=0, **txn)
    w.append(_events(104, 4), base_sequence=4, **txn)
    w.append(_marker(1), is_control=True, **txn)  # COMMIT
    w.append(_events(108, 4), base_sequence=8, compression="zstd", **txn)
    w.append(_marker(0), is_control=True, **txn)  # ABORT
    w.append(_events(112, 3), producer_id=1000, producer_epoch=0, base_sequence=30)


PARTITIONS = {("clicks", 0): _clicks_0, ("clicks", 1): _clicks_1, ("payments", 0): _payments_0}
TOPIC_IDS = {"clicks": bytes(range(1, 17)), "payments": bytes(range(17, 33))}


def write_sample(root: str | Path) -> list[Path]:
    """Write the sample into `root` (created; must not hold a partition yet); returns the partitions."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    ends = {}
    written = []
    for (topic, partition), fill in PARTITIONS.items():
        path = root / f"{topic}-{partition}"
        if path.exists():
            raise FileExistsError(f"{path} exists; the sample writes into an empty directory")
        with PartitionWriter(path, segment_bytes=SEGMENT_BYTES) as w:
            fill(w)
            ends[(topic, partition)] = w.next_offset
        topic_id = base64.urlsafe_b64encode(TOPIC_IDS[topic]).rstrip(b"=").decode()
        (path / textfiles.PARTITION_METADATA).write_text(f"version: 0\ntopic_id: {topic_id}")
        textfiles.write_checkpoint(path / textfiles.LEADER_EPOCH_CHECKPOINT, [[0, 0]])
        written.append(path)
    entries = [[t, p, end] for (t, p), end in sorted(ends.items())]
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        textfiles.write_checkpoint(root / name, entries)
    (root / textfiles.META_PROPERTIES).write_text(
        "#\n#Thu Sep 13 12:26:40 UTC 2020\nnode.id=1\nversion=1\ncluster.id=kafkacodec-sample00000\n")
    return written
