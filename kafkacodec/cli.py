"""The `kafkacodec` command."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click


def _repo_root() -> Path:
    """The checkout holding schemas/ and generated/: this file's parent's parent in a checkout."""
    here = Path(__file__).resolve().parent.parent
    if (here / "schemas").is_dir() and (here / "generator").is_dir():
        return here
    return Path.cwd()


@click.group()
@click.version_option(package_name="kafkacodec")
def main() -> None:
    """Read, verify and write Apache Kafka's on-disk formats without a broker."""


@main.command()
@click.option("--check", is_flag=True, help="Exit non-zero with a diff if generated/ or docs/formats/ is stale; "
                                            "write nothing.")
@click.option("--schemas", "schema_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of .ksy schemas (default: schemas/ of this checkout).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for generated modules (default: generated/ of this checkout).")
@click.option("--docs", "docs_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the format pages (default: docs/formats/ of this checkout; "
                   "with --schemas or --out, none unless given).")
def generate(check: bool, schema_dir: Path | None, out_dir: Path | None, docs_dir: Path | None) -> None:
    """Compile the schemas into Python codecs under generated/ and format pages under docs/formats/."""
    from .generator.compile import compile_program
    from .generator.outputs import DOC_SUFFIXES, stale, write
    from .generator.problems import CompileFailed

    root = _repo_root()
    if docs_dir is None and schema_dir is None and out_dir is None:
        docs_dir = root / "docs" / "formats"
    schema_dir = schema_dir or root / "schemas"
    out_dir = out_dir or root / "generated"
    try:
        program, outputs = compile_program(schema_dir)
    except CompileFailed as failed:
        for problem in failed.problems:
            click.echo(str(problem), err=True)
        n = len(failed.problems)
        click.echo(f"{n} problem{'s' if n != 1 else ''}; nothing generated", err=True)
        sys.exit(1)
    if check:
        diffs = stale(out_dir, outputs)
        if not diffs and docs_dir is not None:  # the pages' examples come from the code checked above
            diffs = stale(docs_dir, _doc_outputs(program), DOC_SUFFIXES)
        if diffs:
            for d in diffs:
                click.echo(d, nl=False)
            click.echo("\ngenerated output is stale; fix it with: make generate", err=True)
            sys.exit(1)
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)" +
                   (f"; {docs_dir}: up to date" if docs_dir is not None else ""))
        return
    changed = [out_dir / name for name in write(out_dir, outputs)]
    if docs_dir is not None:  # after the code: the examples are written and read by it
        changed += [docs_dir / name for name in write(docs_dir, _doc_outputs(program), DOC_SUFFIXES)]
    for path in changed:
        click.echo(f"wrote {path}")
    if not changed:
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)")


def _doc_outputs(program) -> dict[str, str]:
    """The format pages, with examples from the generated codecs as they are on disk now."""
    import importlib

    from .generator.docs import build_docs

    importlib.invalidate_caches()
    from .formatdocs.examples import example_rows

    return build_docs(program, example_rows(program))


@main.command()
@click.option("--html", "html_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the static site (created; its pages are replaced).")
def docs(html_dir: Path) -> None:
    """Build a static HTML site from docs/ (the format pages and the schema-language guide)."""
    from .formatdocs.site import build_site

    root = _repo_root()
    if not (root / "docs" / "formats" / "index.md").exists():
        click.echo(f"error: {root / 'docs' / 'formats'} has no pages; run: kafkacodec generate", err=True)
        sys.exit(2)
    pages = build_site(root / "docs", root / "schemas", html_dir)
    click.echo(f"wrote {len(pages)} pages to {html_dir}; open {html_dir / 'index.html'}")


@main.command()
@click.argument("logdir")
@click.argument("out")
@click.option("--format", "fmt", type=click.Choice(["parquet", "delta"]), default="parquet", show_default=True)
@click.option("--master", default=None, help="Spark master URL (default: a local session on every core).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def export(logdir: str, out: str, fmt: str, master: str | None, force: bool) -> None:
    """Export a log dir (or partition, or segment; local or s3://, gs://, hdfs://) to a table through
    Spark: every record with Kafka's columns and the batch columns, headers included."""
    from rich.console import Console

    from .pipeline.export import export as run, session, stage_progress

    if "://" not in out and Path(out).exists() and not force:  # before paying for a Spark start
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(1)
    console = Console(stderr=True)
    spark = session(master)
    try:
        with stage_progress(spark, console):
            summary = run(spark, logdir, out, fmt, "overwrite" if force else "errorifexists")
    except Exception as err:  # Spark reports a Python error deep in its own; say it in one line
        text = str(err).strip().splitlines()
        click.echo(f"error: {text[0] if text else err}", err=True)
        sys.exit(1)
    finally:
        spark.stop()
    Console().print(summary.table())
    if summary.lag:
        Console().print(summary.lag_table())
    click.echo(f"wrote {out} ({fmt}); corrupt batches: {summary.corrupt_batches}; invalid bytes at segment ends: "
               f"{summary.invalid_bytes}; aborted transactions: {summary.aborted_transactions}")
    for segment, position, why in summary.damaged:
        click.echo(f"damaged: {segment} at byte {position}: {why}", err=True)
    sys.exit(1 if summary.damaged else 0)


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


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def verify(path: Path) -> None:
    """Check a segment, a partition directory or a whole log dir: CRCs, framing, offsets, indexes.

    Exit status: 0 when everything is valid, 1 when anything is damaged, 2 for usage errors.
    """
    from rich.console import Console
    from rich.table import Table

    from .storage import logdir, verify as v

    skipped: list[tuple[Path, str]] = []
    if path.is_file():
        partitions = [logdir.Partition(path.parent.name, -1, path.parent, [v.segment_from_file(path)])]
    elif any(p.suffix == ".log" for p in path.iterdir()):
        partitions = [logdir.open_partition(path)]
    else:
        root = logdir.open_log_dir(path)
        partitions, skipped = root.partitions, list(root.skipped)
    skipped += [s for part in partitions for s in part.skipped]
    table = Table("partition", "segments", "batches", "bytes", "status")
    damaged = []
    with _progress(sum(s.log.stat().st_size for p in partitions for s in p.segments), "verifying") as advance:
        for part in partitions:
            reports = v.verify_partition(part, on_segment=lambda r: advance(r.scan.file_size))
            lines = [line for r in reports for line in v.describe(r)]
            damaged += lines
            table.add_row(f"{part.topic}-{part.partition}" if part.partition >= 0 else part.topic,
                          str(len(reports)), str(sum(len(r.scan.batches) for r in reports)),
                          str(sum(r.scan.file_size for r in reports)),
                          "ok" if not lines else f"[red]{len(lines)} problem{'s' if len(lines) != 1 else ''}[/red]")
    Console(stderr=False).print(table)
    for where, why in skipped:  # as Kafka passes them over at load; not damage
        click.echo(f"skipped {where}: {why}", err=True)
    for line in damaged:
        click.echo(line, err=True)
    sys.exit(1 if damaged else 0)


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Empty DIRECTORY first if it holds anything.")
def sample(directory: Path, force: bool) -> None:
    """Write the sample log directory (the same bytes every time) into DIRECTORY."""
    import shutil

    from .storage.sample import write_sample

    if directory.exists() and any(directory.iterdir()):
        if not force:
            click.echo(f"error: {directory} is not empty; pass --force to replace its content", err=True)
            sys.exit(2)
        shutil.rmtree(directory)
    for path in write_sample(directory):
        click.echo(f"wrote {path}")


@main.command()
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--index", "with_index", is_flag=True, help="Also write OUT's .index and .timeindex.")
def write(out: Path, force: bool, with_index: bool) -> None:
    """Write a segment from JSON Lines on standard input (the objects `dump --json` prints)."""
    import json

    from .storage import index
    from .storage.files import write_atomically
    from .storage.jsonl import from_json
    from .storage.names import offset_from_name
    from .storage.scan import scan_bytes

    if out.exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(2)
    data = bytearray()
    for n, line in enumerate(sys.stdin, start=1):
        if line.strip():
            try:
                data += from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as err:
                click.echo(f"error: line {n}: {err}", err=True)
                sys.exit(2)
    files = {out: bytes(data)}
    if with_index:
        base = offset_from_name(out.name)
        offsets, times = index.rebuild(scan_bytes(bytes(data)).batches, base)
        files[out.with_suffix(".index")] = index.encode_offset_index(offsets, base)
        files[out.with_suffix(".timeindex")] = index.encode_time_index(times, base)
    for path, content in files.items():
        write_atomically(path, content)
    click.echo(f"wrote {out} ({len(data)} bytes)")


@main.command()
@click.argument("src", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--magic", type=click.IntRange(0, 2), required=True, help="Message format to write.")
@click.option("--compression", type=click.Choice(["none", "gzip", "snappy", "lz4", "zstd"]), default=None,
              help="Codec to write (default: each batch keeps its own).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def convert(src: Path, out: Path, magic: int, compression: str | None, force: bool) -> None:
    """Convert a segment to another message format, as brokers convert (offsets kept)."""
    from .runtime.errors import KafkaCodecError
    from .storage.convert import convert as run
    from .storage.files import write_atomically

    if out.exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(2)
    try:
        data, report = run(src.read_bytes(), magic, compression)
    except KafkaCodecError as err:
        click.echo(f"error: {src}: {err}", err=True)
        sys.exit(1)
    write_atomically(out, data)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"wrote {out}: {report.batches} batches, {report.records} records, magic {magic}")


@main.command()
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--check", is_flag=True, help="Compare with the index files on disk instead of writing them.")
@click.option("--index-interval-bytes", "interval", type=int, default=4096, show_default=True,
              help="index.interval.bytes of the topic.")
def reindex(log: Path, check: bool, interval: int) -> None:
    """Rebuild a segment's .index, .timeindex and .txnindex exactly as Kafka's recovery would.

    The transaction index needs the producers' state before the segment: it comes from the
    partition's newest .snapshot at or below the segment and the batches after it.
    """
    from .storage import index
    from .storage.files import write_atomically
    from .storage.logdir import open_partition
    from .storage.names import offset_from_name
    from .storage.producers import rebuild_txn_index
    from .storage.scan import scan_file
    from .storage.txnindex import encode_txn_index, read_txn_index

    base = offset_from_name(log.name)
    scan = scan_file(log)
    offsets, times = index.rebuild(scan.batches, base, interval)
    aborted, complete = rebuild_txn_index(open_partition(log.parent), base, scan.batches)
    files = {log.with_suffix(".index"): index.encode_offset_index(offsets, base),
             log.with_suffix(".timeindex"): index.encode_time_index(times, base)}
    if aborted or log.with_suffix(".txnindex").exists():  # Kafka creates it on the first abort
        files[log.with_suffix(".txnindex")] = encode_txn_index(aborted)
    if scan.error is not None:
        click.echo(f"warning: indexes cover the valid first {scan.valid_bytes} bytes only: {scan.error}", err=True)
    if not complete:
        click.echo("warning: no producer snapshot at or below the segment and the log starts later than 0: "
                   "transactions opened before the log start are unknown", err=True)
    readers = {".index": lambda d: index.read_offset_index(d, base),
               ".timeindex": lambda d: index.read_time_index(d, base), ".txnindex": read_txn_index}
    if check:
        stale = []
        for path, data in files.items():
            read = readers[path.suffix]
            on_disk = read(path.read_bytes()) if path.exists() else None
            if on_disk != read(data):
                stale.append(path)
                click.echo(f"{path}: differs from the rebuilt index", err=True)
        sys.exit(1 if stale else 0)
    for path, data in files.items():
        write_atomically(path, data)
        click.echo(f"wrote {path} ({len(readers[path.suffix](data))} entries)")


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--deep-iteration", is_flag=True, help="Print every record, not only batches.")
@click.option("--print-data-log", is_flag=True, help="Print keys and values too (implies --deep-iteration).")
@click.option("--max-bytes", type=int, default=None, help="Read at most this many bytes of each .log.")
@click.option("--verify-index-only", is_flag=True, help="Check index entries against the log; print no entries.")
@click.option("--index-sanity-check", is_flag=True, help="Run Kafka's index sanity check only.")
@click.option("--skip-record-metadata", is_flag=True, help="Print only keys and payloads of records.")
@click.option("--offsets-decoder", is_flag=True, help="Decode __consumer_offsets records (implies --print-data-log).")
@click.option("--transaction-log-decoder", is_flag=True,
              help="Decode __transaction_state records (implies --print-data-log).")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per batch, records included.")
def dump(files: tuple[Path, ...], deep_iteration: bool, print_data_log: bool, max_bytes: int | None,
         verify_index_only: bool, index_sanity_check: bool, skip_record_metadata: bool, offsets_decoder: bool,
         transaction_log_decoder: bool, as_json: bool) -> None:
    """Print segments (.log), indexes (.index, .timeindex, .txnindex) and producer snapshots
    (.snapshot) as Kafka's kafka-dump-log does.

    Damage ends a segment's listing with Kafka's "Found N invalid bytes" line; the reason goes to
    stderr and the exit status is 1.
    """
    import json

    from .records import read_batches
    from .runtime.errors import DecodeError
    from .storage import decoders
    from .storage.dumpfmt import DumpSummary, dump_index, dump_log, dump_snapshot, dump_txn_index
    from .storage.jsonl import to_json

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
            data = path.read_bytes()
            try:
                for batch in read_batches(data, verify=False):
                    obj = to_json(batch, str(path))
                    if kind is not None and not (not batch.is_legacy and batch.entry.is_control):
                        for record, out in zip(batch, obj["records"]):
                            out["decoded"] = decoders.decoded_json(record, kind)
                    click.echo(json.dumps(obj, separators=(",", ":")))
            except DecodeError as err:  # every valid batch is out; then where and why it stops
                err.file = err.file or str(path)
                click.echo(f"error: {err}", err=True)
                status = 1
            continue
        damage: list = []
        if path.suffix in (".index", ".timeindex"):
            lines = dump_index(path, str(path), verify_index_only, index_sanity_check, summary)
        elif path.suffix in (".log", ".checkpoint"):
            lines = dump_log(path, str(path), deep_iteration, print_data_log, max_bytes, damage,
                             skip_record_metadata, summary, decoder)
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
        for err in damage:
            click.echo(f"error: {err}", err=True)
            status = 1
    for line in summary.lines():  # after all files, on stderr, as Kafka's tool prints them
        click.echo(line, err=True)
    sys.exit(status)