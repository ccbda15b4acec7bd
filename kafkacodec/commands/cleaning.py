"""clean: what Kafka's retention and compaction would remove, and a copy of the log without it."""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import click

POLICIES = ["delete", "compact", "compact,delete"]


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--policy", type=click.Choice(POLICIES), default="delete", show_default=True, help="cleanup.policy.")
@click.option("--retention-ms", type=int, default=7 * 24 * 3600 * 1000, show_default=True,
              help="retention.ms; -1 keeps everything by time.")
@click.option("--retention-bytes", type=int, default=-1, show_default=True,
              help="retention.bytes per partition; -1 keeps everything by size.")
@click.option("--delete-retention-ms", type=int, default=24 * 3600 * 1000, show_default=True,
              help="delete.retention.ms: how long tombstones and transaction markers stay once cleaned.")
@click.option("--min-compaction-lag-ms", type=int, default=0, show_default=True, help="min.compaction.lag.ms.")
@click.option("--max-compaction-lag-ms", type=int, default=2 ** 63 - 1, help="max.compaction.lag.ms.")
@click.option("--min-cleanable-dirty-ratio", type=float, default=0.5, show_default=True,
              help="min.cleanable.dirty.ratio.")
@click.option("--now", "now_ms", type=int, default=None, help="The clock, in ms since the epoch (default: now).")
@click.option("--dry-run", is_flag=True, help="Report only (the default).")
@click.option("--apply", "apply_", is_flag=True, help="Write the cleaned log to --out, or --in-place.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where --apply writes the cleaned log dir (its partition directories and root files).")
@click.option("--in-place", is_flag=True, help="With --apply and no --out: replace each partition directory by "
              "its cleaned copy (built beside it first; the original stays if anything fails).")
def clean(path: Path, policy: str, retention_ms: int, retention_bytes: int, delete_retention_ms: int,
          min_compaction_lag_ms: int, max_compaction_lag_ms: int, min_cleanable_dirty_ratio: float,
          now_ms: int | None, dry_run: bool, apply_: bool, out: Path | None, in_place: bool) -> None:
    """Report what a broker would remove now from each partition of PATH (a log dir or one
    partition directory): segments past time and size retention (policy delete), records,
    tombstones and markers compaction drops (policy compact); with --apply --out DIR, write
    cleaned copies of the partitions. The log itself is never changed."""
    from rich.console import Console
    from rich.table import Table

    from ..runtime.errors import DecodeError
    from ..storage import logdir
    from ..storage.compaction import CompactionConfig, compact
    from ..storage.retention import RetentionConfig, copy_without, deletions

    if dry_run and apply_:
        click.echo("error: --dry-run and --apply exclude each other", err=True)
        sys.exit(2)
    if apply_ and (out is None) == (not in_place):
        click.echo("error: --apply needs --out DIR, or --in-place to replace the partitions", err=True)
        sys.exit(2)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    single = logdir.is_partition_dir(path)
    if in_place:  # cleaned copies beside the partitions first, swapped in at the end
        out = (path.parent if single else path) / ".kafkacodec-clean"
        if out.exists():
            shutil.rmtree(out)
    if apply_:
        out.mkdir(parents=True, exist_ok=True)
        if not single and not in_place:  # meta.properties and the checkpoints go with the log dir
            for f in path.iterdir():
                if f.is_file() and not (out / f.name).exists():
                    shutil.copy2(f, out / f.name)
    parts = logdir.partitions_at(path)
    checkpoint = None if single else path / "cleaner-offset-checkpoint"
    deleting, compacting = "delete" in policy, "compact" in policy
    deleted = Table("partition", "segment", "bytes", "records", "largest timestamp", "rule", title="retention")
    compacted = Table("partition", "due", "dirty ratio", "cleanable below", "records removed", "tombstones removed",
                      "markers removed", "bytes before", "bytes after", title="compaction")
    totals = [0, 0]
    skipped = 0
    for part in parts:
        due = deletions(part, RetentionConfig(retention_ms, retention_bytes), now) if deleting else []
        for d in due:
            f = d.facts
            deleted.add_row(f"{part.topic}-{part.partition}", f.segment.log.name, f"{f.size:,}", f"{f.records:,}",
                            str(f.largest_timestamp), d.reason)
            totals[0] += f.size
            totals[1] += f.records
        if not compacting:
            if apply_:
                copy_without(part, due, out)
            continue
        with tempfile.TemporaryDirectory(dir=out if apply_ else None) as tmp:
            if due:  # retention first, then the cleaner over what is left
                part = logdir.open_partition(copy_without(part, due, Path(tmp)))
            config = CompactionConfig(delete_retention_ms, min_compaction_lag_ms, max_compaction_lag_ms,
                                      min_cleanable_dirty_ratio)
            try:
                r = compact(part, config, now, checkpoint, out if apply_ else None)
            except DecodeError as err:  # this partition is left as it is; the others go on
                click.echo(f"skipped {part.topic}-{part.partition}: {err}", err=True)
                skipped += 1
                continue
            compacted.add_row(f"{part.topic}-{part.partition}", "yes" if r.due else "no", f"{r.dirty_ratio:.2f}",
                              str(r.first_uncleanable), f"{r.records_removed:,}", f"{r.tombstones_removed:,}",
                              f"{r.markers_removed:,}", f"{r.bytes_before:,}", f"{r.bytes_after:,}")
            totals[0] += r.bytes_before - r.bytes_after
            totals[1] += r.records_removed + r.tombstones_removed + r.markers_removed
    if in_place:
        replace_partitions(parts, out)
    console = Console()
    wide = Console(width=max(console.width, 160) if not console.is_terminal else None)
    if deleting:
        wide.print(deleted)
    if compacting:
        wide.print(compacted)
    click.echo(f"{'removed' if apply_ else 'would remove'}: {totals[0]:,} bytes, {totals[1]:,} records "
               f"(policy {policy}, now = {now})" + (f"; cleaned partitions in {out}" if apply_ else ""))
    sys.exit(1 if skipped else 0)


def replace_partitions(parts, staging: Path) -> None:
    """Swap each partition directory for its cleaned copy in `staging`: the original is renamed
    aside, the copy renamed into place, then the original removed; a failed swap puts it back."""
    for part in parts:
        cleaned = staging / part.path.name
        if not cleaned.exists():
            continue  # skipped: left as it was
        aside = part.path.with_name(part.path.name + ".kafkacodec-old")
        part.path.rename(aside)
        try:
            cleaned.rename(part.path)
        except BaseException:
            aside.rename(part.path)
            raise
        shutil.rmtree(aside)
    shutil.rmtree(staging, ignore_errors=True)
