"""`kafkacodec metadata`: the cluster's state replayed from a KRaft controller's
`__cluster_metadata` at any offset or time, the differences between two points, and the history
of one partition, topic, broker or controller."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import click

from .metadata_text import change_line, short, state_lines
from .questions import parse_time, show_time
from .terminal import shown


def _say(text: str, err: bool = False) -> None:
    """A line of text output, names in it escaped (terminal.shown): they come from the files."""
    click.echo(shown(text), err=err)


def parse_point(text: str, option: str):
    """An offset (a plain number) or a time (ISO 8601) of the metadata log."""
    from kafkacodec.storage.kraft.replay import Point

    if re.fullmatch(r"\s*[0-9]+\s*", text):  # its length first: int() refuses more than 4,300 digits
        if len(text.strip().lstrip("0")) > 19 or int(text) > 2 ** 63 - 1:
            shown = text.strip() if len(text.strip()) <= 40 else f"{text.strip()[:20]}... ({len(text.strip())} digits)"
            raise click.BadParameter(f"{shown} is beyond 2^63-1, the largest offset", param_hint=option)
        return Point(offset=int(text))
    try:
        return Point(time=parse_time(text))
    except click.BadParameter:
        raise click.BadParameter(f"{text!r} is neither an offset nor an ISO 8601 time such as 2026-11-22T03:12:00Z",
                                 param_hint=option) from None


@dataclass(frozen=True)
class Asked:
    """How to answer: the output's form and what the replay may do."""
    as_json: bool = False
    show_secrets: bool = False
    skip_undecodable: bool = False


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--at-offset", type=click.IntRange(0), help="The state after the record at this offset.")
@click.option("--at-time", help="The state after the last record at or before this time "
                                "(ISO 8601, UTC unless it says otherwise, or ms since the epoch).")
@click.option("--diff", nargs=2, metavar="A B", help="What changed between two points (offsets or ISO 8601 times).")
@click.option("--history", "subject", metavar="WHAT",
              help="Every change of one thing: TOPIC-N (a partition), topic:NAME, broker:ID or controller:ID.")
@click.option("--topic", "topics", multiple=True, metavar="NAME",
              help="Only this topic, its partitions and configs (repeatable); with --diff, only its differences.")
@click.option("--under-replicated", is_flag=True,
              help="Only partitions with fewer replicas in sync than assigned (as kafka-topics "
                   "--under-replicated-partitions counts them).")
@click.option("--offline", is_flag=True,
              help="Only partitions without a leader, or whose leader is not a live (unfenced) broker (as "
                   "kafka-topics --unavailable-partitions counts them).")
@click.option("--fenced", is_flag=True, help="Only the fenced brokers.")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
@click.option("--show-secrets", is_flag=True, help="Show SCRAM salts and keys and secret-looking config values.")
@click.option("--skip-undecodable", is_flag=True,
              help="Go on past records Kafka's reader cannot decode, listing each as skipped (Kafka stops before "
                   "the batch holding the first).")
def metadata(path: Path, at_offset: int | None, at_time: str | None, diff: tuple[str, str] | None,
             subject: str | None, topics: tuple[str, ...], under_replicated: bool, offline: bool, fenced: bool,
             as_json: bool, show_secrets: bool, skip_undecodable: bool) -> None:
    """The cluster's state from a KRaft metadata log (PATH: `__cluster_metadata-0` or the log dir
    holding it), replayed as Kafka's metadata image holds it: from the newest snapshot at or
    before the point, then the log. What no tool of Kafka's can say: the state at any past
    offset or time, what changed between two points, and a partition's or broker's history.
    --topic, --under-replicated, --offline and --fenced keep only what they select (partitions
    that either of the two partition filters selects).

    Exit status: 0 when the answer is the state at the point asked (snapshots passed over, records
    Kafka refuses, an open transaction and skipped records are said); 1 when the replay stopped
    before the point (damage, a gap, a record Kafka's reader cannot decode, a log that ends
    before the offset asked) and the state shown is the one where it stopped, or a topic asked
    for is not in the state; 2 for usage errors."""
    from kafkacodec.storage.kraft.replay import MetadataLogProblem, Point, open_metadata_log
    from kafkacodec.storage.kraft.questions import Selection

    chosen = [o for o, v in (("--at-offset", at_offset), ("--at-time", at_time), ("--diff", diff),
                             ("--history", subject)) if v is not None]
    if len(chosen) > 1:
        raise click.UsageError(f"choose one of {', '.join(chosen)}")
    selection = Selection(tuple(topics), under_replicated, offline, fenced)
    state_only = [o for o, v in (("--under-replicated", under_replicated), ("--offline", offline),
                                 ("--fenced", fenced), ("--topic", topics and subject)) if v]
    if state_only and (diff is not None or subject is not None):
        raise click.UsageError(f"{', '.join(state_only)} go only with the state, not with "
                               f"{'--diff' if diff is not None else '--history'}")
    asked = Asked(as_json, show_secrets, skip_undecodable)
    try:
        log = open_metadata_log(path)
        if subject is not None:
            return _history(log, subject, asked)
        if diff is not None:
            return _diff(log, parse_point(diff[0], "--diff"), parse_point(diff[1], "--diff"), selection, asked)
        point = Point(offset=at_offset, time=None if at_time is None else parse_time(at_time))
        _state(log, point, selection, asked)
    except MetadataLogProblem as err:  # its message names files and records: escaped for the terminal
        raise type(err)(shown(str(err))) from None


def _quorum_state_file(log) -> dict | None:
    """The voter's `quorum-state` as it is now (it keeps no history)."""
    from kafkacodec.storage.layout.textfiles import QUORUM_STATE, read_quorum_state

    path = log.partition.path / QUORUM_STATE
    return read_quorum_state(path) if path.exists() else None


def _warn(state, stopped: str | None, onward_from: int | None = None) -> None:
    """What the state shown leaves out or passed over, and why the replay stopped short, if it did;
    for a replay carried on, only what it met after its first `onward_from` skipped records."""
    from kafkacodec.storage.kraft.replay import UndecodableBatch

    for note in state.notes if onward_from is None else []:
        _say(f"warning: {note}", err=True)
    skipped = state.skipped[onward_from or 0:]
    if skipped:
        _say(f"warning: {len(skipped)} record(s) Kafka's reader cannot decode were skipped (Kafka stops "
                   "before the first): offset " + ", ".join(str(o) for o, _ in skipped), err=True)
    if state.open_transaction():
        _say(f"note: {state.open_transaction()}", err=True)
    if stopped is not None:
        hint = " (--skip-undecodable goes on past it)" if isinstance(state.stop, UndecodableBatch) else ""
        _say(f"warning: {stopped}; the state shown is the one after offset {state.offset}{hint}", err=True)


def _replayed(log, point, skip_undecodable: bool = False):
    from kafkacodec.storage.kraft.replay import replay

    state, stopped = replay(log, point, skip_undecodable)
    _warn(state, stopped)
    return state, stopped


def _state(log, point, selection, asked: Asked) -> None:
    from kafkacodec.storage.kraft.view import replay_json

    state, stopped = _replayed(log, point, asked.skip_undecodable)
    view = replay_json(state, asked.show_secrets)
    view["quorumStateFile"] = _quorum_state_file(log)
    missing = selection.missing(view)
    if selection:
        view = selection.of(view)
    if asked.as_json:
        click.echo(json.dumps(view, indent=2))
    else:
        for line in state_lines(view, selection.partition_kinds(), selection.fenced):
            _say(line)
    for name in missing:
        _say(f"warning: no topic named {name!r} at offset {state.offset}", err=True)
    if stopped is not None or missing:
        raise SystemExit(1)


def _diff(log, a, b, selection, asked: Asked) -> None:
    """One replay when B is at or after A: on from A's state, whose view is taken first. Lists of
    brokers say how they changed: reordered, or which joined and left."""
    from kafkacodec.storage.kraft.replay import replay_onward
    from kafkacodec.storage.kraft.questions import membership
    from kafkacodec.storage.kraft.view import differences, replay_json

    def view_of(state) -> dict:
        view = replay_json(state, asked.show_secrets)
        return selection.of(view) if selection else view

    before, stopped_a = _replayed(log, a, asked.skip_undecodable)
    view_a = json.loads(json.dumps(view_of(before)))  # a copy: the replay goes on
    before_at = (before.offset, before.time)
    if stopped_a is None and (before.offset is None or not b.passed_by(*before_at)):
        said = len(before.skipped)
        after, stopped_b = before, replay_onward(log, before, b, asked.skip_undecodable)
        _warn(after, stopped_b, onward_from=said)
    else:
        after, stopped_b = _replayed(log, b, asked.skip_undecodable)
    changes = [(p, x, y, membership(p, x, y)) for p, x, y in differences(view_a, view_of(after))]
    if asked.as_json:
        click.echo(json.dumps([{"path": p, "before": x, "after": y, **how} for p, x, y, how in changes], indent=2))
    else:
        _say(f"from offset {before_at[0]} ({show_time(before_at[1])}) to offset {after.offset} "
             f"({show_time(after.time)}): {len(changes)} difference(s)")
        for p, x, y, how in changes:
            click.echo("  " + change_line(shown(p), x, y, how))
    if stopped_a or stopped_b:
        raise SystemExit(1)


def _history(log, subject: str, asked: Asked) -> None:
    from kafkacodec.storage.kraft.replay import Replay
    from kafkacodec.storage.kraft.questions import membership
    from kafkacodec.storage.kraft.view import differences, history, subject as view_of

    try:
        view = view_of(subject)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--history") from None
    count = 0
    state = Replay()
    for change in history(log, view, asked.skip_undecodable, state):
        count += 1
        if asked.as_json:
            click.echo(json.dumps({"offset": change.offset, "time": change.time, "causes": change.causes,
                                   "before": change.before, "after": change.after}))
            continue
        head = f"{change.offset:>10}  {show_time(change.time)}  {', '.join(change.causes)}"
        if change.before is None or change.after is None:
            click.echo(f"{head}: {'created' if change.before is None else 'removed'} {short(change.after)}"
                       if change.after is not None else f"{head}: removed")
            continue
        diffs = differences(change.before, change.after)
        click.echo(f"{head}: " + "; ".join(change_line(shown(p), x, y, membership(p, x, y), " ") for p, x, y in diffs))
    if not count and not asked.as_json:
        _say(f"no record of {subject} in this metadata log")
    _warn(state, None)
    if state.skipped and not asked.as_json:
        _say(f"records passed over (Kafka's reader cannot decode them): {len(state.skipped)}")
        for offset, problem in state.skipped:
            _say(f"  offset {offset}: {problem}")

