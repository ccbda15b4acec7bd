"""verify and dump: reading segments, indexes and snapshots as Kafka's tools do."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click


@contextmanager
def _progress(total_bytes: int, what: str):
    """A byte-count progress bar on stderr for directory-wide work; silent unless stderr is a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(f"[bold]{what}", BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(what, total=total_bytes)
        yield lambda n: bar.advance(task, n)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--quick", is_flag=True,
              help="Check only what Kafka's recovery checks (framing, sizes, CRCs); records are not decoded.")
@click.option("--skip-corrupt", is_flag=True,
              help="Read on after damage from the next batch whose CRC matches, reporting every damaged range.")
def verify(path: Path, quick: bool, skip_corrupt: bool) -> None:
    """Check a segment, a partition directory or a whole log dir: every record of every batch
    decoded (decompressed within the limits), framing, CRCs, offsets, indexes, transaction index
    and producer snapshots. --quick checks what Kafka's recovery checks.

    Exit status: 0 when everything is valid, 1 when anything is damaged, 2 for usage errors and
    files that cannot be read.
    """
    from rich.console import Console
    from rich.table import Table

    from ..storage import logdir, verify as v
    from ..storage.journal import pending
    from ..storage.safeio import FileProblem, check_regular

    skipped: list[tuple[Path, str]] = []
    if not path.is_dir():
        try:
            check_regular(path)
        except FileProblem as err:
            click.echo(f"error: {err}", err=True)
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
    damaged, unusable = [], []
    with _progress(sum(s.log.stat().st_size for p in partitions for s in p.segments), "verifying") as advance:
        for part in partitions:
            name = f"{part.topic}-{part.partition}" if part.partition >= 0 else part.topic
            try:
                reports = v.verify_partition(part, on_segment=lambda r: advance(r.file_size),
                                             skip_corrupt=skip_corrupt, quick=quick)
            except FileProblem as err:  # not checked at all: said apart from damage, exit 2
                unusable.append(f"error: {err}")
                table.add_row(name, str(len(part.segments)), "", "", "", "[red]not readable[/red]")
                continue
            lines = [line for r in reports for line in v.describe(r)]
            damaged += lines
            table.add_row(name, str(len(reports)), str(sum(r.batches for r in reports)),
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
        click.echo(f"skipped {where}: {why}", err=True)
    for line in damaged + unusable:
        click.echo(line, err=True)
    sys.exit(2 if unusable else 1 if damaged else 0)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--deep-iteration", is_flag=True, help="Print every record, not only batches.")
@click.option("--print-data-log", is_flag=True, help="Print keys and values too (implies --deep-iteration).")
@click.option("--max-bytes", type=click.IntRange(0), default=None, help="Read at most this many bytes of each .log.")
@click.option("--verify-index-only", is_flag=True, help="Check index entries against the log; print no entries.")
@click.option("--index-sanity-check", is_flag=True, help="Run Kafka's index sanity check only.")
@click.option("--skip-record-metadata", is_flag=True, help="Print only keys and payloads of records.")
@click.option("--offsets-decoder", is_flag=True, help="Decode __consumer_offsets records (implies --print-data-log).")
@click.option("--transaction-log-decoder", is_flag=True,
              help="Decode __transaction_state records (implies --print-data-log).")
@click.option("--skip-corrupt", is_flag=True,
              help="Read on after damage from the next batch whose CRC matches, reporting each skipped range.")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per batch, records included.")
def dump(files: tuple[Path, ...], deep_iteration: bool, print_data_log: bool, max_bytes: int | None,
         verify_index_only: bool, index_sanity_check: bool, skip_record_metadata: bool, offsets_decoder: bool,
         transaction_log_decoder: bool, skip_corrupt: bool, as_json: bool) -> None:
    """Print segments (.log), indexes (.index, .timeindex, .txnindex) and producer snapshots
    (.snapshot) as Kafka's kafka-dump-log does.

    Damage ends a segment's listing with Kafka's "Found N invalid bytes" line; the reason goes to
    stderr and the exit status is 1. With --skip-corrupt the listing goes on after each damaged
    range, which is reported on stderr.
    """
    from ..runtime.errors import DecodeError
    from ..storage import decoders
    from ..storage.dumpfmt import DumpSummary, dump_index, dump_log, dump_snapshot, dump_txn_index
    from ..storage.safeio import FileProblem

    if offsets_decoder and transaction_log_decoder:
        click.echo("error: choose one of --offsets-decoder and --transaction-log-decoder", err=True)
        sys.exit(2)
    decoder, kind = decoders.utf8, None
    if offsets_decoder:
        decoder, kind = decoders.offsets, "offsets"
    elif transaction_log_decoder:
        decoder, kind = decoders.transaction_log, "transaction-log"
    print_data_log = print_data_log or kind is not None  # as in Kafka's tool

    status = 0
    summary = DumpSummary()
    for path in files:
        if as_json:
            try:
                status = max(status, _dump_json(path, kind, skip_corrupt))
            except FileProblem as err:  # a FIFO, a device, unreadable: the other files are still dumped
                click.echo(f"error: {err}", err=True)
                status = max(status, 2)
            continue
        damage: list = []
        if path.suffix in (".index", ".timeindex"):
            lines = dump_index(path, str(path), verify_index_only, index_sanity_check, summary)
        elif path.suffix in (".log", ".checkpoint"):
            lines = dump_log(path, str(path), deep_iteration, print_data_log, max_bytes, damage,
                             skip_record_metadata, summary, decoder, skip_corrupt)
        elif path.suffix == ".txnindex":
            lines = dump_txn_index(path, str(path))
        elif path.suffix == ".snapshot":
            lines = dump_snapshot(path, str(path))
        else:  # dispatched on the last suffix, as Kafka's tool does: x.log.deleted is unknown
            click.echo(f"Ignoring unknown file {path}", err=True)
            continue
        try:
            for line in lines:
                click.echo(line)
        except DecodeError as err:  # a corrupt snapshot or index: Kafka prints why on stderr
            err.file = err.file or str(path)
            damage.append(err)
        except ValueError:  # index entries and snapshots are relative to the offset in the name
            click.echo(f"error: {path}: the file name does not start with a 20-digit offset", err=True)
            status = max(status, 2)
        except FileProblem as err:  # a FIFO, a device, unreadable: the other files are still dumped
            click.echo(f"error: {err}", err=True)
            status = max(status, 2)
        for err in damage:
            click.echo(f"error: {err}", err=True)
            status = max(status, 1)
    for line in summary.lines():  # after all files, on stderr, as Kafka's tool prints them
        click.echo(line, err=True)
    sys.exit(status)


def _dump_json(path: Path, kind: str | None, skip_corrupt: bool) -> int:
    """`dump --json` of one segment: a line per batch; damage on stderr. Returns the exit status."""
    import json

    from ..runtime.errors import DecodeError
    from ..storage import decoders
    from ..storage.jsonl import to_json
    from ..storage.reader import Skipped, batches_of
    from ..storage.safeio import read_whole

    status = 0
    data = read_whole(path)
    try:
        for batch in batches_of(data, verify=False, skip_corrupt=skip_corrupt):
            if isinstance(batch, Skipped):
                batch.error.file = batch.error.file or str(path)
                click.echo(f"error: {batch.error} (bytes {batch.start}..{batch.end} skipped)", err=True)
                status = 1
                continue
            try:
                obj = to_json(batch, str(path))
            except DecodeError as err:  # damage inside the batch's records
                if not skip_corrupt:
                    raise
                err.file = err.file or str(path)
                click.echo(f"error: {err} (the batch at byte {batch.position} skipped)", err=True)
                status = 1
                continue
            if kind is not None and not (not batch.is_legacy and batch.entry.is_control):
                for record, out in zip(batch, obj["records"]):
                    out["decoded"] = decoders.decoded_json(record, kind)
            click.echo(json.dumps(obj, separators=(",", ":")))
    except DecodeError as err:  # every valid batch is out; then where and why it stops
        err.file = err.file or str(path)
        click.echo(f"error: {err}", err=True)
        status = 1
    return status
