"""sample, write, convert and reindex: making and mending segments."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .terminal import say, shown, shown_quoted


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Empty DIRECTORY first if it holds anything.")
@click.option("--kraft-controller", is_flag=True,
              help="Write a KRaft controller's metadata log dir instead: __cluster_metadata-0 with a snapshot.")
def sample(directory: Path, force: bool, kraft_controller: bool) -> None:
    """Write the sample log directory (the same bytes every time) into DIRECTORY: a broker's, or
    with --kraft-controller a controller's metadata log dir."""
    import shutil

    from kafkacodec.storage.samples.broker import write_sample
    from kafkacodec.storage.samples.controller import write_metadata_sample

    if directory.exists() and any(directory.iterdir()):
        if not force:
            click.echo(f"error: {directory} is not empty; pass --force to replace its content", err=True)
            sys.exit(2)
        shutil.rmtree(directory)
    for path in [write_metadata_sample(directory)] if kraft_controller else write_sample(directory):
        click.echo(f"wrote {path}")


@click.command()
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--index", "with_index", is_flag=True,
              help="Also write OUT's .index and .timeindex, and its .txnindex when it holds aborted transactions, "
                   "as Kafka's recovery builds them.")
@click.option("--recompute", is_flag=True,
              help="Take size, crc, crcValid and position from the bytes written instead of checking the ones "
                   "given (after editing records, or for compressed batches).")
@click.option("--accept-damaged", is_flag=True,
              help="Write batches marked \"crcValid\": false too (read from damaged bytes), each with a new CRC: "
                   "their records may not be the ones first written.")
def write(out: Path, force: bool, with_index: bool, recompute: bool, accept_damaged: bool) -> None:
    """Write a segment from JSON Lines on standard input (the objects `dump --json` prints).

    Only `records` is required: a record may be as little as {"value": "<base64>"}. Keys the
    records determine (offsets, count, maxTimestamp) are derived when left out and checked when
    given; the rest default to Kafka's "none" values (magic 2, no compression, CreateTime, -1
    for producer fields). Every problem of a line is reported, by field, and nothing is
    written. A batch marked "crcValid": false (read from damaged bytes) is refused unless
    --accept-damaged; one marked "recordsValid": false (its records did not read) always.

    OUT and each index appear whole or not at all. The indexes of a .log replaced are replaced
    too, or removed without --index; until its new .index is in place there is none, so that a
    crash never leaves an offset index beside a .log it does not describe (Kafka's recovery, and
    `kafkacodec recover`, rebuild a missing one)."""
    from kafkacodec.storage.indexes import index
    from kafkacodec.storage.diskio.durable import write_files_atomically
    from kafkacodec.storage.exchange.jsonl import JsonInputError, check_index_range, segment_from_json
    from kafkacodec.storage.layout.names import first_offset_of, offset_from_name
    from kafkacodec.storage.segments.scan import scan_bytes
    from kafkacodec.storage.change.segment_files import replace_segment

    if out.exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(2)
    if os.path.lexists(out) and not out.is_file():  # --force replaces a segment, never a device or a FIFO
        click.echo(f"error: {out}: not a regular file; refused", err=True)
        sys.exit(2)
    if with_index and out.suffix in (".index", ".timeindex"):
        click.echo(f"error: {out}: with --index, OUT must be the .log (its indexes go beside it)", err=True)
        sys.exit(2)
    if not out.parent.is_dir():
        click.echo(f"error: {out.parent}: no such directory (create it first)", err=True)
        sys.exit(2)
    try:
        segment = segment_from_json(sys.stdin.buffer, recompute, accept_damaged)
        indexes: dict[Path, bytes] = {}
        if with_index:
            try:
                base = offset_from_name(out.name)
            except ValueError:
                base = first_offset_of(segment.data)
                click.echo(f"note: {out.name} is not named by an offset; its indexes are relative to its first "
                           f"batch's offset, {base}", err=True)
            check_index_range(segment, base)
            batches = scan_bytes(segment.data).batches
            offsets, times = index.rebuild(batches, base)
            indexes[out.with_suffix(".index")] = index.encode_offset_index(offsets, base)
            indexes[out.with_suffix(".timeindex")] = index.encode_time_index(times, base)
            indexes.update(_txn_index_of(out, base, batches))
    except JsonInputError as err:  # a line per problem; a field name is the input's (values are quoted as JSON)
        click.echo("error: " + "\n".join(str(JsonInputError(field and shown(field), shown_quoted(why), err.line))
                                          for field, why in err.problems), err=True)
        sys.exit(2)
    if with_index or out.suffix == ".log":  # a segment: its indexes go with it
        removed = replace_segment(out, indexes, segment.data)
    else:
        write_files_atomically({out: segment.data})  # its failure is a FileProblem naming the file
        removed = []
    for path in removed:
        click.echo(f"note: removed {path}, which indexed the segment replaced (--index writes new ones)", err=True)
    click.echo(f"wrote {out} ({len(segment.data)} bytes)")


def _txn_index_of(log: Path, base: int, batches) -> dict[Path, bytes]:
    """The .txnindex Kafka's recovery builds for a segment of these batches at `log` (whose
    partition directory gives the producers' state before it, as `reindex` takes it): present
    when it holds an aborted transaction, or to replace one already there."""
    from kafkacodec.storage.layout.logdir import open_partition
    from kafkacodec.storage.state.producers import rebuild_txn_index
    from kafkacodec.storage.indexes.txnindex import encode_txn_index

    path = log.with_suffix(".txnindex")
    aborted, complete = rebuild_txn_index(open_partition(log.parent), base, batches)
    if not complete and any(b.magic >= 2 and b.entry.is_control for b in batches):
        click.echo(f"warning: {path}: no producer snapshot at or below offset {base} in {log.parent} and its log "
                   "starts later than 0: transactions opened before are unknown to the index", err=True)
    return {path: encode_txn_index(aborted)} if aborted or path.exists() else {}


@click.command()
@click.argument("src", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--magic", type=click.IntRange(0, 2), required=True, help="Message format to write.")
@click.option("--compression", type=click.Choice(["none", "gzip", "snappy", "lz4", "zstd"]), default=None,
              help="Codec to write (default: each batch keeps its own).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def convert(src: Path, out: Path, magic: int, compression: str | None, force: bool) -> None:
    """Convert a segment to another message format, as brokers convert (offsets kept)."""
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.change.convert import convert as run
    from kafkacodec.storage.diskio.safeio import read_whole

    if out.exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(2)
    data = read_whole(src)  # a regular file only: a FIFO or a device is refused, never waited on
    from .progress import progress

    try:
        with progress(len(data), "converting") as advance:
            data, report = run(data, magic, compression, advance)
    except KafkaCodecError as err:
        say(f"error: {src}: {err}", err=True)
        sys.exit(1)
    _write_file(out, data)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"wrote {out}: {report.batches} batches, {report.records} records, magic {magic}")


def _write_file(path: Path, data: bytes) -> None:
    """The file written whole (durable.write_atomically, which removes its temporary file on any
    failure); a failure to write (a read-only file system, no space left) is a FileProblem naming the file."""
    from kafkacodec.storage.diskio.durable import write_atomically

    write_atomically(path, data)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--check", is_flag=True, help="Compare with the index files on disk instead of writing them.")
@click.option("--index-interval-bytes", "interval", type=int, default=4096, show_default=True,
              help="index.interval.bytes of the topic.")
def reindex(path: Path, check: bool, interval: int) -> None:
    """Rebuild the .index, .timeindex and .txnindex of a segment, of every segment of a partition,
    or of a whole log dir, exactly as Kafka's recovery would.

    The transaction index needs the producers' state before the segment: it comes from the
    partition's newest .snapshot at or below the segment and the batches after it. A .log whose
    name is not an offset takes its base offset from its first batch. Each file is written whole
    or not at all; after an interruption, run the command again.

    With --check, an index that differs from the rebuilt one but agrees with the log, as verify
    checks it (Kafka's append path indexes a multi-batch append by its last offset; its cleaner
    keeps the broker's .txnindex entries), is said in a note and left as it is.

    Exit status: 0; with --check, 1 when an index is missing, does not read or disagrees with the log."""
    from kafkacodec.storage.layout import logdir

    if not check:  # the log dir's lock, and what an interrupted command left finished first
        from kafkacodec.storage.change.lock import log_root
        from .changing import hold
        hold([log_root(path)], "reindex")
    from .progress import progress, size_of

    logs = [seg.log for part in logdir.at_path(path).partitions for seg in part.segments]
    if not logs:
        click.echo(f"{path}: no segments to index")
    stale = []
    with progress(sum(size_of(log) for log in logs), "indexing") as advance:
        for log in logs:
            stale += _reindex_segment(log, check, interval)
            advance(size_of(log))
    if check and stale:
        click.echo(f"{len(stale)} index file{'s' if len(stale) != 1 else ''} to rebuild: run "
                   f"`kafkacodec reindex {path}`", err=True)
    sys.exit(1 if stale else 0)


def _reindex_segment(log: Path, check: bool, interval: int) -> list[Path]:
    """One segment's indexes rebuilt and written, or (`check`) compared with the files: the ones
    that differ."""
    from kafkacodec.runtime.errors import DecodeError
    from kafkacodec.storage.indexes import index
    from kafkacodec.storage.layout.logdir import open_partition, segment_of
    from kafkacodec.storage.state.producers import rebuild_txn_index
    from kafkacodec.storage.diskio.safeio import check_regular
    from kafkacodec.storage.segments.scan import ScanResult, valid_file_batches
    from kafkacodec.storage.indexes.txnindex import encode_txn_index, read_txn_index, read_txn_index_file

    base = segment_of(log).base_offset
    size = check_regular(log)
    scan = ScanResult(file_size=size)
    # two passes over the file, keeping no batch: memory stays bounded whatever the segment's size
    offsets, times = index.rebuild(valid_file_batches(log, scan), base, interval)
    aborted, complete = rebuild_txn_index(open_partition(log.parent), base, valid_file_batches(log, ScanResult(size)))
    files = {log.with_suffix(".index"): index.encode_offset_index(offsets, base),
             log.with_suffix(".timeindex"): index.encode_time_index(times, base)}
    if aborted or log.with_suffix(".txnindex").exists():  # Kafka creates it on the first abort
        files[log.with_suffix(".txnindex")] = encode_txn_index(aborted)
    if scan.error is not None:
        click.echo(f"warning: {log}: indexes cover the valid first {scan.valid_bytes} bytes only: {scan.error}; "
                   f"`kafkacodec recover {log.parent}` cuts the damage", err=True)
    if not complete:
        click.echo(f"warning: {log}: no producer snapshot at or below the segment and the log starts later than 0: "
                   "transactions opened before the log start are unknown", err=True)
    readers = {".index": lambda d: index.read_offset_index(d, base),
               ".timeindex": lambda d: index.read_time_index(d, base), ".txnindex": read_txn_index}
    if not check:
        for path, data in files.items():
            _write_file(path, data)
            click.echo(f"wrote {path} ({len(readers[path.suffix](data))} entries)")
        return []
    bound = index.max_entries(size)  # what the segment explains: a sparse or huge file costs no more
    on_disk = {".index": lambda p: list(index.iter_offset_index(p, base, bound)),
               ".timeindex": lambda p: list(index.iter_time_index(p, base, bound)),
               ".txnindex": lambda p: read_txn_index_file(p, size)}
    stale, problems = [], None
    for path, data in files.items():
        rebuilt = readers[path.suffix](data)
        if not path.exists():
            stale.append(path)
            click.echo(f"{path}: missing (the rebuilt index has {len(rebuilt)} entries)", err=True)
            continue
        try:
            found = on_disk[path.suffix](path)
        except DecodeError as err:
            found = err
        if found == rebuilt:
            continue
        if not isinstance(found, DecodeError):  # another index Kafka writes, or a wrong one: verify's checks tell
            from kafkacodec.storage.audit.verify import index_problems
            problems = problems if problems is not None else index_problems(segment_of(log), open_partition(log.parent))
            if not problems[path.suffix]:
                click.echo(f"note: {path}: not the index recovery would build, but it agrees with the log (as a "
                           "broker's append, or its cleaner, writes it); left as it is", err=True)
                continue
        stale.append(path)
        why = f": {found}" if isinstance(found, DecodeError) else "; " + "; ".join(problems[path.suffix])
        click.echo(f"{path}: differs from the rebuilt index{why}", err=True)
    return stale


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Say what would be done; change nothing.")
@click.option("--salvage", is_flag=True,
              help="Then write the intact batches among the cut bytes (and those kept by earlier runs) back into "
                   "the partition as a new segment, named by its base offset, and report the offsets lost.")
def recover(path: Path, dry_run: bool, salvage: bool) -> None:
    """Repair a segment, a partition or a log dir as Kafka's recovery does: cut each .log at its
    first bad batch (framing, CRC, or records that do not decode) and rebuild the indexes that
    disagree with the log. The cut-off bytes are kept in <segment>.log.corrupt-<position> (a new
    name each time, never written over). First finishes, or rolls back, what an interrupted
    command that changes files left behind.

    With --salvage, the batches after the damage that read whole (CRC valid, every record
    decoding) go back into the partition as a segment of their own, between the cut segment and
    the next, with its indexes; the offsets no batch gives back are reported. Run again, it
    writes nothing twice.

    Exit status: 0 when nothing needed doing or all is done, 1 when something could not be
    recovered, 2 for usage errors, a busy log dir, or files that cannot be written."""
    from kafkacodec.runtime.errors import KafkaCodecError
    from kafkacodec.storage.change import unfinished
    from kafkacodec.storage.change import recover as r
    from kafkacodec.storage.change.lock import log_root
    from .changing import changing, fail

    root = log_root(path)
    try:
        if dry_run:
            resumed = unfinished.resume(root, dry_run=True)
            for line in resumed:
                say(line)
            plan = _recovery_plan(path)
            salvaged = _salvage(path, plan, dry_run=True) if salvage else []
        else:
            resumed = []
            with changing([root], "recover", on_resumed=resumed.append):
                plan = _recovery_plan(path)
                r.carry_out(root, plan, single=not path.is_dir())
                salvaged = _salvage(path, plan, dry_run=False) if salvage else []
    except KafkaCodecError as err:
        fail(err)
    for line in resumed if not dry_run else []:  # the report names partitions and files: escaped
        say(line)
    for repair in plan.repairs:
        say(_described(repair, dry_run))
    for failure in plan.failures:
        say(f"error: {failure.path}: could not be recovered: {failure.reason}", err=True)
    for s in salvaged:
        for line in s.describe(dry_run):
            say(f"error: {line}" if s.failed else line, err=s.failed)
    if not (plan.repairs or plan.failures or resumed or any(s.segment or s.failed for s in salvaged)):
        click.echo(f"{path}: nothing to recover" + (" or salvage" if salvage else ""))
    sys.exit(1 if plan.failures or any(s.failed for s in salvaged) else 0)


def _salvage(path: Path, plan, dry_run: bool) -> list:
    """--salvage: the intact batches of each partition's kept cut bytes written back (with
    `dry_run`, also of the cuts `plan` would make), each partition as it is after recovery."""
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.change import salvage
    from kafkacodec.storage.segments.guarded import read_segment

    single = None if path.is_dir() else path
    parts = logdir.partitions_at(path) if single is None else [logdir.open_partition(path.parent)]
    planned = {repair.segment.log: repair for repair in plan.repairs if repair.truncated_bytes} if dry_run else {}
    out = []
    for part in parts:
        cuts = salvage.cuts_of(part, single)
        for seg in part.segments:
            repair = planned.get(seg.log)
            if repair is not None and (single is None or seg.log == single):  # the cut it would make
                data = read_segment(seg.log)
                cuts.append(salvage.Cut(repair.kept_in, seg, data[repair.valid_bytes:],
                                        salvage.end_offset_of(data[:repair.valid_bytes], seg.base_offset)))
        for cut in cuts:  # each as the partition is after the ones before
            now = part if dry_run else logdir.open_partition(part.path, part.topic, part.partition)
            (s,) = salvage.plan(now, [cut])
            if s.segment is not None and not dry_run:
                salvage.write(now, s)
            out.append(s)
    return [s for s in out if s.segment is not None or s.failed or s.left_out]


def _recovery_plan(path: Path):
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.change import recover as r

    if not path.is_dir():  # a FIFO or a device is refused as a segment would be
        return r.plan_segment_file(path)
    from .progress import advancing, partitions_size, progress

    plan = r.Plan()
    partitions = logdir.partitions_at(path)
    with progress(partitions_size(partitions), "checking") as advance:
        for part in advancing(partitions, advance):
            p = r.plan_partition(part)
            plan.repairs += p.repairs
            plan.failures += p.failures
    return plan


def _described(repair, dry_run: bool) -> str:
    said = []
    if repair.truncated_bytes:
        said.append(f"{'would truncate' if dry_run else 'truncated'} to {repair.valid_bytes} bytes "
                    f"({repair.reason}); the {repair.truncated_bytes} bytes cut off "
                    f"{'would be' if dry_run else 'are'} kept in {repair.kept_in}: {repair.cut}")
    if repair.snapshots:
        said.append(repair.snapshots_said(dry_run))
    if repair.indexes:
        said.append(f"{'would rebuild' if dry_run else 'rebuilt'} " + ", ".join(
            f"{repair.segment.log.with_suffix(s).name} ({why})" for s, why in sorted(repair.indexes.items())))
    return f"{repair.segment.log}: {'; '.join(said)}"
