"""cat: the records of a log dir with their keys and values decoded, as kcat prints a topic,
from the schemas the log dir itself holds."""
from __future__ import annotations

import sys
from collections import deque
from dataclasses import replace
from pathlib import Path

import click

from .questions import PARTITIONS_HELP, TOPIC_HELP, parse_partitions, parse_time, selected
from .terminal import say
from .value_options import decoders, format_options, schema_options


def _position(text: str | None, option: str):
    """An offset, or a time after @ (milliseconds or ISO 8601), as (kind, number)."""
    if text is None:
        return None
    if text.startswith("@"):
        return "time", parse_time(text[1:])
    if not text.isdigit() or len(text) > 19 or int(text) >= 2 ** 63:
        raise click.BadParameter(f"{text!r} is neither an offset (0 to 2^63-1) nor @ and a time", param_hint=option)
    return "offset", int(text)


@click.command(name="cat")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--topic", default=None, help=TOPIC_HELP)
@click.option("--partitions", default=None, help=PARTITIONS_HELP)
@click.option("--from", "start", default=None, metavar="OFFSET|@TIME",
              help="Start at this offset, or at the first record at or after this time (through the .timeindex).")
@click.option("--to", "stop", default=None, metavar="OFFSET|@TIME",
              help="End at this offset, or at the last record before this time (inclusive for offsets).")
@click.option("--head", type=click.IntRange(0), default=None, help="Only the first N records of each partition.")
@click.option("--tail", type=click.IntRange(0), default=None, help="Only the last N records of each partition.")
@format_options("auto")
@schema_options
@click.option("--format", "-f", "fmt", default=None, metavar="FORMAT",
              help="Print each record as kcat does: %t topic, %p partition, %o offset, %T timestamp, %k key, "
                   "%s value, %h headers, %K and %S key and value lengths, %f file, %i schema id; \\n, \\t. "
                   "Default: one JSON object per record.")
def cat(path: Path, topic: str | None, partitions: str | None, start: str | None, stop: str | None,
        head: int | None, tail: int | None, key_format: str, value_format: str, schemas_spec: str | None,
        schemas_topic: str, schema_context: str | None, avro_reader_schema: Path | None, validate: bool,
        fmt: str | None) -> None:
    """Print the records of a log dir, a partition or a segment with keys and values decoded:
    Avro, Protobuf and JSON Schema payloads in Confluent's framing, by the schemas of the log
    dir's own `_schemas` partition (or --schemas), as JSON. Control records are not printed, as
    consumers do not see them; records of aborted transactions are, as a read_uncommitted
    consumer sees them.

    A key or value that does not decode (an id the schemas lack, a payload that does not match its
    schema, a truncated one) is printed as base64 beside its problem, reported on stderr with its
    file, batch and offset, and counted; the rest are still printed. With the default `auto`
    format, bytes that only look framed (an id the schemas lack) are printed as they are, with a
    note.

    Exit status: 0 when every record read decoded, 1 when any did not or anything read (the
    schemas included) is damaged, 2 for usage errors, files that cannot be read and a registry
    that does not answer."""
    from .cat_format import compile_format, record_json

    try:
        printer = compile_format(fmt) if fmt is not None else None
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--format") from None
    first, last = _position(start, "--from"), _position(stop, "--to")
    if first and last and first[0] == last[0] and last[1] < first[1]:
        raise click.BadParameter(f"{stop} is before --from {start}", param_hint="--to")
    root, chosen = selected(path, topic, parse_partitions(partitions))
    keys, values, source = decoders(path, key_format, value_format, schemas_spec, schemas_topic, schema_context,
                                    avro_reader_schema, validate)
    counts = {"records": 0, "keys": 0, "values": 0, "damage": len(source.damaged) if source else 0, "notes": 0,
              "unknown fields": 0}
    for where, why in root.skipped:
        say(f"skipped {where}: {why}", err=True)
    if not chosen:
        say(f"note: no partition under {path} matches the --topic and --partitions given", err=True)
    for part in chosen:
        if part.topic == schemas_topic and source is not None and topic is None:
            say(f"note: {part.path} holds the schemas and is not printed (--topic {schemas_topic} prints it)",
                err=True)
            continue
        for fields in _records(part, first, last, head, tail, counts):
            fields["key"] = keys.decode(fields["record"].key, fields["record"].headers)
            fields["value"] = values.decode(fields["record"].value, fields["record"].headers)
            for name in ("key", "value"):
                if fields[name].note is not None:  # a guess of auto's, or fields a Protobuf schema lacks
                    counts["unknown fields" if fields[name].format == "protobuf" else "notes"] += 1
                problem = fields[name].problem
                if problem is not None:
                    counts[name + "s"] += 1
                    say(f"error: {fields['file']}: batch at byte {fields['position']}: offset "
                        f"{fields['record'].offset}: {name}: {problem.message}", err=True)
            if printer is not None:  # the format says where lines end, as kcat's does
                click.echo(printer(fields), nl=False)
            else:
                click.echo(record_json(fields))
            counts["records"] += 1
    if counts["notes"]:
        say(f"note: {counts['notes']} keys or values start as schema registry payloads do but name schemas the "
            f"source does not hold; they are printed as text or base64 (see keyNote and valueNote); "
            f"--key-format or --value-format registry counts them as not decoded", err=True)
    if counts["unknown fields"]:
        say(f"note: {counts['unknown fields']} Protobuf keys or values hold fields their schema does not define "
            f"(a newer writer's); they are left out of what is printed (see keyNote and valueNote)", err=True)
    bad = counts["keys"] + counts["values"]
    if bad or counts["damage"]:
        say(f"{counts['records']} records printed; not decoded: {counts['values']} values, {counts['keys']} keys; "
            f"damaged ranges not read: {counts['damage']}", err=True)
    sys.exit(1 if bad or counts["damage"] else 0)


def _header_pairs(record) -> list:
    out = []
    for h in record.headers:
        key = h.key if isinstance(h.key, str) else bytes(h.key).decode("utf-8", "replace")
        value = None if h.value is None else bytes(h.value)
        try:
            out.append((key, None if value is None else value.decode("utf-8")))
        except UnicodeDecodeError:
            out.append((key, value))
    return out


def _records(part, first, last, head, tail, counts):
    """The records of the partition to print, as dicts of what the printers need."""
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.audit.positions import records_at_time

    start = 0
    if first is not None and first[0] == "offset":
        start = first[1]
    elif first is not None:
        try:
            hit = next(records_at_time(part, first[1]), None)
        except KafkaCodecError as err:  # a time index that does not read: the log alone says where
            say(f"note: {err}; the first record at or after the time is found by reading the log", err=True)
            try:
                hit = next(records_at_time(part, first[1], use_index=False), None)
            except KafkaCodecError as again:
                counts["damage"] += 1
                say(f"error: {again}; {part.topic}-{part.partition} is not read", err=True)
                return
        if hit is None:
            return
        start = hit.record.offset
    records = _from_offset(part, start, counts)
    if last is not None:
        records = _until(records, last)
    if head is not None:
        records = (r for r, _ in zip(records, range(head)))
    if tail is not None:
        records = iter(deque(records, maxlen=tail)) if tail else iter(())
    for seg, batch, record in records:
        yield {"topic": part.topic, "partition": part.partition, "file": str(seg.log), "position": batch.position,
               "record": record, "raw_headers": _header_pairs(record)}


def _until(records, last):
    kind, bound = last
    for item in records:
        record = item[2]
        if (kind == "offset" and record.offset > bound) or (kind == "time" and record.timestamp >= bound):
            return
        yield item


def _from_offset(part, start: int, counts):
    """(segment, batch, record) from offset `start`: the segments wholly below it are not read."""
    from kafkacodec.runtime.errors import DecodeError
    from kafkacodec.storage.segments.reader import Damage, partition_batches

    below = [i for i, seg in enumerate(part.segments) if seg.base_offset <= start]
    trimmed = replace(part, segments=part.segments[below[-1]:] if below else part.segments)

    def damaged(damage) -> None:
        counts["damage"] += 1
        say(f"error: {damage.error}; the rest of {damage.segment.log} is not read", err=True)

    for seg, batch in partition_batches(trimmed, on_damage=damaged):
        if batch.last_offset < start or (not batch.is_legacy and batch.entry.is_control):
            continue
        try:
            records = list(batch)
        except DecodeError as err:
            damaged(Damage(seg, batch.position, err.with_context(file=str(seg.log))))
            continue
        for record in records:
            if record.offset >= start:
                yield seg, batch, record
