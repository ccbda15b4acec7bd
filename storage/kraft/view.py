"""A replayed metadata image as JSON (secrets redacted unless asked), the differences between two
such views, and the view of one partition, topic, broker or controller for histories."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from ..layout import names
from .image import Image
from .replay import MetadataLog, Replay, earliest_snapshot, log_events, snapshot_events

REDACTED = "[redacted]"
# config names whose values are secrets (Kafka types them PASSWORD; the log holds them in clear)
SECRET_CONFIG = re.compile(r"password|secret|jaas\.config|\.key$|credentials", re.IGNORECASE)


def config_shown(name: str, value: str | None, show_secrets: bool) -> str | None:
    """A config's value, or REDACTED for one whose name says it is a secret."""
    return value if show_secrets or not SECRET_CONFIG.search(name) else REDACTED


def image_json(image: Image, show_secrets: bool = False) -> dict:
    def scram(cred: dict) -> dict:
        return cred if show_secrets else {"iterations": cred["iterations"]}

    return {
        "features": dict(sorted(image.features.items())),
        "controllers": [image.controllers[i] for i in sorted(image.controllers)],
        "brokers": [image.brokers[i] for i in sorted(image.brokers)],
        "topics": [topic_json(t) for t in sorted(image.topics.values(), key=lambda t: t["name"])],
        "configs": [{"resourceType": kind, "resourceName": name,
                     "configs": {k: config_shown(k, v, show_secrets) for k, v in sorted(values.items())}}
                    for (kind, name), values in sorted(image.configs.items())],
        "clientQuotas": [{"entity": [{"entityType": t, "entityName": n} for t, n in entity],
                          "quotas": dict(sorted(values.items()))}
                         for entity, values in sorted(image.quotas.items(), key=lambda e: repr(e[0]))],
        "acls": [{"id": acl_id, **acl} for acl_id, acl in sorted(image.acls.items())],
        "scramCredentials": [{"mechanism": m, "name": n, **scram(c)} for (m, n), c in sorted(image.scram.items())],
        "delegationTokens": [{"tokenId": t, **d} for t, d in sorted(image.tokens.items())],
        "producerIds": {"nextProducerId": image.next_producer_id},
        "quorum": image.quorum,
    }


def topic_json(topic: dict) -> dict:
    return {"name": topic["name"], "topicId": topic["topicId"],
            "partitions": [{"partition": n, **p} for n, p in sorted(topic["partitions"].items())]}


def replay_json(state: Replay, show_secrets: bool = False) -> dict:
    """The image with where it stands: the last offset applied, its time and epoch, the snapshot
    it started from, the snapshots passed over, the records Kafka's replay would have refused,
    those skipped as Kafka's reader cannot decode them, and an open metadata transaction."""
    return {"offset": state.offset, "time": state.time, "epoch": state.epoch,
            "snapshot": None if state.snapshot is None else state.snapshot.path.name,
            "logRecords": state.records, "notes": list(state.notes),
            "problems": [{"offset": o, "problem": p} for o, p in state.problems],
            "skipped": [{"offset": o, "problem": p} for o, p in state.skipped],
            "openTransaction": None if state.pending is None else {"beganAt": state.began_at,
                                                                   "records": len(state.pending)},
            **image_json(state.image, show_secrets)}


def differences(before, after, path: str = "") -> list[tuple[str, object, object]]:
    """(path, before, after) for each value that differs; lists of named things (topics,
    partitions, brokers…) are compared by name, so one change does not shift the rest."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in list(before) + [k for k in after if k not in before]:
            out += differences(before.get(key), after.get(key), f"{path}.{key}" if path else str(key))
        return out
    if _keyed(before) and _keyed(after):
        return differences(_by_key(before), _by_key(after), path)
    return [] if before == after else [(path, before, after)]


KEYS = ("name", "partition", "brokerId", "controllerId", "id", "tokenId")


def _key_of(item: dict):
    if "resourceType" in item:
        return f"{item['resourceType']}:{item['resourceName']}"
    if "mechanism" in item:
        return f"{item['mechanism']}:{item['name']}"
    if "entity" in item:
        return ",".join(f"{e['entityType']}={e['entityName']}" for e in item["entity"])
    return next(item[k] for k in KEYS if k in item)


def _keyed(value) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, dict) and ("entity" in v or "resourceType" in v or any(k in v for k in KEYS)) for v in value)


def _by_key(items: list) -> dict:
    return {str(_key_of(item)): item for item in items}


def subject(text: str):
    """What a history follows: `TOPIC-N` (a partition), `topic:NAME`, `broker:ID`, `controller:ID`;
    gives a function of an image to that thing's view (None while it does not exist)."""
    kind, _, rest = text.partition(":")
    if kind in ("broker", "controller") and rest.lstrip("-").isdigit():
        number = int(rest)
        return (lambda image: image.brokers.get(number)) if kind == "broker" else \
            (lambda image: image.controllers.get(number))
    if kind == "topic" and rest:
        def topic_view(image: Image):
            topic = image.topic_named(rest)
            if topic is None:
                return None
            return {**topic_json(topic), "configs": dict(image.configs.get(("TOPIC", rest), {}))}
        return topic_view
    parsed = names.parse_partition_dir(text)  # a partition is named as its directory is
    if parsed is None or parsed.kind != "live":
        raise ValueError(f"{text!r}: name a partition as TOPIC-N, or topic:NAME, broker:ID or controller:ID")
    name, number = parsed.topic, parsed.partition

    def partition_view(image: Image):
        topic = image.topic_named(name)
        part = None if topic is None else topic["partitions"].get(number)
        return None if part is None else {"topicId": topic["topicId"], **part}
    return partition_view


@dataclass
class Change:
    offset: int
    time: int | None
    causes: list[str]  # the types of the records that made it (several for a metadata transaction)
    before: object
    after: object


def history(log: MetadataLog, view: Callable[[Image], object], skip_undecodable: bool = False,
            state: Replay | None = None) -> Iterator[Change]:
    """Each change of `view` over the whole log, from its oldest state: offset 0 when the log
    still starts there, else its oldest snapshot (the first change then says what the snapshot
    held). Damage, a gap or a record Kafka's reader cannot decode (unless `skip_undecodable`) ends
    it with MetadataLogProblem. `state`, an empty Replay, is the one to run (its skipped records,
    refused ones and open transaction can be read from it after)."""
    snap = earliest_snapshot(log)
    state = Replay() if state is None else state
    state.snapshot = snap
    current = None
    if snap is not None:
        for event in snapshot_events(snap, skip_undecodable):
            state.step(event, from_log=False)
        current = copy.deepcopy(view(state.image))
        if current is not None:
            yield Change(state.offset, state.time, [f"snapshot {snap.path.name}"], None, current)
    for event in log_events(log, 0 if snap is None else snap.end_offset, skip_undecodable):
        applied = state.step(event)
        if not applied:
            continue
        now = view(state.image)
        if now != current:
            yield Change(event.offset, event.time, [e.record["type"] for e in applied], current, copy.deepcopy(now))
            current = copy.deepcopy(now)
