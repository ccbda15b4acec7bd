"""KRaft metadata as tables. `kafka-cluster-metadata`: one row per record of `__cluster_metadata`'s
segments and snapshots (a task per file), typed columns for what every record has and the
record's data as JSON. `kafka-cluster-state`: the cluster's state replayed as of `atOffset` or
`atTime` (else the end), as rows of partitions, brokers or configs (option `table`). Both read
any filesystem pyarrow reaches; the replay copies the metadata partition (megabytes) to a local
directory first when it is not local."""
from __future__ import annotations

import datetime as dt
import json
import os
import tempfile

import pyarrow.fs as pafs
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kafkacodec.codec.attribute_bits import CONTROL
from kafkacodec.codec.records import read_batches
from kafkacodec.runtime.errors import DecodeError
from kafkacodec.storage.layout import names
from kafkacodec.codec.kafka_json import CONTROL_TYPE_NAMES
from kafkacodec.storage.state.control_rules import read_key
from kafkacodec.storage.kraft.replay import TOPIC, Point, event_of, open_metadata_log, replay
from kafkacodec.storage.kraft.view import config_shown

from .columns import timestamp_micros
from .decode import Slice
from .files import filesystem, read_range, windows
from .tables import rows_batch

ROWS_PER_ARROW_BATCH = 10_000

RECORDS_DDL = ("file string, snapshotEndOffset long, offset long, timestamp timestamp, leaderEpoch int, "
               "isControl boolean, type string, version int, data string, error string")
AS_OF = "asOfOffset long, asOfTimestamp timestamp, corruption string"  # where the state stands, what stopped it
STATE_ON_CORRUPT = ("fail", "report")  # a replay cannot read past damage, so kafka-log's skip has no meaning here
STATE_DDL = {
    "partitions": ("topic string, topicId string, partition int, leader int, leaderEpoch int, partitionEpoch int, "
                   "replicas array<int>, isr array<int>, addingReplicas array<int>, removingReplicas array<int>, "
                   "eligibleLeaderReplicas array<int>, lastKnownElr array<int>, directories array<string>, "
                   f"leaderRecoveryState int, {AS_OF}"),
    "brokers": ("brokerId int, brokerEpoch long, incarnationId string, fenced boolean, inControlledShutdown boolean, "
                f"rack string, endpoints array<string>, logDirs array<string>, {AS_OF}"),
    "configs": f"resourceType string, resourceName string, name string, value string, {AS_OF}",
}
def metadata_dir(uri: str) -> tuple[pafs.FileSystem, str]:
    """The `__cluster_metadata-0` directory at or under `uri`."""
    fs, path = filesystem(uri)
    path = path.rstrip("/")
    if not os.path.basename(path).startswith(TOPIC + "-"):
        path = f"{path}/{TOPIC}-0"
    if fs.get_file_info(path).type != pafs.FileType.Directory:
        raise FileNotFoundError(f"{uri}: no {TOPIC}-0 directory here (name the metadata log dir or the partition)")
    return fs, path


def metadata_files(uri: str) -> list[tuple[str, int | None]]:
    """(path, end offset for a snapshot, None for a segment) of every file to read, in order."""
    fs, path = metadata_dir(uri)
    out = []
    for info in fs.get_file_info(pafs.FileSelector(path)):
        snap = names.kraft_snapshot_id(info.base_name)
        if snap is not None:
            out.append((info.path, snap[0]))
        elif names.is_segment_log(info.base_name) and not names.is_transient(info.base_name):
            out.append((info.path, None))
    return sorted(out, key=lambda f: (f[1] is None, f[0]))


class RecordsReader(DataSourceReader):
    def __init__(self, uri: str):
        self.uri = uri

    def partitions(self):
        return [InputPartition(f) for f in metadata_files(self.uri)]

    def read(self, partition):
        if partition.value is None:  # pyspark's one partition of an empty plan
            return
        path, snapshot_end = partition.value
        rows = []
        pos = 0
        last_type = None  # of the file's last record: a snapshot's must be its footer
        end = 0
        try:
            for pos, piece in windows(Slice(path, TOPIC, 0, uri=self.uri)):  # whole batches, a window at a time
                end = pos + len(piece)
                for batch in read_batches(piece):
                    if batch.is_legacy:  # Kafka's metadata reader stops at one; the rows go on past it
                        rows.append(self._problem(path, snapshot_end, pos + batch.position, batch.entry.offset,
                                                  f"a magic {batch.magic} log entry, where Kafka's metadata reader "
                                                  "takes only v2 record batches"))
                        last_type = None
                        continue
                    rows += [self._row(path, snapshot_end, rec, batch.entry) for rec in batch]
                    last_type = rows[-1][6] if rows else last_type
                if len(rows) >= ROWS_PER_ARROW_BATCH:
                    yield rows_batch(RECORDS_DDL, rows)
                    rows = []
        except DecodeError as err:  # the records before the damage stay; a row says where it is
            rows.append(self._problem(path, snapshot_end, pos + (err.position or 0), None, err.message))
        else:
            if snapshot_end is not None and last_type != "SNAPSHOT_FOOTER":
                rows.append(self._problem(path, snapshot_end, end, None, "no SnapshotFooter at the end: an incomplete "
                                          "snapshot (an interrupted write or copy), which Kafka never loads"))
        if rows:
            yield rows_batch(RECORDS_DDL, rows)

    @staticmethod
    def _problem(path: str, snapshot_end: int | None, position: int, offset: int | None, problem: str) -> list:
        return [path, snapshot_end, offset, None, None, None, None, None, None, f"byte {position}: {problem}"]

    @staticmethod
    def _row(path: str, snapshot_end: int | None, rec, entry) -> list:
        control = bool(entry.attributes & CONTROL)
        event = event_of(rec, entry.partition_leader_epoch, control)
        kind = version = data = None
        if control:
            fields, _ = read_key(bytes(rec.key or b""))  # a key Kafka refuses still names its type when whole
            number = None if fields is None else fields[1]
            kind = CONTROL_TYPE_NAMES.get(number, f"UNKNOWN({number})")
            data = None if event.control is None else json.dumps(event.control[1])
        elif event.record is not None:
            kind, version, data = event.record["type"], event.record["version"], json.dumps(event.record["data"])
        time = timestamp_micros(rec.timestamp)
        return [path, snapshot_end, rec.offset, time, entry.partition_leader_epoch, control, kind, version, data,
                event.problem]


class StateReader(DataSourceReader):
    def __init__(self, uri: str, options: dict):
        self.uri, self.options = uri, options

    def partitions(self):
        return [InputPartition(0)]

    def read(self, partition):
        """The state's rows. A replay that stopped before the point (damage, a gap, a record
        Kafka's reader cannot decode, a log ending before atOffset) fails the read, or with
        onCorrupt=report gives the state where it stopped, every row's `corruption` saying why
        (a row of nulls but for it when the state has none). Snapshots passed over are said there
        too: the state is still whole, as the log stands for them."""
        table = self.options.get("table", "partitions")
        at_offset, at_time = self.options.get("atoffset"), self.options.get("attime")
        point = Point(offset=None if at_offset is None else int(at_offset),
                      time=None if at_time is None else _millis(at_time))
        with _local(self.uri) as local:
            state, stopped = replay(open_metadata_log(local), point)
        if stopped is not None and _on_corrupt(self.options) == "fail":
            raise state.stop
        said = "; ".join(state.notes + ([f"the state is the one after offset {state.offset}: {stopped}"]
                                        if stopped is not None else [])) or None
        as_of = [state.offset, None if state.time is None else state.time * 1000, said]
        show_secrets = str(self.options.get("showsecrets", "false")).lower() == "true"
        rows = [row + as_of for row in ROWS[table](state.image, show_secrets)]
        if not rows and said is not None:
            rows = [[None] * (len(STATE_DDL[table].split(",")) - len(as_of)) + as_of]
        if rows:
            yield rows_batch(STATE_DDL[table], rows)


def _on_corrupt(options: dict) -> str:
    value = str(options.get("oncorrupt", "fail")).lower()
    if value not in STATE_ON_CORRUPT:
        raise ValueError(f"kafka-cluster-state: onCorrupt must be one of {', '.join(STATE_ON_CORRUPT)}, not {value!r} "
                         "(a replay cannot go on past damage, so there is no skip)")
    return value


def _millis(text: str) -> int:
    """Milliseconds since the epoch, or an ISO 8601 time (UTC unless it says otherwise)."""
    if text.strip().lstrip("-").isdigit():
        return int(text)
    when = dt.datetime.fromisoformat(text.strip())
    when = when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)
    return (when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)


class _local:
    """The metadata partition as a local directory: itself, or a temporary copy of its files."""

    def __init__(self, uri: str):
        self.uri, self.tmp = uri, None

    def __enter__(self) -> str:
        fs, path = metadata_dir(self.uri)
        if isinstance(fs, pafs.LocalFileSystem):
            return path
        self.tmp = tempfile.TemporaryDirectory(prefix="kafkacodec-metadata-")
        target = os.path.join(self.tmp.name, f"{TOPIC}-0")
        os.mkdir(target)
        for info in fs.get_file_info(pafs.FileSelector(path)):
            if info.type == pafs.FileType.File:
                with open(os.path.join(target, info.base_name), "wb") as out:
                    out.write(read_range(self.uri, info.path))
        return target

    def __exit__(self, *exc) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()


def _partition_rows(image, show_secrets: bool) -> list[list]:
    return [[t["name"], t["topicId"], n, p["leader"], p["leaderEpoch"], p["partitionEpoch"], p["replicas"], p["isr"],
             p["addingReplicas"], p["removingReplicas"], p["eligibleLeaderReplicas"], p["lastKnownElr"],
             p["directories"], p["leaderRecoveryState"]]
            for t in sorted(image.topics.values(), key=lambda t: t["name"]) for n, p in sorted(t["partitions"].items())]


def _broker_rows(image, show_secrets: bool) -> list[list]:
    return [[b["brokerId"], b["brokerEpoch"], b["incarnationId"], b["fenced"], b["inControlledShutdown"], b["rack"],
             [f"{e['name']}://{e['host']}:{e['port']}" for e in b["endPoints"]], b["logDirs"]]
            for _, b in sorted(image.brokers.items())]


def _config_rows(image, show_secrets: bool) -> list[list]:
    return [[kind, name, key, config_shown(key, value, show_secrets)]
            for (kind, name), values in sorted(image.configs.items()) for key, value in sorted(values.items())]


ROWS = {"partitions": _partition_rows, "brokers": _broker_rows, "configs": _config_rows}


class _MetadataTable(DataSource):
    NAME = ""

    @classmethod
    def name(cls) -> str:
        return cls.NAME

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise ValueError(f"{self.NAME}: load(path) needs a metadata log dir or __cluster_metadata-0")
        return path


class ClusterMetadataDataSource(_MetadataTable):
    NAME = "kafka-cluster-metadata"

    def schema(self):
        return RECORDS_DDL

    def reader(self, schema):
        return RecordsReader(self._path())


class ClusterStateDataSource(_MetadataTable):
    NAME = "kafka-cluster-state"

    def schema(self):
        options = {k.lower(): v for k, v in self.options.items()}
        table = options.get("table", "partitions")
        if table not in STATE_DDL:
            raise ValueError(f"{self.NAME}: table {table!r} is not one of {', '.join(STATE_DDL)}")
        _on_corrupt(options)
        return STATE_DDL[table]

    def reader(self, schema):
        return StateReader(self._path(), {k.lower(): v for k, v in self.options.items()})  # Spark's are any case
