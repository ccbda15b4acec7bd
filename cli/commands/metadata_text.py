"""`metadata`'s text: a replayed state (a metadata_view view, whole or as a selection leaves it)
as an operator reads it, one thing per line, and a change between two views as one line. Lines
hold names from the log as they are; the command escapes them as it prints them."""
from __future__ import annotations

import json

from .questions import show_time

PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
ACL_RESOURCES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
ACL_PATTERNS = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
ACL_OPERATIONS = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
                  "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
                  "TWO_PHASE_COMMIT")
ACL_PERMISSIONS = ("UNKNOWN", "ANY", "DENY", "ALLOW")
PARTITION_EXTRAS = (("adding", "addingReplicas"), ("removing", "removingReplicas"), ("elr", "eligibleLeaderReplicas"),
                    ("last known elr", "lastKnownElr"))


def ints(items: list) -> str:
    return ",".join(map(str, items)) or "-"


def short(value) -> str:
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


def _header(view: dict) -> list[str]:
    where = f"snapshot {view['snapshot']} then " if view["snapshot"] else ""
    return [f"__cluster_metadata at offset {view['offset']}, epoch {view['epoch']}, {show_time(view['time'])} "
            f"({where}{view['logRecords']} log records)"]


def _features(view: dict) -> list[str]:
    out = ["features: " + (" ".join(f"{k}={v}" for k, v in view["features"].items()) or "-")]
    quorum = view["quorum"]
    if quorum:
        out.append(f"quorum: leader {quorum.get('leaderId', '-')} (epoch {quorum.get('leaderEpoch', '-')}), "
                   f"voters {ints(quorum.get('voters', []))}")
    held = view.get("quorumStateFile")
    if held:
        out.append(f"quorum-state file (now): leader {held.get('leaderId', -1)}, epoch {held.get('leaderEpoch', -1)}, "
                   f"voted for {held.get('votedId', -1)}")
    return out


def _controllers(view: dict) -> list[str]:
    return [f"controllers: {len(view['controllers'])}"] + \
        [f"  {c['controllerId']}  {_endpoints(c['endPoints'])}" for c in view["controllers"]]


def _brokers(view: dict, which: str) -> list[str]:
    out = [f"brokers: {len(view['brokers'])}{which}"]
    for b in view["brokers"]:
        state = "FENCED" if b["fenced"] else "controlled shutdown" if b["inControlledShutdown"] else "active"
        out.append(f"  {b['brokerId']}  epoch {b['brokerEpoch']}  {state}  rack {b['rack'] or '-'}  "
                   f"{_endpoints(b['endPoints'])}  log dirs {len(b['logDirs'])}")
    return out


def _topics(view: dict, which: str) -> list[str]:
    out = [f"topics: {len(view['topics'])}{which}"]
    for t in view["topics"]:
        out.append(f"  {t['name']}  id {t['topicId']}  {len(t['partitions'])} partition(s)")
        for p in t["partitions"]:
            line = (f"    {p['partition']}  leader {p['leader']} (epoch {p['leaderEpoch']})  replicas "
                    f"{ints(p['replicas'])}  isr {ints(p['isr'])}  partition epoch {p['partitionEpoch']}")
            line += "".join(f"  {label} {ints(p[name])}" for label, name in PARTITION_EXTRAS if p[name])
            out.append(line + ("  recovering" if p["leaderRecoveryState"] else ""))
    return out


def _configs(view: dict) -> list[str]:
    return [f"configs: {len(view['configs'])}"] + \
        [f"  {c['resourceType']} {c['resourceName'] or '(default)'}: "
         + " ".join(f"{k}={v}" for k, v in c["configs"].items()) for c in view["configs"]]


def _security(view: dict) -> list[str]:
    out = []
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
    following = view["producerIds"]["nextProducerId"]
    return out + [f"producer ids: next {'-' if following is None else following}"]


def _replay(view: dict) -> list[str]:
    out = []
    for key, title in (("problems", "records Kafka's replay would refuse"),
                       ("skipped", "records passed over (Kafka's reader cannot decode them)")):
        if view[key]:
            out.append(f"{title}: {len(view[key])}")
            out += [f"  offset {p['offset']}: {p['problem']}" for p in view[key]]
    if view["openTransaction"]:
        out.append(f"open metadata transaction: begun at offset {view['openTransaction']['beganAt']}, "
                   f"{view['openTransaction']['records']} record(s) not applied")
    return out


def state_lines(view: dict, partitions: str = "", fenced: bool = False) -> list[str]:
    """The state, or the sections a selection left of it (`partitions`: the kinds of partition it
    keeps, in words; `fenced`: it keeps the fenced brokers)."""
    out = _header(view)
    if "features" in view:
        out += _features(view) + _controllers(view)
    if "brokers" in view:
        out += _brokers(view, " fenced" if fenced else "")
    if "topics" in view:
        out += _topics(view, f" with partitions {partitions}" if partitions else "")
    if "configs" in view:
        out += _configs(view)
    if "acls" in view:
        out += _security(view)
    return out + _replay(view)


def change_line(path: str, before, after, how: dict, separator: str = ": ") -> str:
    """One difference: its path, the values before and after, and how a list of brokers changed."""
    from kafkacodec.storage.kraft.questions import membership_text

    return f"{path}{separator}{short(before)} -> {short(after)}{membership_text(how)}"
