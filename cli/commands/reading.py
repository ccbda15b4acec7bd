"""verify and dump: reading segments, indexes and snapshots as Kafka's tools do."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .progress import partitions_size, progress, size_of
from .terminal import cell, say
from .value_options import decoders, format_options, schema_options


def partition_name(part) -> str:
    """`topic-N`, or the directory's name for a segment outside a partition directory."""
    return f"{part.topic}-{part.partition}" if part.partition >= 0 else part.topic


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--quick", is_flag=True,
              help="Check only what Kafka's recovery checks (framing, sizes, CRCs); records are not decoded.")
@click.option("--skip-corrupt", is_flag=True,
              help="Read on after damage from the next batch whose CRC matches, reporting every damaged range.")
@click.option("--compacted", "compacted", default=None, metavar="TOPIC-REGEX",
              help="Topics whose cleanup.policy is compact (whole names matching this regular expression): the gaps "
                   "the cleaner leaves between offsets are passed over, as they are where the log dir shows compaction.")
def verify(path: Path, quick: bool, skip_corrupt: bool, compacted: str | None) -> None:
    """Check a segment, a partition directory or a whole log dir: every record of every batch
    decoded (decompressed within the limits), framing, CRCs, offsets, indexes, transaction index
    and producer snapshots. --quick checks what Kafka's recovery checks.

    Offsets missing between batches are records lost, unless the topic is compacted: an internal
    topic Kafka compacts, one the log dir's cleaner-offset-checkpoint lists, one with batches the
    cleaner rewrote, or one --compacted names.

    Exit status: 0 when everything is valid, 1 when anything is damaged, 2 for usage errors and
    files that cannot be read.
    """
    from rich.console import Console
    from rich.table import Table

    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.audit import verify as v
    from kafkacodec.storage.change.unfinished import pending
    from kafkacodec.storage.diskio.safeio import FileProblem, check_regular

    try:
        pattern = re.compile(compacted) if compacted is not None else None
    except re.error as err:
        raise click.BadParameter(f"{compacted!r} is not a regular expression: {err}", param_hint="--compacted") from None
    gaps_expected = lambda topic: pattern is not None and pattern.fullmatch(topic) is not None  # noqa: E731
    skipped: list[tuple[Path, str]] = []
    if not path.is_dir():
        try:
            check_regular(path)
        except FileProblem as err:
            say(f"error: {err}", err=True)
            sys.exit(2)
    if path.is_file():
        partitions = [logdir.Partition(path.resolve().parent.name, -1, path.parent, [logdir.segment_of(path)])]
    elif logdir.is_partition_dir(path):
        partitions = [logdir.open_partition(path)]
    else:
        root = logdir.open_log_dir(path)
        partitions, skipped = root.partitions, list(root.skipped)
    skipped += [s for part in partitions for s in part.skipped]
    table = Table("partition", "segments", "batches", "records" if not quick else "checked", "bytes", "status")
    damaged, unusable, notes = [], [], []
    fixes: set[str] = set()
    with progress(partitions_size(partitions), "verifying") as advance:
        for part in partitions:
            name = partition_name(part)
            try:
                reports = v.verify_partition(part, on_segment=lambda r: advance(r.file_size),
                                             skip_corrupt=skip_corrupt, quick=quick,
                                             offset_gaps=False if gaps_expected(part.topic) else None)
            except FileProblem as err:  # not checked at all: said apart from damage, exit 2
                unusable.append(f"error: {err}")
                table.add_row(cell(name), str(len(part.segments)), "", "", "", "[red]not readable[/red]")
                continue
            lines = [line for r in reports for line in v.describe(r)]
            damaged += lines
            notes += [note for r in reports for note in r.notes]
            fixes |= {"recover" for r in reports if r.error is not None}
            fixes |= {"reindex" for r in reports for p in r.problems if p.startswith(v.INDEX_PROBLEMS)}
            table.add_row(cell(name), str(len(reports)), str(sum(r.batches for r in reports)),
                          "framing and CRCs" if quick else str(sum(r.records for r in reports)),
                          str(sum(r.file_size for r in reports)),
                          "ok" if not lines else f"[red]{len(lines)} problem{'s' if len(lines) != 1 else ''}[/red]")
    # an interrupted command's work is not a log dir to trust yet (a lone file has no log dir to ask)
    unfinished = pending(path) if path.is_dir() or logdir.is_partition_dir(path.parent) else []
    if unfinished:
        table.add_row("(log dir)", "", "", "", "", f"[red]{len(unfinished)} unfinished[/red]")
        damaged += [f"{p}; run `kafkacodec recover {path}` to finish it" for p in unfinished]
    Console(stderr=False).print(table)
    for where, why in skipped:  # as Kafka passes them over at load; not damage
        say(f"skipped {where}: {why}", err=True)
    for note in notes:
        say(note, err=True)
    for line in damaged + unusable:
        say(line, err=True)
    if "recover" in fixes:
        click.echo(f"to repair: `kafkacodec recover {path}` cuts the damage as Kafka's recovery would (the cut "
                   "bytes are kept beside each segment) and rebuilds the indexes", err=True)
    elif "reindex" in fixes:
        click.echo(f"to repair: `kafkacodec reindex {path}` rebuilds the indexes from the log", err=True)
    sys.exit(2 if unusable else 1 if damaged else 0)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--deep-iteration", is_flag=True, help="Print every record, not only batches.")
@click.option("--print-data-log", is_flag=True, help="Print keys and values too (implies --deep-iteration).")
@click.option("--max-bytes", type=click.IntRange(0, 2 ** 31 - 1), default=2 ** 31 - 1,
              help="Read at most this many bytes of each .log.")
@click.option("--max-message-size", type=click.IntRange(0, 2 ** 31 - 1), default=5 * 1024 * 1024,
              help="Largest batch read where an index entry points.")
@click.option("--verify-index-only", is_flag=True, help="Check index entries against the log; print no entries.")
@click.option("--index-sanity-check", is_flag=True, help="Run Kafka's index sanity check only.")
@click.option("--skip-record-metadata", is_flag=True, help="Print only keys and payloads of records.")
@click.option("--offsets-decoder", is_flag=True, help="Decode __consumer_offsets records (implies --print-data-log).")
@click.option("--cluster-metadata-decoder", is_flag=True,
              help="Decode KRaft metadata records (__cluster_metadata, snapshots; implies --print-data-log).")
@click.option("--transaction-log-decoder", is_flag=True,
              help="Decode __transaction_state records (implies --print-data-log).")
@click.option("--remote-log-metadata-decoder", is_flag=True,
              help="Decode __remote_log_metadata records (tiered storage; implies --print-data-log).")
@click.option("--share-group-state-decoder", is_flag=True,
              help="Decode __share_group_state records (implies --print-data-log).")
@click.option("--skip-corrupt", is_flag=True,
              help="Read on after bytes that do not frame a batch, from the next batch whose CRC matches.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON Lines: one object per batch, records included (none, and \"recordsValid\": false, for "
                   "a batch whose records do not read).")
@format_options(None)
@schema_options
def dump(files: tuple[Path, ...], deep_iteration: bool, print_data_log: bool, max_bytes: int, max_message_size: int,
         verify_index_only: bool, index_sanity_check: bool, skip_record_metadata: bool, offsets_decoder: bool,
         cluster_metadata_decoder: bool, transaction_log_decoder: bool, remote_log_metadata_decoder: bool,
         share_group_state_decoder: bool, skip_corrupt: bool, as_json: bool, key_format: str | None,
         value_format: str | None, schemas_spec: str | None, schemas_topic: str, schema_context: str | None,
         avro_reader_schema: Path | None, validate: bool) -> None:
    """Print segments (.log, and `recover`'s .log.corrupt-N), KRaft snapshots (.checkpoint),
    indexes (.index, .timeindex, .txnindex) and producer snapshots (.snapshot) with the lines of
    Kafka 4.1's kafka-dump-log (`kafkacodec dump-log` takes its options as well). A partition
    directory or a log dir, as `verify` takes them, stands for the .log of each of its segments.

    Unlike Kafka's tool, damage is reported on stderr where `verify` reports it (the byte where
    the bad batch starts, and why) and the other files are still dumped: a CRC mismatch, bytes
    at the end that are not a batch, records that do not read. --skip-corrupt lists the batches
    after bytes that do not frame one.

    With --json, --key-format and --value-format add each record's key and value decoded
    (`keyDecoded`, `valueDecoded`: the value, its format, schema id, and error where it does not
    decode, which is damage too), by the schemas of the log dir's `_schemas` partition or --schemas.

    Exit status: 0 when everything read is valid, 1 when anything is damaged, 2 for usage errors
    and files that cannot be read."""
    from kafkacodec.storage.dump_log import parsers, tool
    from kafkacodec.storage.dump_log.common import Options, Reports
    from kafkacodec.storage.diskio.safeio import FileProblem

    chosen = [kind for kind, given in (("offsets", offsets_decoder), ("transaction-log", transaction_log_decoder),
                                       ("cluster-metadata", cluster_metadata_decoder),
                                       ("remote-log-metadata", remote_log_metadata_decoder),
                                       ("share-group-state", share_group_state_decoder)) if given]
    if len(chosen) > 1:
        click.echo("error: choose one of --offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder, "
                   "--remote-log-metadata-decoder and --share-group-state-decoder", err=True)
        sys.exit(2)
    if (key_format or value_format) and not as_json:
        click.echo("error: --key-format and --value-format decode records for --json only", err=True)
        sys.exit(2)
    given = files
    files, status = _segments_of(files)
    kind = chosen[0] if chosen else None
    if as_json:
        keys, values, _ = decoders(given[0], key_format, value_format, schemas_spec, schemas_topic, schema_context,
                                   avro_reader_schema, validate)
        for path in files:
            try:
                status = max(status, _dump_json(path, kind, skip_corrupt, keys, values))
            except FileProblem as err:  # a FIFO, a device, unreadable: the other files are still dumped
                say(f"error: {err}", err=True)
                status = max(status, 2)
        sys.exit(status)
    print_data = print_data_log or kind is not None  # as in Kafka's tool
    opts = Options(deep=print_data or deep_iteration, print_data=print_data,
                   skip_metadata=skip_record_metadata, verify_index_only=verify_index_only,
                   index_sanity_check=index_sanity_check, max_bytes=max_bytes,
                   max_message_size=max_message_size,
                   parser=parsers.named(kind) if kind else parsers.classes(None, None))
    reports = Reports()
    problems: list[str] = []
    damage = tool.Damage(problems.append, skip_corrupt, note=lambda text: say(f"note: {text}", err=True))
    with progress(sum(size_of(p) for p in files), "dumping", beside_output=True) as advance:
        for path in files:
            read = [0]  # the log's batches as they are listed; the rest of a file when it is done

            def listed(n: int) -> None:
                read[0] += n
                advance(n)
            opts.progress = listed
            status = max(status, _dump_one(path, opts, reports, damage, problems))
            advance(max(0, size_of(path) - read[0]))
    for line in reports.lines():  # after all files, on stderr, as Kafka's tool prints them
        say(line, err=True)
    sys.exit(status)


def _dump_one(path: Path, opts, reports, damage, problems: list[str]) -> int:
    """One file's listing; returns its exit status."""
    from kafkacodec.storage.dump_log import tool
    from kafkacodec.storage.dump_log.common import Crash
    from kafkacodec.storage.diskio.safeio import FileProblem

    status = 0
    try:
        if _is_kept_cut(path):  # our own kept bytes: listed as a log (Kafka's tool ignores them)
            lines = tool.dump_kept_cut(path, str(path), opts, reports, damage)
        else:
            lines = tool.dump_file(str(path), opts, reports, damage)
        for stream, line in lines:  # keys, values, headers and names escaped: dump-log alone prints them raw
            say(line, err=stream == "err")
    except Crash as err:  # what ends Kafka's run ends only this file's listing here
        problems.append(str(err))
    except FileProblem as err:  # a FIFO, a device, unreadable: the other files are still dumped
        say(f"error: {err}", err=True)
        status = 2
    for problem in problems:
        say(f"error: {problem}", err=True)
        status = max(status, 1)
    problems.clear()
    return status


def _segments_of(paths: tuple[Path, ...]) -> tuple[list[Path], int]:
    """The files to dump: each file as given, each directory (a partition's or a log dir) as the
    .log of each of its segments in offset order; with the exit status so far (2 when a directory
    holds no segment)."""
    from kafkacodec.storage.layout import logdir

    files, status = [], 0
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        if logdir.is_partition_dir(path):
            parts, skipped = [logdir.open_partition(path)], []
        else:
            root = logdir.open_log_dir(path)
            parts, skipped = root.partitions, list(root.skipped)
        for where, why in skipped + [s for part in parts for s in part.skipped]:  # as verify says them
            say(f"skipped {where}: {why}", err=True)
        logs = [seg.log for part in parts for seg in part.segments]
        if not logs:
            say(f"error: {path}: no segments to dump", err=True)
            status = 2
        files += logs
    return files, status


def _is_kept_cut(path: Path) -> bool:
    """Bytes `recover` cut off a segment (`<segment>.log.corrupt-<position>`): read as a log, an
    extension of Kafka's tool, which ignores them."""
    import re

    return re.search(r"\.log\.corrupt-\d+(-\d+)?$", path.name) is not None


def _dump_json(path: Path, kind: str | None, skip_corrupt: bool, keys=None, values=None) -> int:
    """`dump --json` of one segment: a line per batch; damage on stderr. Returns the exit status."""
    import json

    from kafkacodec.runtime.errors import DecodeError
    from kafkacodec.storage.dump_log import decoders
    from kafkacodec.storage.dump_log.tool import Damage
    from kafkacodec.storage.exchange.jsonl import listed_json
    from kafkacodec.storage.segments.reader import Skipped, batches_of
    from kafkacodec.storage.diskio.safeio import read_whole

    from .cat_format import decoded_json

    status = 0
    data = read_whole(path)
    damage = Damage(lambda text: None)
    try:
        for batch in batches_of(data, verify=False, skip_corrupt=skip_corrupt):
            if isinstance(batch, Skipped):
                batch.error.file = batch.error.file or str(path)
                say(f"error: {batch.error} (bytes {batch.start}..{batch.end} skipped)", err=True)
                status = 1
                continue
            if not batch.crc_valid:  # listed, as the text lines list it; damage all the same
                say(f"error: {damage.why(path, batch.position, batch.position + batch.size, str(path))}", err=True)
                status = 1
            listed = listed_json(batch, str(path))
            obj = listed.obj
            if listed.error is not None:  # its framing holds: listed with the records read, as text lists it
                obj["recordsError"] = _records_problem(path, batch.position, listed.error)
                say(f"error: {obj['recordsError']}", err=True)
                status = 1
            if kind is not None and not (not batch.is_legacy and batch.entry.is_control):
                for record, out in zip(listed.records, obj["records"]):
                    out["decoded"] = decoders.decoded_json(record, kind)
            if (keys or values) and not (not batch.is_legacy and batch.entry.is_control):
                for record, out in zip(listed.records, obj["records"]):
                    for name, decoder, raw in (("key", keys, record.key), ("value", values, record.value)):
                        if decoder is None:
                            continue
                        decoded = decoder.decode(raw, record.headers)
                        out[name + "Decoded"] = decoded_json(decoded, raw)
                        if decoded.problem is not None:
                            say(f"error: {path}: batch at byte {batch.position}: offset {record.offset}: {name}: "
                                f"{decoded.problem.message}", err=True)
                            status = 1
            click.echo(json.dumps(obj, separators=(",", ":")))
    except DecodeError as err:  # every valid batch is out; then where and why it stops
        err.file = err.file or str(path)
        say(f"error: {err}", err=True)
        status = 1
    return status


def _records_problem(path: Path, at: int, err) -> str:
    """The records of the batch at byte `at` that do not read, in the text listing's words."""
    return f"{path}: byte {err.position if err.position is not None else at}: the records of the batch at byte " \
           f"{at} do not read: {err.message}"
