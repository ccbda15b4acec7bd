"""`kafkacodec metadata`: the cluster's state replayed from a KRaft controller's
`__cluster_metadata` at any offset or time, the differences between two points, and the history
of one partition, topic, broker or controller."""
from __future__ import annotations

import json
import re
from pathlib import Path

import click

from .questions import parse_time, show_time
from .terminal import shown

PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
ACL_RESOURCES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
ACL_PATTERNS = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
ACL_OPERATIONS = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
                  "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
                  "TWO_PHASE_COMMIT")
ACL_PERMISSIONS = ("UNKNOWN", "ANY", "DENY", "ALLOW")


def _say(text: str, err: bool = False) -> None:
    """A line of text output, names in it escaped (terminal.shown): they come from the files."""
    click.echo(shown(text), err=err)


def parse_point(text: str, option: str):
    """An offset (a plain number) or a time (ISO 8601) of the metadata log."""
    from ..storage.metadata_replay import Point

    if re.fullmatch(r"\s*[0-9]+\s*", text):
        return Point(offset=int(text))
    try:
        return Point(time=parse_time(text))
    except click.BadParameter:
        raise click.BadParameter(f"{text!r} is neither an offset nor an ISO 8601 time such as 2026-11-22T03:12:00Z",
                                 param_hint=option) from None


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--at-offset", type=click.IntRange(0), help="The state after the record at this offset.")
@click.option("--at-time", help="The state after the last record at or before this time "
                                "(ISO 8601, UTC unless it says otherwise, or ms since the epoch).")
@click.option("--diff", nargs=2, metavar="A B", help="What changed between two points (offsets or ISO 8601 times).")
@click.option("--history", "subject", metavar="WHAT",
              help="Every change of one thing: TOPIC-N (a partition), topic:NAME, broker:ID or controller:ID.")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
@click.option("--show-secrets", is_flag=True, help="Show SCRAM salts and keys and secret-looking config values.")
@click.option("--skip-undecodable", is_flag=True,
              help="Go on past records Kafka's reader cannot decode, listing each as skipped (Kafka stops before "
                   "the batch holding the first).")
def metadata(path: Path, at_offset: int | None, at_time: str | None, diff: tuple[str, str] | None,
             subject: str | None, as_json: bool, show_secrets: bool, skip_undecodable: bool) -> None:
    """The cluster's state from a KRaft metadata log (PATH: `__cluster_metadata-0` or the log dir
    holding it), replayed as Kafka's metadata image holds it: from the newest snapshot at or
    before the point, then the log. What no tool of Kafka's can say: the state at any past
    offset or time, what changed between two points, and a partition's or broker's history.

    Exit status: 0 when the answer is the state at the point asked (snapshots passed over, records
    Kafka refuses, an open transaction and skipped records are said); 1 when the replay stopped
    before the point (damage, a gap, a record Kafka's reader cannot decode, a log that ends
    before the offset asked) and the state shown is the one where it stopped; 2 for usage errors."""
    from ..storage.metadata_replay import MetadataLogProblem, open_metadata_log

    chosen = [o for o, v in (("--at-offset", at_offset), ("--at-time", at_time), ("--diff", diff),
                             ("--history", subject)) if v is not None]
    if len(chosen) > 1:
        raise click.UsageError(f"choose one of {', '.join(chosen)}")
    try:
        _answer(open_metadata_log(path), at_offset, at_time, diff, subject, as_json, show_secrets, skip_undecodable)
    except MetadataLogProblem as err:  # its message names files and records: escaped for the terminal
        raise type(err)(shown(str(err))) from None


def _answer(log, at_offset, at_time, diff, subject, as_json, show_secrets, skip_undecodable) -> None:
    from ..storage.metadata_replay import Point

    if subject is not None:
        return _history(log, subject, as_json, skip_undecodable)
    if diff is not None:
        return _diff(log, parse_point(diff[0], "--diff"), parse_point(diff[1], "--diff"), as_json, show_secrets,
                     skip_undecodable)
    point = Point(offset=at_offset, time=None if at_time is None else parse_time(at_time))
    _state(log, point, as_json, show_secrets, skip_undecodable)


def _quorum_state_file(log) -> dict | None:
    """The voter's `quorum-state` as it is now (it keeps no history)."""
    from ..storage.textfiles import QUORUM_STATE, read_quorum_state

    path = log.partition.path / QUORUM_STATE
    return read_quorum_state(path) if path.exists() else None


def _warn(state, stopped: str | None, onward_from: int | None = None) -> None:
    """What the state shown leaves out or passed over, and why the replay stopped short, if it did;
    for a replay carried on, only what it met after its first `onward_from` skipped records."""
    from ..storage.metadata_replay import UndecodableBatch

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
    from ..storage.metadata_replay import replay

    state, stopped = replay(log, point, skip_undecodable)
    _warn(state, stopped)
    return state, stopped


def _state(log, point, as_json: bool, show_secrets: bool, skip_undecodable: bool) -> None:
    from ..storage.metadata_view import replay_json

    state, stopped = _replayed(log, point, skip_undecodable)
    view = replay_json(state, show_secrets)
    view["quorumStateFile"] = _quorum_state_file(log)
    if as_json:
        click.echo(json.dumps(view, indent=2))
    else:
        for line in state_lines(view):
            _say(line)
    if stopped is not None:
        raise SystemExit(1)


def _diff(log, a, b, as_json: bool, show_secrets: bool, skip_undecodable: bool) -> None:
    """One replay when B is at or after A: on from A's state, whose view is taken first."""
    from ..storage.metadata_replay import replay_onward
    from ..storage.metadata_view import differences, replay_json

    before, stopped_a = _replayed(log, a, skip_undecodable)
    view_a = json.loads(json.dumps(replay_json(before, show_secrets)))  # a copy: the replay goes on
    before_at = (before.offset, before.time)
    if stopped_a is None and (before.offset is None or not b.passed_by(*before_at)):
        said = len(before.skipped)
        after, stopped_b = before, replay_onward(log, before, b, skip_undecodable)
        _warn(after, stopped_b, onward_from=said)
    else:
        after, stopped_b = _replayed(log, b, skip_undecodable)
    changes = differences(view_a, replay_json(after, show_secrets))
    if as_json:
        click.echo(json.dumps([{"path": p, "before": x, "after": y} for p, x, y in changes], indent=2))
    else:
        _say(f"from offset {before_at[0]} ({show_time(before_at[1])}) to offset {after.offset} "
                   f"({show_time(after.time)}): {len(changes)} difference(s)")
        for p, x, y in changes:
            click.echo(f"  {shown(p)}: {_short(x)} -> {_short(y)}")
    if stopped_a or stopped_b:
        raise SystemExit(1)


def _history(log, subject: str, as_json: bool, skip_undecodable: bool) -> None:
    from ..storage.metadata_replay import Replay
    from ..storage.metadata_view import differences, history, subject as view_of

    try:
        view = view_of(subject)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--history") from None
    count = 0
    state = Replay()
    for change in history(log, view, skip_undecodable, state):
        count += 1
        if as_json:
            click.echo(json.dumps({"offset": change.offset, "time": change.time, "causes": change.causes,
                                   "before": change.before, "after": change.after}))
            continue
        head = f"{change.offset:>10}  {show_time(change.time)}  {', '.join(change.causes)}"
        if change.before is None or change.after is None:
            click.echo(f"{head}: {'created' if change.before is None else 'removed'} {_short(change.after)}"
                       if change.after is not None else f"{head}: removed")
            continue
        diffs = differences(change.before, change.after)
        click.echo(f"{head}: " + "; ".join(f"{shown(p)} {_short(x)} -> {_short(y)}" for p, x, y in diffs))
    if not count and not as_json:
        _say(f"no record of {subject} in this metadata log")
    _warn(state, None)
    if state.skipped and not as_json:
        _say(f"records passed over (Kafka's reader cannot decode them): {len(state.skipped)}")
        for offset, problem in state.skipped:
            _say(f"  offset {offset}: {problem}")


def _short(value) -> str:
    """A value in a line of text: ASCII JSON, whose escapes keep a terminal from acting on what it holds."""
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return "[" + ",".join(map(str, value)) + "]"
    return json.dumps(value, separators=(",", ":"))


def _endpoints(endpoints: list) -> str:
    return " ".join(f"{e['name']}://{e['host']}:{e['port']}"
                    + ("" if PROTOCOLS.get(e["securityProtocol"]) == e["name"]
                       else f"({PROTOCOLS.get(e['securityProtocol'], e['securityProtocol'])})") for e in endpoints)


def _name(names: tuple, number: int) -> str:
    return names[number] if 0 <= number < len(names) else str(number)


def state_lines(view: dict) -> list[str]:
    """The replayed state as an operator reads it, one thing per line."""
    ints = (lambda items: ",".join(map(str, items)) or "-")
    where = f"snapshot {view['snapshot']} then " if view["snapshot"] else ""
    out = [f"__cluster_metadata at offset {view['offset']}, epoch {view['epoch']}, {show_time(view['time'])} "
           f"({where}{view['logRecords']} log records)"]
    out.append("features: " + (" ".join(f"{k}={v}" for k, v in view["features"].items()) or "-"))
    quorum = view["quorum"]
    if quorum:
        out.append(f"quorum: leader {quorum.get('leaderId', '-')} (epoch {quorum.get('leaderEpoch', '-')}), "
                   f"voters {ints(quorum.get('voters', []))}")
    held = view.get("quorumStateFile")
    if held:
        out.append(f"quorum-state file (now): leader {held.get('leaderId', -1)}, epoch {held.get('leaderEpoch', -1)}, "
                   f"voted for {held.get('votedId', -1)}")
    out.append(f"controllers: {len(view['controllers'])}")
    out += [f"  {c['controllerId']}  {_endpoints(c['endPoints'])}" for c in view["controllers"]]
    out.append(f"brokers: {len(view['brokers'])}")
    for b in view["brokers"]:
        state = "FENCED" if b["fenced"] else "controlled shutdown" if b["inControlledShutdown"] else "active"
        out.append(f"  {b['brokerId']}  epoch {b['brokerEpoch']}  {state}  rack {b['rack'] or '-'}  "
                   f"{_endpoints(b['endPoints'])}  log dirs {len(b['logDirs'])}")
    out.append(f"topics: {len(view['topics'])}")
    for t in view["topics"]:
        out.append(f"  {t['name']}  id {t['topicId']}  {len(t['partitions'])} partition(s)")
        for p in t["partitions"]:
            line = (f"    {p['partition']}  leader {p['leader']} (epoch {p['leaderEpoch']})  replicas "
                    f"{ints(p['replicas'])}  isr {ints(p['isr'])}  partition epoch {p['partitionEpoch']}")
            for label, name in (("adding", "addingReplicas"), ("removing", "removingReplicas"),
                                ("elr", "eligibleLeaderReplicas"), ("last known elr", "lastKnownElr")):
                if p[name]:
                    line += f"  {label} {ints(p[name])}"
            if p["leaderRecoveryState"]:
                line += "  recovering"
            out.append(line)
    out.append(f"configs: {len(view['configs'])}")
    out += [f"  {c['resourceType']} {c['resourceName'] or '(default)'}: "
            + " ".join(f"{k}={v}" for k, v in c["configs"].items()) for c in view["configs"]]
    if view["clientQuotas"]:
        out.append(f"client quotas: {len(view['clientQuotas'])}")
        out += ["  " + ",".join(f"{e['entityType']}={e['entityName'] or '(default)'}" for e in q["entity"]) + ": "
                + " ".join(f"{k}={v}" for k, v in q["quotas"].items()) for q in view["clientQuotas"]]
    if view["acls"]:
        out.append(f"acls: {len(view['acls'])}")
        out += [f"  {a['principal']} from {a['host']}: {_name(ACL_PERMISSIONS, a['permissionType'])} "
                f"{_name(ACL_OPERATIONS, a['operation'])} on {_name(ACL_RESOURCES, a['resourceType'])} "
                f"{a['resourceName']} ({_name(ACL_PATTERNS, a['patternType'])})" for a in view["acls"]]
    if view["scramCredentials"]:
        out.append("scram users: " + " ".join(f"{s['name']}({s['mechanism']})" for s in view["scramCredentials"]))
    if view["delegationTokens"]:
        out.append("delegation tokens: " + " ".join(f"{t['tokenId']}(owner {t['owner']}, expires "
                                                    f"{show_time(t['expirationTimestamp'])})"
                                                    for t in view["delegationTokens"]))
    out.append(f"producer ids: next {view['producerIds']['nextProducerId'] if view['producerIds']['nextProducerId'] is not None else '-'}")
    if view["problems"]:
        out.append(f"records Kafka's replay would refuse: {len(view['problems'])}")
        out += [f"  offset {p['offset']}: {p['problem']}" for p in view["problems"]]
    if view["skipped"]:
        out.append(f"records passed over (Kafka's reader cannot decode them): {len(view['skipped'])}")
        out += [f"  offset {p['offset']}: {p['problem']}" for p in view["skipped"]]
    if view["openTransaction"]:
        out.append(f"open metadata transaction: begun at offset {view['openTransaction']['beganAt']}, "
                   f"{view['openTransaction']['records']} record(s) not applied")
    return out
