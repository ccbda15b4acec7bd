"""clean: what Kafka's retention and compaction would remove, and a copy of the log without it."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from .terminal import cell, say

POLICIES = ["delete", "compact", "compact,delete"]
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
LONG_MAX = 2 ** 63 - 1


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--policy", type=click.Choice(POLICIES), default="delete", show_default=True, help="cleanup.policy.")
@click.option("--retention-ms", type=click.IntRange(-1, LONG_MAX), default=7 * 24 * 3600 * 1000, show_default=True,
              help="retention.ms; -1 keeps everything by time.")
@click.option("--retention-bytes", type=click.IntRange(-1, LONG_MAX), default=-1, show_default=True,
              help="retention.bytes per partition; -1 keeps everything by size.")
@click.option("--delete-retention-ms", type=click.IntRange(0, LONG_MAX), default=24 * 3600 * 1000, show_default=True,
              help="delete.retention.ms: how long tombstones and transaction markers stay once cleaned.")
@click.option("--min-compaction-lag-ms", type=click.IntRange(0, LONG_MAX), default=0, show_default=True,
              help="min.compaction.lag.ms.")
@click.option("--max-compaction-lag-ms", type=click.IntRange(1, LONG_MAX), default=LONG_MAX,
              help="max.compaction.lag.ms.")
@click.option("--min-cleanable-dirty-ratio", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              callback=lambda ctx, param, value: _a_number(param, value), help="min.cleanable.dirty.ratio.")
@click.option("--now", "now_ms", type=click.IntRange(0, LONG_MAX), default=None,
              help="The clock, in ms since the epoch (default: now).")
@click.option("--dry-run", is_flag=True, help="Report only (the default).")
@click.option("--apply", "apply_", is_flag=True, help="Write the cleaned log to --out, or --in-place.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where --apply writes the cleaned log dir (its partition directories and root files).")
@click.option("--in-place", is_flag=True, help="With --apply and no --out: replace each partition directory that "
              "changes by its cleaned copy (all copies are built first; a crash is finished by `recover`).")
@click.option("--keep-old", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --in-place: move each replaced partition directory into this directory (same file "
              "system, outside the log dir) instead of removing it.")
@click.option("--skip-corrupt", is_flag=True, help="Clean past damaged batches instead of refusing them: the "
              "damaged bytes are left out of the cleaned segments, reported, and kept beside them in "
              "<segment>.log.corrupt-<position> files.")
def clean(path: Path, policy: str, retention_ms: int, retention_bytes: int, delete_retention_ms: int,
          min_compaction_lag_ms: int, max_compaction_lag_ms: int, min_cleanable_dirty_ratio: float,
          now_ms: int | None, dry_run: bool, apply_: bool, out: Path | None, in_place: bool, keep_old: Path | None,
          skip_corrupt: bool) -> None:
    """Report what a broker would remove now from each partition of PATH (a log dir or one
    partition directory): segments past time and size retention (policy delete), records,
    tombstones and markers compaction drops (policy compact); with --apply --out DIR, write
    cleaned copies of the partitions; with --apply --in-place, replace them.

    Damage is refused (exit 1, nothing changed) unless --skip-corrupt is given. Exit status: 0
    done, 1 damage or an operation that could not be finished, 2 usage, a busy log dir, or files
    that cannot be written (no space, read-only)."""
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.change import unfinished
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.change.lock import log_root
    from .changing import changing, fail

    if dry_run and apply_:
        _usage("--dry-run and --apply exclude each other")
    if apply_ and (out is None) == (not in_place):
        _usage("--apply needs --out DIR, or --in-place to replace the partitions")
    if keep_old is not None and not in_place:
        _usage("--keep-old goes with --apply --in-place")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    root = log_root(path)
    if in_place:  # partitions are replaced in `root`, where they really are: by their names there
        path = Path(os.path.realpath(path))
    if keep_old is not None:
        _check_keep_old(keep_old, root)
    job = _Job(path, policy, now, skip_corrupt, dict(
        retention=(retention_ms, retention_bytes),
        compaction=(delete_retention_ms, min_compaction_lag_ms, max_compaction_lag_ms, min_cleanable_dirty_ratio)))
    try:
        if not apply_:
            for p in unfinished.pending(path):
                say(f"note: {p} (the report is of the log as it is now)", err=True)
            job.run(logdir.partitions_at(path), None)
        else:
            target = root if in_place else Path(os.path.abspath(out))
            if not in_place:
                _check_out(out, root)
                _make_out(target)
            with changing([root, target], "clean", read_only_ok=(root,) if not in_place else ()):
                job.run(logdir.partitions_at(path), _publication(target, in_place, keep_old))
    except KafkaCodecError as err:
        fail(err, _hint(err, skip_corrupt))
    job.print(apply_)


class _Job:
    """The partitions' reports, and with a publication, their cleaned copies published."""

    def __init__(self, path: Path, policy: str, now: int, skip_corrupt: bool, options: dict):
        from rich.table import Table

        self.path, self.policy, self.now, self.skip_corrupt, self.options = path, policy, now, skip_corrupt, options
        self.deleted = Table("partition", "segment", "bytes", "records", "largest timestamp", "rule", title="retention")
        self.compacted = Table("partition", "due", "dirty ratio", "cleanable below", "records removed",
                               "tombstones removed", "markers removed", "bytes before", "bytes after",
                               title="compaction")
        self.totals = [0, 0]
        self.notes: list[str] = []
        self.out: Path | None = None
        self.cleaned_to: dict[tuple[str, int], int] = {}  # where each partition compacted now was cleaned to

    def run(self, parts, pub) -> None:
        from .progress import advancing, partitions_size, progress

        with progress(partitions_size(parts), "cleaning") as advance:
            self._run(parts, pub, lambda: advancing(parts, advance))

    def _run(self, parts, pub, each_advancing) -> None:
        from kafkacodec.runtime.errors import KafkaCodecError
        from kafkacodec.storage.layout import logdir
        from kafkacodec.storage.diskio.durable import remove_tree
        from kafkacodec.storage.change.retention import RetentionConfig, copy_without, deletions, retention_facts

        single = logdir.is_partition_dir(self.path)
        deleting, compacting = "delete" in self.policy, "compact" in self.policy
        if pub is not None and not pub.in_place:
            for part in parts:
                if (pub.target / part.path.name).exists():
                    from kafkacodec.storage.diskio.safeio import FileProblem
                    raise FileProblem(pub.target / part.path.name, "exists; --out must not hold the partitions")
        try:
            if pub is not None:
                pub.begin()
            changed, files = [], []
            for part in each_advancing():
                from kafkacodec.storage.layout.names import not_cleaned
                if not_cleaned(part.topic) is not None:  # copied as it is to --out; in place, left as it is
                    self.notes.append(f"passed over: {part.path} ({not_cleaned(part.topic)})")
                    if pub is not None and not pub.in_place:
                        self._retain(part, [], pub, changed)
                    continue
                skipped = []
                facts_of = lambda seg: retention_facts(seg, self.skip_corrupt, skipped.append)  # noqa: E731
                due = deletions(part, RetentionConfig(*self.options["retention"]), self.now, facts_of) \
                    if deleting else []
                self._retention_rows(part, due)
                gone = {d.facts.segment.log for d in due}  # damage in kept segments is reported where it is left out
                self.notes += [f"read past (its segment goes by retention): {s.describe()}" for s in skipped
                               if s.log in gone]
                if not compacting:
                    self._retain(part, due, pub, changed)
                    continue
                source, scratch = part, None
                if due:  # retention first, then the cleaner over what is left
                    scratch = pub.staging / "retained" if pub is not None else self._scratch()
                try:
                    if due:
                        source = logdir.open_partition(copy_without(part, due, scratch))
                    r = self._compact(source, self._source_dir(single) / CLEANER_CHECKPOINT,
                                      pub.new if pub is not None else None)
                finally:
                    if scratch is not None:
                        remove_tree(scratch)
                if r.cleaned_to is not None:
                    self.cleaned_to[(part.topic, part.partition)] = r.cleaned_to
                if pub is not None:
                    if due or r.due or r.skipped or not pub.in_place:
                        changed.append(part.path.name)
                    else:  # nothing to change: the partition stays as it is
                        remove_tree(pub.new / part.path.name)
                if pub is None or part.path.name in changed:
                    self.notes += [f"{'left out' if pub else 'would leave out'}: producer snapshot {part.path.name}/"
                                   f"{p.name} ({why})" for p, why in r.snapshots_removed]
                for s, kept in zip(r.skipped, r.kept_files):
                    final = pub.target / part.path.name / kept.name if pub is not None else None
                    self.notes.append(f"skipped: {s.describe()}" + (f"; kept in {final}" if final else ""))
                self.notes += [f"would skip: {s.describe()}" for s in r.skipped[len(r.kept_files):]]
            if pub is not None and not pub.in_place and not single:
                files = _stage_root_files(self.path, pub)
            replacing = self._stage_checkpoint(pub, files, changed, single) if pub is not None else []
        except BaseException:
            if pub is not None:
                try:
                    pub.abandon()
                except KafkaCodecError:
                    pass  # the journal stays, and the next command rolls the build back
            raise
        if pub is not None:
            self.out = pub.target
            for line in pub.publish(changed, files, replacing):
                self.notes.append(line)

    def _source_dir(self, single: bool) -> Path:
        """The log dir the partitions come from: the one a single partition's directory is in."""
        return self.path.parent if single else self.path

    def _stage_checkpoint(self, pub, files: list[str], changed: list[str], single: bool) -> list[str]:
        """The target log dir's cleaner-offset-checkpoint staged with where each partition compacted
        now was cleaned to, as Kafka's cleaner updates it after a cleaning (LogCleanerManager
        .updateCheckpoints): the entries already there kept, those of partitions copied to --out
        taken from the source's, and, as Kafka keeps them, only those of partitions in the log dir.
        Without it the next cleaning takes the whole log for dirty, and verify calls the offsets a
        cleaning removed records lost where nothing else shows the topic is compacted."""
        from kafkacodec.storage.change.replace import STAGING_NAME
        from kafkacodec.storage.layout.textfiles import read_offset_checkpoint, write_checkpoint

        if not self.cleaned_to:
            return []
        entries: dict[tuple[str, int], int] = {}
        if (pub.target / CLEANER_CHECKPOINT).is_file():
            entries.update(read_offset_checkpoint(pub.target / CLEANER_CHECKPOINT))
        source = self._source_dir(single) / CLEANER_CHECKPOINT
        if not pub.in_place and source.is_file():
            entries.update((tp, offset) for tp, offset in read_offset_checkpoint(source).items()
                           if f"{tp[0]}-{tp[1]}" in changed)
        entries.update(self.cleaned_to)
        present = set(changed) | {p.name for p in pub.target.iterdir() if p.is_dir() and p.name != STAGING_NAME}
        kept = sorted((tp, offset) for tp, offset in entries.items() if f"{tp[0]}-{tp[1]}" in present)
        if CLEANER_CHECKPOINT in files:  # the source's copy, staged for a target without one: this takes its place
            files.remove(CLEANER_CHECKPOINT)
        write_checkpoint(pub.files / CLEANER_CHECKPOINT, [[topic, partition, offset]  # a FileProblem on failure
                                                          for (topic, partition), offset in kept])
        return [CLEANER_CHECKPOINT]

    def _retain(self, part, due, pub, changed: list[str]) -> None:
        """Policy delete: the kept segments read in full, their damage refused or (skip_corrupt) left
        out of the copy and kept beside it; the copy written when there is a publication."""
        from kafkacodec.storage.change.retained import copy_retained

        writing = pub is not None and (due or not pub.in_place)
        r = copy_retained(part, due, pub.new if writing else None, self.skip_corrupt)
        if pub is not None and r.skipped and not writing:  # in place, nothing due: the damage alone changes it
            writing, r = True, copy_retained(part, due, pub.new, self.skip_corrupt)
        if writing:
            changed.append(part.path.name)
        for s, kept in zip(r.skipped, r.kept_files):
            self.notes.append(f"skipped: {s.describe()}; kept in {pub.target / part.path.name / kept.name}")
        self.notes += [f"would skip: {s.describe()}" for s in r.skipped[len(r.kept_files):]]
        self.totals[0] += r.skipped_bytes

    def _compact(self, part, checkpoint, out):
        from kafkacodec.storage.change.compaction import CompactionConfig, compact

        r = compact(part, CompactionConfig(*self.options["compaction"]), self.now, checkpoint, out, self.skip_corrupt)
        self.compacted.add_row(cell(f"{part.topic}-{part.partition}"), "yes" if r.due else "no", f"{r.dirty_ratio:.2f}",
                               str(r.first_uncleanable), f"{r.records_removed:,}", f"{r.tombstones_removed:,}",
                               f"{r.markers_removed:,}", f"{r.bytes_before:,}", f"{r.bytes_after:,}")
        self.totals[0] += r.bytes_before - r.bytes_after
        self.totals[1] += r.records_removed + r.tombstones_removed + r.markers_removed
        return r

    def _retention_rows(self, part, due) -> None:
        for d in due:
            f = d.facts
            self.deleted.add_row(cell(f"{part.topic}-{part.partition}"), cell(f.segment.log.name), f"{f.size:,}",
                                 f"{f.records:,}", str(f.largest_timestamp), d.reason)
            self.totals[0] += f.size
            self.totals[1] += f.records

    def _scratch(self) -> Path:
        import tempfile
        return Path(tempfile.mkdtemp(prefix="kafkacodec-clean-"))

    def print(self, applied: bool) -> None:
        from rich.console import Console

        console = Console()
        wide = Console(width=max(console.width, 160) if not console.is_terminal else None)
        if "delete" in self.policy:
            wide.print(self.deleted)
        if "compact" in self.policy:
            wide.print(self.compacted)
        for note in self.notes:
            say(note)
        click.echo(f"{'removed' if applied else 'would remove'}: {self.totals[0]:,} bytes, {self.totals[1]:,} records "
                   f"(policy {self.policy}, now = {self.now})" + (f"; cleaned log in {self.out}" if applied else ""))


def _publication(target: Path, in_place: bool, keep_old: Path | None):
    from kafkacodec.storage.change.replace import Publication
    return Publication(target, in_place, keep_old)


def _stage_root_files(source: Path, pub) -> list[str]:
    """meta.properties and the checkpoints go with the log dir (those --out lacks), not our own files."""
    from kafkacodec.storage.diskio.safeio import copy_file

    names = []
    for f in sorted(source.iterdir()):
        if f.is_file() and not f.name.startswith(".kafkacodec") and not (pub.target / f.name).exists():
            copy_file(f, pub.files / f.name)
            names.append(f.name)
    return names


def _make_out(out: Path) -> None:
    from kafkacodec.storage.diskio.safeio import os_problem
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise os_problem(out, err) from None


def _inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it, through symbolic links (as the lock judges the log dir)."""
    where = Path(os.path.realpath(path))
    return where == root or root in where.parents


def _check_out(out: Path, root: Path) -> None:
    if _inside(out, root):
        _usage(f"--out {out}: must be outside the log dir {root} (Kafka would load what is written there)")


def _check_keep_old(keep_old: Path, root: Path) -> None:
    if not keep_old.is_dir():  # through links, as _inside and stat judge it
        _usage(f"--keep-old {keep_old}: not a directory")
    if _inside(keep_old, root):
        _usage(f"--keep-old {keep_old}: must be outside the log dir {root} (Kafka would load what is there)")
    if os.stat(keep_old).st_dev != os.stat(root).st_dev:
        _usage(f"--keep-old {keep_old}: must be on the same file system as {root} (the directories are moved)")


def _hint(err, skip_corrupt: bool) -> str:
    from kafkacodec.runtime.errors import DecodeError, LimitExceededError
    if isinstance(err, LimitExceededError):  # not damage: neither skipping nor recover is the answer
        return ("\nnothing was changed; the batch is not damaged but larger than this run's limits: raise them "
                "(kafkacodec --max-decompressed-bytes N --max-batch-bytes N --max-items N clean ...)")
    if isinstance(err, DecodeError) and not skip_corrupt and "checkpoint" not in (getattr(err, "file", "") or ""):
        return ("\nnothing was changed; pass --skip-corrupt to clean past the damage (its bytes are kept aside), "
                "or `kafkacodec recover` the log dir first")
    return ""


def _a_number(param, value: float) -> float:
    if value != value:  # NaN passes every range check: it compares false with both ends
        raise click.BadParameter("nan is not a number", param=param)
    return value


def _usage(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)
