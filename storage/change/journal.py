"""The operation journal of a log dir: a command that changes files in several steps writes what
it is about to do (`.kafkacodec-journal`, flushed with its directory) before its first step, and
removes it after its last. Every step can be done again without harm, so the next command that
changes the log dir (and `recover`) first finishes, or rolls back, what a journal left behind
describes (storage.change.unfinished). This module holds only the file.

Kinds of operation: "clean" (cleaned partitions published: storage.change.replace), "write" (the
partitions a Spark job wrote, published the same way) and "recover" (segments cut and indexes
rebuilt: storage.change.recover)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from kafkacodec.runtime.errors import KafkaCodecError

from ..diskio.durable import unlink_durably, write_atomically
from ..diskio.safeio import read_bounded

JOURNAL_NAME = ".kafkacodec-journal"
MAX_JOURNAL_BYTES = 16 << 20
KINDS = ("clean", "write", "recover")  # storage.change.unfinished finishes each


class JournalProblem(KafkaCodecError):
    """A journal that cannot be read or whose operation cannot be finished as it describes."""


@dataclass(frozen=True)
class Pending:
    """An operation left unfinished (or something left behind by one)."""
    where: Path  # the journal, or the file or directory left behind
    kind: str
    description: str

    def __str__(self) -> str:
        return f"{self.where}: unfinished {self.kind}: {self.description}"


def journal_path(root: Path) -> Path:
    return Path(root) / JOURNAL_NAME


def read(root: Path) -> dict | None:
    path = journal_path(root)
    if not os.path.lexists(path):
        return None
    data = read_bounded(path, MAX_JOURNAL_BYTES, "journal")
    try:
        state = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise JournalProblem(f"{path}: not a journal this version can read ({err})") from None
    if not isinstance(state, dict) or state.get("kind") not in KINDS:
        kind = state.get("kind") if isinstance(state, dict) else state
        raise JournalProblem(f"{path}: unknown kind of operation {kind!r}")
    return state


def record(root: Path, state: dict) -> None:
    """Write (or replace) the journal; it is on disk before this returns."""
    write_atomically(journal_path(root), json.dumps(state, indent=1, sort_keys=True).encode())


def clear(root: Path) -> None:
    unlink_durably(journal_path(root))
