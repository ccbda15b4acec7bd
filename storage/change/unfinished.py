"""What a journal (storage.change.journal) or an interrupted run left unfinished in a log dir:
`pending` lists it for read-only commands, `resume` finishes or rolls it back before a command
changes the log dir."""
from __future__ import annotations

from pathlib import Path

from . import journal, recover, replace
from .journal import Pending
from .lock import log_root

# the module that describes and finishes each kind of journaled operation
HANDLERS = {"clean": replace, "write": replace, "recover": recover}


def pending(path: Path) -> list[Pending]:
    """What unfinished operations the log dir of `path` (a log dir, a partition directory or a
    segment) holds, without changing anything; empty when there are none."""
    root = log_root(path)
    out = []
    state = journal.read(root)
    if state is not None:
        out.append(Pending(journal.journal_path(root), state["kind"], HANDLERS[state["kind"]].describe(state)))
    out += replace.leftovers(root)
    return out


def resume(root: Path, dry_run: bool = False) -> list[str]:
    """Finish or roll back what the journal of log dir `root` describes, and clear what earlier
    runs left behind; one line per thing done (or, with `dry_run`, that would be done). The
    caller holds the log dir's lock."""
    done = []
    state = journal.read(root)
    if state is not None:
        done += HANDLERS[state["kind"]].resume(Path(root), state, dry_run)
        if not dry_run:
            journal.clear(root)
    done += replace.clear_leftovers(Path(root), dry_run)
    return done
