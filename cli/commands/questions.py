"""describe, find and offsets: the questions an operator asks of a log dir first."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from .reading import partition_name
from .progress import partitions_size, progress
from .terminal import cell, say

PATH = click.Path(exists=True, path_type=Path)
TOPIC_HELP = "Only topics whose whole name matches this regular expression (as kafka-get-offsets' --topic)."
PARTITIONS_HELP = "Only these partitions: a comma-separated list of numbers and ranges, e.g. 0,2-4."


class Partitions:
    """Partition numbers as ranges (kept as ranges: `0-2147483647` costs nothing)."""

    def __init__(self, ranges: list[tuple[int, int]]):
        self.ranges = ranges

    def __contains__(self, number: int) -> bool:
        return any(low <= number <= high for low, high in self.ranges)


def parse_partitions(text: str | None) -> Partitions | None:
    if text is None:
        return None
    ranges = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if not m:
            raise click.BadParameter(f"{part!r} is not a partition number or a range such as 2-4",
                                     param_hint="--partitions")
        low, high = int(m[1]), int(m[2] or m[1])
        if high < low:
            raise click.BadParameter(f"{part!r}: the range ends before it starts", param_hint="--partitions")
        ranges.append((low, high))
    return Partitions(ranges)


def parse_time(text: str) -> int:
    """Milliseconds since the epoch from a number of them or an ISO 8601 time (UTC unless it
    says otherwise): 1700000000000, 2026-11-22T03:12:00Z, 2026-11-22 03:12."""
    import datetime as dt

    if re.fullmatch(r"-?[0-9]+", text.strip()):  # its length first: int() refuses more than 4,300 digits
        if len(text.strip().lstrip("-").lstrip("0")) > 19 or not -2 ** 63 <= int(text) < 2 ** 63:
            shown = text.strip() if len(text.strip()) <= 40 else f"{text.strip()[:20]}... ({len(text.strip())} characters)"
            raise click.BadParameter(f"{shown!r} is beyond the 64-bit milliseconds Kafka's timestamps hold")
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r} is neither milliseconds since the epoch nor an ISO 8601 time "
                                 "such as 2026-11-22T03:12:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    micros = (when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
    return -(-micros // 1000)  # a time between two milliseconds: the later, so nothing before it is found


def show_time(ms: int | None) -> str:
    """ISO 8601 in UTC; `-` for none, and the milliseconds beyond the calendar Python knows."""
    from kafkacodec.storage.audit.times import iso_millis

    if ms is None or ms < 0:
        return "-"
    return iso_millis(ms) or str(ms)


def selected(path: Path, topic: str | None, partitions: Partitions | None):
    """The log dir at `path` and its partitions that the filters select."""
    from kafkacodec.storage.layout import logdir

    root = logdir.at_path(path)
    try:
        pattern = re.compile(topic) if topic is not None else None
    except re.error as err:
        raise click.BadParameter(f"{topic!r} is not a regular expression: {err}", param_hint="--topic") from None
    chosen = [p for p in root.partitions if (pattern is None or pattern.fullmatch(p.topic))
              and (partitions is None or p.partition in partitions)]
    return root, chosen


def _range(low, high) -> str:
    return "-" if low is None else f"{low}..{high}"


def _cells(n, offsets: str) -> list[str]:
    """A describe row's cells after its name, for a partition or the sum of several."""
    txns = f"{n.committed} committed, {n.aborted} aborted" + (f", [yellow]{n.open} open[/yellow]" if n.open else "")
    status = f"[red]damaged ({n.damaged_segments} segment{'s' if n.damaged_segments != 1 else ''})[/red]" \
        if n.damaged_segments else "ok"
    return [f"{n.segments:,}", f"{n.bytes:,}", f"{n.records:,}", offsets,
            f"{show_time(n.first_timestamp)} .. {show_time(n.max_timestamp)}",
            ", ".join(f"{c} {k}" for c, k in sorted(n.codecs.items())) or "-",
            str(len(n.producers)) + (f" ({len(n.transactional_producers)} transactional)"
                                     if n.transactional_producers else ""),
            txns if n.producers else "-", status]


@click.command()
@click.argument("path", type=PATH)
@click.option("--segments", "per_segment", is_flag=True, help="A row per segment, not only per partition.")
@click.option("--topic", default=None, help=TOPIC_HELP)
@click.option("--partitions", default=None, help=PARTITIONS_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition, its segments included.")
def describe(path: Path, per_segment: bool, topic: str | None, partitions: str | None, as_json: bool) -> None:
    """What a log dir, a partition or a segment holds: per partition its segments, size, records,
    offset and time ranges, codecs, producers, transactions (committed, aborted, open) and damage;
    then the sums of each topic of several partitions and of them all (a producer counted once).

    Batches are read as `verify --quick` reads them (framing and CRCs); index files are said
    present or missing, their entries are checked by `verify`. Exit status: 0, or 1 when
    any segment is damaged (run `kafkacodec verify` for every problem, `recover` to cut damage)."""
    from rich.console import Console
    from rich.table import Table

    from kafkacodec.storage.audit.overview import Totals, summarise_partition, totals

    root, chosen = selected(path, topic, parse_partitions(partitions))
    summaries = []
    with progress(partitions_size(chosen), "reading") as advance:
        for part in chosen:
            summaries.append(summarise_partition(part))
            advance(sum(s.bytes for s in summaries[-1].segments))
    damaged = [(p, s) for p in summaries for s in p.damaged]
    if as_json:
        for p in summaries:
            click.echo(json.dumps(p.to_json()))
        sys.exit(1 if damaged else 0)
    table = Table("partition", "segments", "bytes", "records", "offsets", "timestamps (UTC)", "codecs",
                  "producers", "transactions", "status", title=cell(str(path)))
    by_topic, everything = totals(summaries)
    sums = [(f"{cell(topic)} ({n.partitions} partitions)", n) for topic, n in by_topic.items() if n.partitions > 1]
    if len(summaries) > 1:  # sums where they say more than the rows above them: per topic, then overall
        sums.append((f"all ({everything.partitions} partitions, {len(by_topic)} topics)", everything))
    for i, p in enumerate(summaries):
        one = Totals()
        one.add(p)
        table.add_row(cell(partition_name(p)), *_cells(one, _range(p.first_offset, p.last_offset)),
                      end_section=i == len(summaries) - 1)
    for name, n in sums:
        table.add_row(name, *_cells(n, "-"))
    console = Console()
    if not console.is_terminal:  # a file or a pipe: whole values rather than cut to 80 columns
        console = Console(width=240)
    console.print(table)
    if per_segment:
        seg_table = Table("partition", "segment", "bytes", "batches", "records", "offsets", "max timestamp (UTC)",
                          "indexes", "status")
        for p in summaries:
            for s in p.segments:
                seg_table.add_row(cell(partition_name(p)), cell(Path(s.file).name), f"{s.bytes:,}", f"{s.batches:,}", f"{s.records:,}",
                                  _range(s.first_offset, s.last_offset), show_time(s.max_timestamp),
                                  "missing " + ", ".join(s.missing_indexes) if s.missing_indexes else "present",
                                  f"[red]{cell(s.damage)}[/red]" if s.damage else "ok")
        console.print(seg_table)
    for p in summaries:
        for producer, first in p.transactions.open:
            say(f"{partition_name(p)}: producer {producer}'s transaction from offset {first} is open "
                       "(no marker yet: read-committed consumers stop before it)", err=True)
    for where, why in root.skipped + [s for p in chosen for s in p.skipped]:
        say(f"skipped {where}: {why}", err=True)
    for p, s in damaged:
        say(f"{s.file}: {s.damage}; run `kafkacodec recover {p.path}` to cut it (the cut bytes are kept)",
                   err=True)
    missing = sorted({p.path for p in summaries for s in p.segments if s.missing_indexes})
    if missing:
        say(f"{len(missing)} partition{'s lack' if len(missing) != 1 else ' lacks'} index files; "
                   f"run `kafkacodec reindex {path}` to rebuild them", err=True)
    sys.exit(1 if damaged else 0)


@click.command()
@click.argument("path", type=PATH)
@click.option("--time", "spec", default="latest", show_default=True,
              help="latest (-1), earliest (-2), max-timestamp (-3), earliest-local (-4), latest-tiered (-5), or a "
                   "time: milliseconds since the epoch or ISO 8601.")
@click.option("--topic", default=None, help=TOPIC_HELP)
@click.option("--partitions", default=None, help=PARTITIONS_HELP)
@click.option("--topic-partitions", "rules", default=None, metavar="RULES",
              help="kafka-get-offsets' rules instead of --topic and --partitions: comma-separated TOPIC-REGEX:PARTITIONS, "
                   "PARTITIONS being N, N-M (M excluded), N-, -M or nothing; e.g. orders:0-3,audit,:5-.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per partition selected: topic, partition, offset (null when there is none).")
def offsets(path: Path, spec: str, topic: str | None, partitions: str | None, rules: str | None,
            as_json: bool) -> None:
    """Offsets as kafka-get-offsets prints them (`topic:partition:offset`, ordered as there), from
    the files: the log end offset (latest), the log start offset (earliest), the offset of the
    record with the largest timestamp, or the first offset whose timestamp is at or after a time.
    A partition with no such offset is not printed, as Kafka's tool leaves it out (--json gives it
    with a null offset). Exit status 1 when no partition is selected or one could not be read (said
    on stderr; the others are still answered)."""
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.audit.positions import offset_for
    from .topic_partitions import parse_topic_partitions, selects

    if rules is not None and (topic is not None or partitions is not None):
        raise click.UsageError("--topic-partitions cannot be used with --topic or --partitions")
    kind = {"-1": "latest", "-2": "earliest", "-3": "max-timestamp", "-4": "earliest-local",
            "-5": "latest-tiered"}.get(spec.strip(), spec.strip())
    target = None
    if kind not in ("latest", "earliest", "max-timestamp", "earliest-local", "latest-tiered"):
        target, kind = parse_time(spec), "timestamp"
    root, chosen = selected(path, topic, parse_partitions(partitions))
    if rules is not None:
        parsed = parse_topic_partitions(rules)
        chosen = [p for p in chosen if selects(parsed, p.topic, p.partition)]
    if not chosen:
        say(f"error: no partition of {path} matches the filters", err=True)
        sys.exit(1)
    failed = False
    for part in sorted(chosen, key=lambda p: f"{p.topic}-{p.partition}"):  # Kafka's order: the names as text
        found, error = None, None
        try:
            found = offset_for(part, kind, target, root.path)
        except KafkaCodecError as err:  # this partition's answer is unknown; the others' still are
            error = str(err)
            say(f"error: {part.topic}-{part.partition}: {err}", err=True)
            failed = True
        if as_json:
            click.echo(json.dumps({"topic": part.topic, "partition": part.partition, "offset": found,
                                   **({"error": error} if error else {})}))
        elif found is not None:
            say(f"{part.topic}:{part.partition}:{found}")
    sys.exit(1 if failed else 0)


@click.command()
@click.argument("path", type=PATH)
@click.option("--key", default=None, help="Every record with this key (UTF-8 text; see --hex).")
@click.option("--offset", type=click.IntRange(0, 2 ** 63 - 1), default=None, help="The record at this offset, through the .index.")
@click.option("--timestamp", default=None,
              help="The first record at or after this time (ms since the epoch or ISO 8601), through the .timeindex.")
@click.option("--hex", "key_hex", is_flag=True, help="--key is hexadecimal bytes.")
@click.option("--topic", default=None, help=TOPIC_HELP)
@click.option("--partitions", default=None, help=PARTITIONS_HELP)
@click.option("--no-index", is_flag=True, help="--offset and --timestamp read the log from its start instead "
              "of going through the indexes (for indexes `verify` reports damaged, before `reindex`).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per record found.")
def find(path: Path, key: str | None, offset: int | None, timestamp: str | None, key_hex: bool, topic: str | None,
         partitions: str | None, no_index: bool, as_json: bool) -> None:
    """Records by key, offset or time in each partition, with the file and byte position of their
    batch. --offset and --timestamp go through the indexes as a broker's fetch does (so they answer
    what a consumer would be given); --key, and --no-index, read every record. Exit status 0 when
    something is found, 1 when nothing is or a partition could not be searched (said on stderr;
    the other partitions still are)."""
    from kafkacodec.storage.audit.positions import records_at_offset, records_at_time, records_with_key

    if sum(x is not None for x in (key, offset, timestamp)) != 1:
        raise click.UsageError("give exactly one of --key, --offset and --timestamp")
    if key is not None:
        try:
            wanted = bytes.fromhex(key) if key_hex else key.encode("utf-8", "surrogateescape")
        except ValueError:
            raise click.BadParameter(f"{key!r} is not hexadecimal bytes", param_hint="--key") from None
    from kafkacodec.runtime.errors import KafkaCodecError

    root, chosen = selected(path, topic, parse_partitions(partitions))
    found, failed = 0, False
    with progress(partitions_size(chosen) if key is not None else 0, "searching") as advance:
        for part in chosen:
            if key is not None:
                hits = records_with_key(part, wanted, advance)
            elif offset is not None:
                hits = records_at_offset(part, offset, use_index=not no_index)
            else:
                hits = records_at_time(part, parse_time(timestamp), use_index=not no_index)
            try:
                for hit in hits:
                    found += 1
                    click.echo(json.dumps(hit.to_json())) if as_json else say(hit.line())
            except KafkaCodecError as err:  # this partition cannot be searched; the others still are
                say(f"error: {part.topic}-{part.partition}: {err}", err=True)
                failed = True
    sys.exit(0 if found and not failed else 1)
