"""Cleaned copies of partitions published into a log dir as one journaled operation: in place
(each partition directory swapped for its cleaned copy) or into another log dir (`--out`). The
same publication serves the Spark sink's job commit (kind "write"), with the partitions a job
wrote in place of those copies.

The copies are built in `<log dir>/.kafkacodec-clean/new/` under a journal in phase "build"; a
crash then rolls back (the copies go, the log dir is as it was). Once every copy is flushed to
disk, the journal turns to phase "publish" and a crash rolls forward: each partition is moved
aside (`.kafkacodec-clean/old/<p>`) and its copy renamed into place, one rename at a time, each
state telling the next step; only when every copy is in place, and the directory renames are
flushed, are the originals removed (or moved to `keep_old`), and the journal with them."""
from __future__ import annotations

import os
import time
from pathlib import Path

from kafkacodec.runtime.errors import KafkaCodecError

from . import journal
from ..diskio.durable import TMP_SUFFIX, fsync_dir, fsync_tree, remove_tree, rename_durably, unlink_durably
from .journal import JournalProblem, Pending
from ..diskio.safeio import FileProblem, os_problem
from ..audit.verify import verify_partition
from ..layout.logdir import open_partition

STAGING_NAME = ".kafkacodec-clean"
LEGACY_OLD_SUFFIX = ".kafkacodec-old"  # a partition moved aside by versions without a journal
# temporaries of interrupted writes, never the only copy of data: storage.diskio.durable.create_kept's
# (TMP_SUFFIX), and write_atomically's `.tmp` of files rebuilt from the log
DERIVED_TMP_SUFFIXES = (".index.tmp", ".timeindex.tmp", ".txnindex.tmp", ".snapshot.tmp")
PUBLISHING = ("clean", "write")  # the kinds of journaled operation that publish through the staging directory


class Publication:
    """`Publication(target, in_place, keep_old)`: begin(), build copies into `.new`, stage root
    files into `.files`, then publish(names) or abandon()."""

    def __init__(self, target: Path, in_place: bool, keep_old: Path | None = None, kind: str = "clean"):
        self.target = Path(os.path.abspath(target))
        self.staging = self.target / STAGING_NAME
        self.new, self.old, self.files = self.staging / "new", self.staging / "old", self.staging / "files"
        self.in_place = in_place
        self.keep_old = Path(os.path.abspath(keep_old)) if keep_old is not None else None
        self.kind = kind
        self.state: dict = {}

    def begin(self) -> None:
        """Journal the intent, then make the staging directories (any left behind went first)."""
        # paths relative to the journal's directory: a moved or copied log dir is finished where it is
        self.state = {"kind": self.kind, "phase": "build", "target": ".", "staging": STAGING_NAME,
                      "in_place": self.in_place, "keep_old": str(self.keep_old) if self.keep_old else None,
                      "started_ms": int(time.time() * 1000), "partitions": [], "files": [], "kept_as": {}}
        journal.record(self.target, self.state)
        remove_tree(self.staging)
        for d in (self.staging, self.new, self.old, self.files):
            try:
                d.mkdir()
            except OSError as err:
                raise os_problem(d, err) from None

    def publish(self, names: list[str], files: list[str] = (), replacing: list[str] = ()) -> list[str]:
        """Flush the copies, journal them, then move them into place; returns what was done. A
        partition directory that is a symbolic link is refused first, and nothing is changed.
        `files` are root files staged for a target that lacks them; `replacing`, root files staged
        to take the place of the target's own (the cleaner-offset-checkpoint), or to be new there."""
        linked = next((name for name in names if os.path.islink(self.target / name)), None)
        if linked is not None:
            self.abandon()
            raise FileProblem(self.target / linked, _link_refusal(self.target / linked))
        left = next((entry for name in names for entry in _left_behind(self.target / name, self.new / name)), None) \
            if self.in_place else None
        if left is not None:
            self.abandon()
            raise FileProblem(left, _left_behind_refusal(left, self.kind))
        fsync_tree(self.staging)
        fsync_dir(self.target)
        self.state.update(phase="publish", partitions=list(names), files=list(files), replacing=list(replacing),
                          kept_as=self._kept_names(names) if self.keep_old else {})
        journal.record(self.target, self.state)
        done = _publish(_resolved(self.target, self.state), dry_run=False)
        journal.clear(self.target)
        return done

    def abandon(self) -> None:
        """Undo the build: the copies go, the log dir is as it was."""
        remove_tree(self.staging)
        journal.clear(self.target)

    def _kept_names(self, names: list[str]) -> dict[str, str]:
        out = {}
        for name in names:
            path = self.keep_old / name
            n = 1
            while os.path.lexists(path):
                n += 1
                path = self.keep_old / f"{name}.{n}"
            out[name] = str(path)
        return out


def _link_refusal(link: Path) -> str:
    """Why a partition reached through a symbolic link is not replaced. Renaming the link would put
    the new copy on the log dir's file system and leave the directory it points to (often on
    another disk, where the operator put it) behind, holding the old data; renaming that
    directory itself would take a log dir this command holds no lock of."""
    return (f"is a symbolic link to {os.path.realpath(link)}: a partition is replaced by renaming its "
            "directory, which here would replace the link and leave the directory it points to as it is; "
            f"nothing was changed. Work on {os.path.realpath(link)} where it is, or move it here in place of "
            "the link")


def _left_behind(original: Path, copy: Path) -> list[Path]:
    """What of a partition directory its copy lacks and that is not a file: a directory (or a link
    to one, a FIFO, a socket) the partition's replacement would remove with the original."""
    try:
        entries = sorted(original.iterdir())
    except FileNotFoundError:
        return []  # a partition new to the log dir
    except OSError as err:
        raise os_problem(original, err) from None
    return [e for e in entries if not e.is_file() and not os.path.lexists(copy / e.name)]


def _left_behind_refusal(entry: Path, kind: str) -> str:
    what = "a directory" if entry.is_dir() else "a symbolic link that leads nowhere" if entry.is_symlink() \
        and not entry.exists() else "not a regular file"
    copy = "its newly written copy" if kind == "write" else "its cleaned copy"
    return (f"is {what} in a partition directory, which {copy} replaces whole: it would be removed with the "
            "original, and Kafka does not read it; nothing was changed. Move it out of the partition directory")


def describe(state: dict) -> str:
    if state["kind"] == "write":
        if state.get("phase") == "build":
            return (f"a kafka-log write was gathering the partitions its job wrote in {state.get('staging')} (the "
                    "log is unchanged; the next write, or `kafkacodec recover`, removes them)")
        return (f"a kafka-log write was putting {len(state.get('partitions', []))} partition(s) in place "
                f"({', '.join(state.get('partitions', []))}); the next write, or `kafkacodec recover`, finishes it")
    where = "in place" if state.get("in_place") else "into a new log dir"
    if state.get("phase") == "build":
        return (f"clean {where} was building its cleaned copies in {state.get('staging')} (the log is unchanged; "
                "the next command that changes the log dir, or `kafkacodec recover`, removes them)")
    return (f"clean {where} was publishing {len(state.get('partitions', []))} cleaned partition(s) "
            f"({', '.join(state.get('partitions', []))}); `kafkacodec recover` finishes it")


def _resolved(root: Path, state: dict) -> dict:
    """The journal's paths taken from the directory that holds it (absolute ones stay as they are)."""
    return {**state, "target": str(Path(root) / state["target"]), "staging": str(Path(root) / state["staging"])}


def resume(root: Path, state: dict, dry_run: bool) -> list[str]:
    state = _resolved(root, state)
    if state.get("phase") == "build":
        staging = Path(state["staging"])
        if not dry_run:
            remove_tree(staging)
        what = "the partitions of an interrupted write" if state["kind"] == "write" else \
            "the cleaned copies an interrupted clean was building"
        return [f"{'would roll back' if dry_run else 'rolled back'} {what}: removed them from {staging}; "
                "the log dir is as it was"]
    return _publish(state, dry_run)


def _publish(state: dict, dry_run: bool) -> list[str]:
    """Each partition moved into place from whatever state a crash left it in, then the root
    files, then (only then) the originals removed or kept. Every step is a rename or a removal
    that the next run does again or passes over."""
    target, staging = Path(state["target"]), Path(state["staging"])
    new, old, files = staging / "new", staging / "old", staging / "files"
    verb = "would " if dry_run else ""
    copy_name = "newly written copy" if state["kind"] == "write" else "cleaned copy"
    done = []
    for name in state["partitions"]:
        dst, copy, aside = target / name, new / name, old / name
        # lexists: a symbolic link moved aside (by versions that replaced links) may point nowhere now
        have = (os.path.lexists(dst), os.path.lexists(copy), os.path.lexists(aside))
        if have == (True, True, False) and state["in_place"]:
            steps = [(dst, aside), (copy, dst)]
        elif have in ((False, True, True), (False, True, False)):  # moved aside, or a partition new to the log dir
            steps = [(copy, dst)]
        elif have == (False, False, True):  # the copy is gone: the original goes back
            steps = [(aside, dst)]
            done.append(f"{verb}put back the original of {dst}: its cleaned copy is missing")
        elif have in ((True, False, True), (True, False, False)):
            steps = []
        else:
            raise JournalProblem(f"{journal.journal_path(target)}: cannot finish the clean of {dst}: "
                                 f"{_state(dst, copy, aside)}; resolve it by hand")
        for src, to in steps:
            if not dry_run:
                rename_durably(src, to)
        if steps and (copy, dst) in steps:
            done.append(f"{verb}replace {dst} by its {copy_name}" if have[0] or have[2] else f"{verb}write {dst}")
    for name in state.get("files", []):
        staged, dst = files / name, target / name
        if staged.exists() and not dst.exists():
            if not dry_run:
                rename_durably(staged, dst)
            done.append(f"{verb}write {dst}")
    for name in state.get("replacing", []):  # once moved, the staged file is gone: done again, it passes over
        staged, dst = files / name, target / name
        if staged.exists():
            if not dry_run:
                _replace_file(staged, dst)
            done.append(f"{verb}write {dst}")
    for name in state["partitions"]:  # every copy is in place and its rename flushed
        aside = old / name
        if not os.path.lexists(aside):
            continue
        kept = state.get("kept_as", {}).get(name)
        if os.path.islink(aside):  # only the link goes: what it points to is never removed through it
            pointed = os.path.normpath(target / os.readlink(aside))  # as read where the link stood
            if not dry_run:
                if kept:
                    rename_durably(aside, Path(kept))
                else:
                    unlink_durably(aside)
            done.append(f"{verb}{'move' if kept else 'remove'} the symbolic link that was {target / name} "
                        f"(to {pointed}){f' to {kept}' if kept else ''}, replaced by its {copy_name}; {pointed}, "
                        "which held the original, is left as it was")
            continue
        if not dry_run:
            if kept:
                rename_durably(aside, Path(kept))
            else:
                remove_tree(aside)
        done.append(f"{verb}move the original of {target / name} to {kept}" if kept else
                    f"{verb}remove the original of {target / name}, replaced by its {copy_name}")
    if not dry_run:
        remove_tree(staging)
    return done


def _state(dst: Path, copy: Path, aside: Path) -> str:
    return ", ".join(f"{p} {'exists' if os.path.lexists(p) else 'is missing'}" for p in (dst, copy, aside))


def _replace_file(staged: Path, dst: Path) -> None:
    """Rename the staged file over `dst` (atomic: the old one or the new one, never neither), then
    flush both directories."""
    try:
        os.replace(staged, dst)
    except OSError as err:
        raise os_problem(dst, err) from None
    fsync_dir(dst.parent)
    fsync_dir(staged.parent)


def leftovers(root: Path) -> list[Pending]:
    """What interrupted runs left in log dir `root` outside a journal: cleaned copies and
    partitions moved aside by versions without a journal, and temporary files of durable writes."""
    out = []
    if not os.path.isdir(root):
        return out
    state = journal.read(root)
    if (Path(root) / STAGING_NAME).exists() and (state is None or state["kind"] not in PUBLISHING):
        out.append(Pending(Path(root) / STAGING_NAME, "clean", "cleaned copies left by an interrupted clean "
                           "(the log is unchanged); `kafkacodec recover` removes them"))
    for entry in sorted(Path(root).iterdir()):
        if entry.name.endswith(LEGACY_OLD_SUFFIX) and entry.is_dir():
            original = entry.with_name(entry.name[:-len(LEGACY_OLD_SUFFIX)])
            if original.exists():
                why = (f"the original of {original}, which its cleaned copy replaced; `kafkacodec recover` removes "
                       f"it once {original.name} verifies")
            else:
                why = (f"partition {original.name} moved aside by an interrupted clean; "
                       "`kafkacodec recover` puts it back")
            out.append(Pending(entry, "clean", why))
    for tmp in _temporary_files(Path(root)):
        out.append(Pending(tmp, "write", "temporary file of an interrupted write; `kafkacodec recover` removes it"))
    return out


def clear_leftovers(root: Path, dry_run: bool) -> list[str]:
    verb = "would " if dry_run else ""
    done = []
    for item in leftovers(root):
        path = item.where
        if path.name == STAGING_NAME:
            done.append(f"{verb}remove {path}, cleaned copies left by an interrupted clean")
            if not dry_run:
                remove_tree(path)
        elif path.name.endswith(LEGACY_OLD_SUFFIX):
            original = path.with_name(path.name[:-len(LEGACY_OLD_SUFFIX)])
            if original.exists():
                # written without flushes by those versions: removed only once its copy reads whole
                if not _reads_whole(original):
                    raise JournalProblem(f"{original} and {path}, the original it replaced, both exist and "
                                         f"{original} does not verify: neither is removed; keep the one you "
                                         "want by moving the other out of the log dir")
                done.append(f"{verb}remove {path}, the original of {original}, which its cleaned copy replaced")
                if not dry_run:
                    remove_tree(path)
            else:
                done.append(f"{verb}put back {original}, moved aside by an interrupted clean")
                if not dry_run:
                    rename_durably(path, original)
        else:
            done.append(f"{verb}remove {path}, a temporary file of an interrupted write")
            if not dry_run:
                try:
                    os.unlink(path)
                except OSError as err:
                    raise os_problem(path, err) from None
    return done


def _reads_whole(partition: Path) -> bool:
    """Every batch and record of the partition directory reads and its indexes agree (deep verify)."""
    try:
        return all(report.ok for report in verify_partition(open_partition(partition)))
    except (KafkaCodecError, OSError):
        return False


def _temporary_files(root: Path) -> list[Path]:
    """Temporary files of interrupted writes in the log dir and its partition directories: of
    kept files (storage.diskio.durable.create_kept), of index and snapshot files (rebuilt from the log),
    and of a journal not yet in place (its operation has not begun)."""
    unstarted = journal.JOURNAL_NAME + ".tmp"
    out = []
    for d in [root] + sorted(p for p in root.iterdir() if p.is_dir() and p.name != STAGING_NAME):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        out += [d / n for n in sorted(names)
                if n.endswith(TMP_SUFFIX) or (d != root and n.endswith(DERIVED_TMP_SUFFIXES))
                or (d == root and n == unstarted)]
    return out
