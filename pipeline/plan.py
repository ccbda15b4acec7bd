"""Turn Spark-Kafka-style options into slices of segments: which partitions, which offsets
(resolved through the .index and .timeindex), which byte ranges, split at batch boundaries that
the .index names. No pyspark import."""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace

from kafkacodec.storage.indexes import index
from kafkacodec.storage.layout.names import is_legal_topic

from .columns import ddl
from .decode import ON_CORRUPT, ReadOptions, Slice
from .files import Listing, PartitionFiles, list_log
from .segment_reads import offset_for_timestamp, read_aborted, read_indexes
from .stable import stable_end

EARLIEST, LATEST = -2, -1
DEFAULT_MAX_BYTES = 64 << 20
log = logging.getLogger("kafkacodec.pipeline")


class OptionError(ValueError):
    """An option that does not make sense; the message names it."""


def _bool(options: dict, name: str, default: bool) -> bool:
    value = options.get(name.lower())
    if value is None:
        return default
    if str(value).lower() not in ("true", "false"):
        raise OptionError(f"option {name} must be true or false, not {value!r}")
    return str(value).lower() == "true"


@dataclass(frozen=True)
class Plan:
    """Options as parsed, independent of the files."""
    uri: str
    options: ReadOptions
    subscribe: tuple[str, ...] | None = None
    pattern: str | None = None
    assign: dict | None = None
    starting: str | dict = "earliest"
    ending: str | dict = "latest"
    starting_ts: int | dict | None = None
    ending_ts: int | dict | None = None
    ts_strategy: str = "error"
    max_bytes: int = DEFAULT_MAX_BYTES


def parse_options(options: dict) -> Plan:
    """Options as Spark hands them to a data source: lower-cased names, string values."""
    o = {k.lower(): v for k, v in options.items()}
    uri = o.get("path")
    if not uri:
        raise OptionError("a path is needed: load('/path/to/log.dirs') or a partition directory or a segment")
    chosen = [k for k in ("subscribe", "subscribepattern", "assign") if o.get(k)]
    if len(chosen) > 1:
        raise OptionError("give at most one of subscribe, subscribePattern and assign")
    on_corrupt = o.get("oncorrupt", "fail").lower()
    if on_corrupt not in ON_CORRUPT:
        raise OptionError(f"onCorrupt must be one of {', '.join(ON_CORRUPT)}, not {on_corrupt!r}")
    isolation = o.get("isolationlevel", "read_uncommitted").lower()
    if isolation not in ("read_uncommitted", "read_committed"):
        raise OptionError(f"isolationLevel must be read_uncommitted or read_committed, not {isolation!r}")
    read = ReadOptions(include_headers=_bool(o, "includeHeaders", False), verify_crc=_bool(o, "verifyCrc", True),
                       on_corrupt=on_corrupt, read_committed=isolation == "read_committed",
                       include_control=_bool(o, "includeControlRecords", False))

    def offsets(name: str, default: str):
        value = o.get(name.lower(), default)
        if value in ("earliest", "latest"):
            return value
        try:
            parsed = json.loads(value)
        except ValueError:
            raise OptionError(f"option {name} must be earliest, latest or JSON like "
                              '{"topic": {"0": 23}}, not ' + repr(value)) from None
        if not isinstance(parsed, dict):
            raise OptionError(f"option {name} must be a JSON object of topics")
        return parsed

    def timestamps(name: str, by_name: str):
        if o.get(name.lower()):
            return int(o[name.lower()])
        if o.get(by_name.lower()):
            return json.loads(o[by_name.lower()])
        return None

    starting, ending = offsets("startingOffsets", "earliest"), offsets("endingOffsets", "latest")
    if ending == "earliest":
        raise OptionError("endingOffsets earliest is not allowed for a batch query (as in Spark's Kafka source)")
    if starting == "latest":
        raise OptionError("startingOffsets latest is not allowed for a batch query (as in Spark's Kafka source)")
    try:
        max_bytes = int(o.get("maxbytesperpartition", DEFAULT_MAX_BYTES))
    except ValueError:
        raise OptionError("maxBytesPerPartition must be a number of bytes") from None
    return Plan(
        uri=uri, options=read,
        subscribe=tuple(t.strip() for t in o["subscribe"].split(",")) if o.get("subscribe") else None,
        pattern=o.get("subscribepattern") or None,
        assign=json.loads(o["assign"]) if o.get("assign") else None,
        starting=starting, ending=ending,
        starting_ts=timestamps("startingTimestamp", "startingOffsetsByTimestamp"),
        ending_ts=timestamps("endingTimestamp", "endingOffsetsByTimestamp"),
        ts_strategy=o.get("startingoffsetsbytimestampstrategy", "error").lower(), max_bytes=max(1, max_bytes))


def named_topics(options: dict) -> tuple[str, ...] | None:
    """The topics `subscribe` or `assign` name (options lower-cased), or None."""
    if options.get("subscribe"):
        return tuple(t.strip() for t in options["subscribe"].split(","))
    if options.get("assign"):
        try:
            return tuple(json.loads(options["assign"]))
        except (ValueError, TypeError):
            return None
    return None


def options_for_schema(schema, options: ReadOptions) -> ReadOptions:
    """ReadOptions for the schema Spark hands the reader: ours (all columns), or a user's narrower
    one naming some of ours with our types (headers included when named), checked here."""
    ours = {n: t for n, t in (f.split(" ", 1) for f in ddl(True).split(", "))}
    typed = [name for column in options.typed for name in column.names()]
    names = tuple(schema.fieldNames())
    if list(names) == [f.split(" ", 1)[0] for f in ddl(options.include_headers).split(", ")] + typed:
        return options
    for field in schema.fields:
        if field.name in typed:
            continue
        want = ours.get(field.name)
        if want is None:
            raise OptionError(f"the schema names {field.name!r}, which is not a column of kafka-log "
                              f"(its columns: {', '.join(ours)})")
        got = field.dataType.simpleString()
        if got != want.replace("long", "bigint"):
            raise OptionError(f"the schema gives {field.name!r} the type {got}; kafka-log's is {want}")
    return replace(options, columns=names, include_headers=options.include_headers or "headers" in names)


def selected(plan: Plan, part: PartitionFiles) -> bool:
    if plan.subscribe is not None:
        return part.topic in plan.subscribe
    if plan.pattern is not None:
        return re.fullmatch(plan.pattern, part.topic) is not None
    if plan.assign is not None:
        return part.partition in plan.assign.get(part.topic, ())
    return True


def not_found(plan: Plan, partitions: list[PartitionFiles]) -> str | None:
    """What subscribe, subscribePattern or assign names that the log dir does not hold, said for a
    warning (a read of it is no rows, which looks like an empty topic), or None."""
    topics = {p.topic for p in partitions}
    where = f"under {plan.uri}"
    if plan.subscribe is not None:
        missing = [t for t in plan.subscribe if t not in topics]
        if not missing:
            return None
        hint = "" if all(is_legal_topic(t) for t in missing) else \
            " (subscribe takes topic names separated by commas; subscribePattern takes a regular expression)"
        return f"subscribe names topics with no partition {where}: {', '.join(map(repr, missing))}{hint}"
    if plan.pattern is not None:
        if any(re.fullmatch(plan.pattern, t) for t in topics):
            return None
        return f"subscribePattern {plan.pattern!r} matches no topic {where}"
    if plan.assign is not None:
        held = {(p.topic, p.partition) for p in partitions}
        missing = [f"{t}-{n}" for t, numbers in plan.assign.items() for n in numbers if (t, n) not in held]
        return f"assign names partitions not {where}: {', '.join(missing)}" if missing else None
    return None


def _per_partition(value, part: PartitionFiles):
    """A value given for all partitions, or per topic and partition in JSON; None if not named."""
    if isinstance(value, dict):
        got = value.get(part.topic, {}).get(str(part.partition))
        return None if got is None else int(got)
    return value


def _bounds(plan: Plan, part: PartitionFiles) -> tuple[int | None, int | None]:
    start = _per_partition(plan.starting, part) if isinstance(plan.starting, dict) else None
    end = _per_partition(plan.ending, part) if isinstance(plan.ending, dict) else None
    start = None if start in (None, EARLIEST) else start
    end = None if end in (None, LATEST) else end
    ts = _per_partition(plan.starting_ts, part)
    if ts is not None:
        found = offset_for_timestamp(plan.uri, part, ts)
        if found is None and plan.ts_strategy == "error":
            raise OptionError(f"no record at or after timestamp {ts} in {part.topic}-{part.partition} "
                              "(startingOffsetsByTimestampStrategy=latest reads nothing instead)")
        start = found if found is not None else 1 << 62  # strategy latest: past every offset, nothing read
    ts = _per_partition(plan.ending_ts, part)
    if ts is not None:
        found = offset_for_timestamp(plan.uri, part, ts)
        end = found  # None: no record that late, so up to the end
    return start, end


def _narrowed(pushed: dict, uri: str, part: PartitionFiles, start: int | None, end: int | None):
    """Bounds tightened by pushed filters (topics, partitions, offset range, earliest timestamp);
    None when the partition has nothing to read."""
    if part.topic not in pushed.get("topics", (part.topic,)) or \
            part.partition not in pushed.get("partitions", (part.partition,)):
        return None
    if "offset_lo" in pushed:
        start = pushed["offset_lo"] if start is None else max(start, pushed["offset_lo"])
    if "offset_hi" in pushed:
        end = pushed["offset_hi"] if end is None else min(end, pushed["offset_hi"])
    if "ts_lo" in pushed:  # every offset before the first one at or after it has an earlier timestamp
        first = offset_for_timestamp(uri, part, pushed["ts_lo"])
        if first is None:
            return None
        start = first if start is None else max(start, first)
    if start is not None and end is not None and start >= end:
        return None
    return start, end


def slices(plan: Plan, max_bytes: int | None = None, pushed: dict | None = None,
           listing: Listing | None = None) -> tuple[list[Slice], list[tuple[str, str]]]:
    """The slices to read, and what was passed over and why. `pushed` holds bounds taken from
    filters: `topics`, `partitions`, `offset_lo`, `offset_hi` (exclusive), `ts_lo`. `listing`:
    the log dir's, when the caller has listed it already."""
    listing = listing or list_log(plan.uri)
    max_bytes = max_bytes or plan.max_bytes
    out = []
    stopped: list[str] = []  # what read_committed cut at a last stable offset, said in one warning
    passed_over: list[tuple[str, str]] = []  # damaged producer snapshots
    for part in listing.partitions:
        if not selected(plan, part):
            continue
        start, end = _bounds(plan, part)
        if pushed:
            bounds = _narrowed(pushed, plan.uri, part, start, end)
            if bounds is None:
                continue
            start, end = bounds
        aborted: tuple = ()
        if plan.options.read_committed:
            end = _stable_bound(plan.uri, part, end, stopped, passed_over)
            if start is not None and end is not None and start >= end:
                continue
            aborted = tuple((t.producer_id, t.first_offset, t.last_offset) for seg in part.segments if seg.txn_index
                            for t in read_aborted(plan.uri, seg))
        nexts = [s.base_offset for s in part.segments[1:]] + [None]
        for seg, next_base in zip(part.segments, nexts):
            if end is not None and seg.base_offset >= end:
                break
            if start is not None and next_base is not None and next_base <= start:
                continue
            ends_here = end is not None and (next_base is None or next_base > end)
            offsets = read_indexes(plan.uri, seg)[0] if (seg.size > max_bytes or start or ends_here) else []
            first = index.lookup_offset(offsets, seg.base_offset, start).position \
                if start is not None and start > seg.base_offset else 0
            last = _end_position(offsets, end) if ends_here else None
            base = Slice(seg.log, part.topic, part.partition, first, None, start, end, aborted, plan.options, plan.uri)
            inside = [e.position for e in offsets if e.position > first and (last is None or e.position < last)]
            cuts = [first] + _split_points(inside, first, max_bytes)
            for a, b in zip(cuts, cuts[1:] + [last]):
                out.append(replace(base, start_pos=a, end_pos=b))
    if stopped:
        log.warning("kafka-log: isolationLevel=read_committed reads nothing at or past a partition's last stable "
                    "offset, the first offset of its earliest transaction with no COMMIT or ABORT marker yet, as "
                    "Kafka's read_committed consumers do: %s", "; ".join(stopped))
    if passed_over:
        log.warning("kafka-log: damaged producer snapshots passed over for older ones (the last stable offset is "
                    "found from those and the batches after them): %s",
                    "; ".join(f"{path} ({why})" for path, why in passed_over))
    return out, listing.skipped


def planned(plan: Plan, pushed: dict | None = None) -> list[Slice]:
    """The slices of a read (see `slices`), after a warning naming what subscribe, subscribePattern
    or assign names that the path does not hold (a read of it is no rows)."""
    listing = list_log(plan.uri)
    missing = not_found(plan, listing.partitions)
    if missing is not None:
        log.warning("kafka-log: %s", missing)
    return slices(plan, pushed=pushed, listing=listing)[0]


def _stable_bound(uri: str, part: PartitionFiles, end: int | None, stopped: list[str],
                  passed_over: list) -> int | None:
    """`end` lowered to the partition's last stable offset where a transaction is still open at its
    log end, with why added to `stopped`."""
    stable = stable_end(uri, part)
    if stable is None:
        return end
    passed_over += stable.bad_snapshots
    reach, short_of = end, f"its log end {stable.log_end}" if end is None else f"the end asked for, {end}"
    loaded_end = _loaded_end(part)
    if loaded_end is not None and (end is None or loaded_end < end):
        reach, short_of = loaded_end, f"the end of the segment loaded, {loaded_end}"
    if not stable.still_open or (reach is not None and reach <= stable.offset):
        return end
    which = " and ".join(f"producer {pid}'s from offset {first}" for pid, first in stable.still_open)
    plural = "s" if len(stable.still_open) > 1 else ""
    stopped.append(f"{part.topic}-{part.partition} stops at {stable.offset}, short of {short_of} "
                   f"(open transaction{plural}: {which})")
    return stable.offset


def _loaded_end(part: PartitionFiles) -> int | None:
    """Where the segment loaded alone ends (the next one's base offset); None for a whole
    partition, or a last segment, which end at the log end."""
    if part.log_segments is None:
        return None
    return next((s.base_offset for s in part.log_segments if s.base_offset > part.segments[-1].base_offset), None)


def _end_position(offsets: list, end: int) -> int | None:
    """Where the bytes of offsets before `end` have surely ended: an index entry names a batch by
    its last offset, so the first entry at or past `end` may name a batch that starts before it,
    and the entry after that one names a batch wholly past it. None: the end of the file."""
    for i, entry in enumerate(offsets):
        if entry.offset >= end:
            return offsets[i + 1].position if i + 1 < len(offsets) else None
    return None


def _split_points(positions: list[int], start: int, max_bytes: int) -> list[int]:
    """Batch starts (from the .index) about `max_bytes` apart."""
    cuts, last = [], start
    for p in positions:
        if p - last >= max_bytes:
            cuts.append(p)
            last = p
    return cuts
