"""A segment's .log and indexes replaced so that a kill at any moment leaves the old .log with its
old indexes, the new .log with its new indexes, or a .log without an offset index: never a .log
beside an offset index of other bytes.

Kafka trusts a segment's indexes when its .index is there (a .timeindex then missing is taken for
empty, a .txnindex missing for no aborted transaction); without one it recovers the segment,
rebuilding every index from the .log, as `kafkacodec recover` does. So the old .index goes
first, then the .log and the other indexes are put in place, and the new .index comes last.
Every file is written and flushed under a temporary name before anything is replaced: a failure
then (a full disk) leaves every file as it was and no temporary one."""
from __future__ import annotations

import os
from pathlib import Path

from ..diskio.durable import TMP_SUFFIX, fsync_dir, remove_quietly, tmp_path_of, write_new_file
from ..diskio.safeio import os_problem

OTHER_INDEXES = (".timeindex", ".txnindex")


def temporary_name(path: Path) -> Path:
    """Where `path` is written before it is renamed into place: names `recover` removes when a
    kill leaves them (an index's `.tmp`, rebuilt from the log; the .log's `.kafkacodec-tmp`)."""
    return path.with_name(path.name + TMP_SUFFIX) if path.suffix == ".log" else tmp_path_of(path)


def replace_segment(log: Path, indexes: dict[Path, bytes], data: bytes) -> list[Path]:
    """Put `data` at `log` and `indexes` (by path: its .index, .timeindex, .txnindex) beside it.
    The indexes of `log` that `indexes` lacks are removed, as they describe the bytes replaced;
    returns those removed. A failure raises a FileProblem naming the file."""
    offset_index = log.with_suffix(".index")
    files = {log: data, **indexes}
    tmps = {path: temporary_name(path) for path in files}
    at = log  # the file being changed, named when it fails
    try:
        for at, content in files.items():
            write_new_file(tmps[at], content, durable=True, target=at)
        removed = []
        at = offset_index  # from here each state is one Kafka's recovery and `recover` complete
        if _unlink(offset_index):
            fsync_dir(log.parent)  # no .index before anything else changes
            if offset_index not in indexes:
                removed.append(offset_index)
        at = log
        os.replace(tmps[log], log)
        for at in (log.with_suffix(suffix) for suffix in OTHER_INDEXES):
            if at in indexes:
                os.replace(tmps[at], at)
            elif _unlink(at):
                removed.append(at)
        fsync_dir(log.parent)  # the .log and the other indexes before the .index that vouches for them
        if offset_index in indexes:
            at = offset_index
            os.replace(tmps[offset_index], offset_index)
            fsync_dir(log.parent)
        return removed
    except BaseException as err:
        for tmp in tmps.values():  # those not yet renamed into place
            remove_quietly(tmp)  # renamed into place, or never written
        if isinstance(err, OSError):
            raise os_problem(at, err) from None
        raise


def _unlink(path: Path) -> bool:
    """Remove `path`; whether it was there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True
