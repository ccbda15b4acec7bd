"""clean: what Kafka's retention would delete, and a copy of the log without it."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--policy", type=click.Choice(["delete"]), default="delete", show_default=True,
              help="cleanup.policy to apply (compaction is not offered yet).")
@click.option("--retention-ms", type=int, default=7 * 24 * 3600 * 1000, show_default=True,
              help="retention.ms; -1 keeps everything by time.")
@click.option("--retention-bytes", type=int, default=-1, show_default=True,
              help="retention.bytes per partition; -1 keeps everything by size.")
@click.option("--now", "now_ms", type=int, default=None, help="The clock, in ms since the epoch (default: now).")
@click.option("--apply", "apply_", is_flag=True, help="Write the cleaned log to --out (default: report only).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where --apply writes the cleaned partition directories.")
def clean(path: Path, policy: str, retention_ms: int, retention_bytes: int, now_ms: int | None, apply_: bool,
          out: Path | None) -> None:
    """Report the segments a broker would delete now under time and size retention, per partition
    of PATH (a log dir or one partition directory); with --apply --out DIR, write copies of the
    partitions without them. The log itself is never changed."""
    from rich.console import Console
    from rich.table import Table

    from ..storage import logdir
    from ..storage.retention import RetentionConfig, copy_without, deletions

    if apply_ and out is None:
        click.echo("error: --apply needs --out DIR (the log itself is never changed)", err=True)
        sys.exit(2)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    config = RetentionConfig(retention_ms, retention_bytes)
    parts = [logdir.open_partition(path)] if any(p.suffix == ".log" for p in path.iterdir()) \
        else logdir.open_log_dir(path).partitions
    table = Table("partition", "segment", "bytes", "records", "largest timestamp", "rule")
    total_bytes = total_records = 0
    for part in parts:
        due = deletions(part, config, now)
        for d in due:
            f = d.facts
            table.add_row(f"{part.topic}-{part.partition}", f.segment.log.name, f"{f.size:,}", f"{f.records:,}",
                          str(f.largest_timestamp), d.reason)
            total_bytes += f.size
            total_records += f.records
        if apply_:
            copy_without(part, due, out)
    console = Console()
    Console(width=max(console.width, 160) if not console.is_terminal else None).print(table)
    click.echo(f"{'deleted' if apply_ else 'would delete'}: {total_bytes:,} bytes, {total_records:,} records "
               f"(now = {now}, retention.ms = {retention_ms}, retention.bytes = {retention_bytes})"
               + (f"; cleaned partitions in {out}" if apply_ else ""))
