"""The cluster's state as Kafka 4.1's metadata image holds it, changed one metadata record at a
time by the rules of Kafka's image deltas: brokers and controllers, topics and partitions,
configs, features, client quotas, ACLs, SCRAM users, delegation tokens and the producer-id
block. A record Kafka's replay would reject (fencing a broker at another epoch, changing a
partition that does not exist) raises ReplayProblem in Kafka's words and changes nothing."""
from __future__ import annotations

import base64
import copy

MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"  # Kafka's directory id of a replica whose directory is not yet known
NO_LEADER_CHANGE = -2
CONFIG_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
FENCING = {-1: False, 0: None, 1: True}  # BrokerRegistrationChangeRecord.fenced
SHUTDOWN = {0: None, 1: True}  # BrokerRegistrationChangeRecord.inControlledShutdown
PARTITION_FIELDS = ("replicas", "directories", "isr", "removingReplicas", "addingReplicas", "leader",
                    "leaderRecoveryState", "leaderEpoch", "partitionEpoch", "eligibleLeaderReplicas",
                    "lastKnownElr")


class ReplayProblem(Exception):
    """A record Kafka's metadata replay would refuse; the image is left as it was."""


def _uuid_order(text: str) -> tuple[int, int]:
    """Kafka's Uuid.compareTo: the two halves as signed longs."""
    raw = base64.urlsafe_b64decode(text + "==")
    return tuple(int.from_bytes(raw[i:i + 8], "big", signed=True) for i in (0, 8))


def _directories(given: list | None, replicas: int) -> list:
    """Kafka's defaultToMigrating: no directories, or only MIGRATING ones, stand for one MIGRATING per replica."""
    if given is None or all(d == MIGRATING for d in given):
        return [MIGRATING] * replicas
    return list(given)


class Image:
    def __init__(self):
        self.features: dict[str, int] = {}
        self.brokers: dict[int, dict] = {}
        self.controllers: dict[int, dict] = {}
        self.topics: dict[str, dict] = {}  # by topic id
        self.topic_ids: dict[str, str] = {}  # by name, as Kafka's TopicsImage keeps them: the last topic changed
        self.configs: dict[tuple[str, str], dict[str, str]] = {}
        self.quotas: dict[tuple, dict[str, float]] = {}
        self.acls: dict[str, dict] = {}
        self.scram: dict[tuple[str, str], dict] = {}
        self.tokens: dict[str, dict] = {}
        self.next_producer_id: int | None = None
        self.quorum: dict = {}

    def copy(self) -> "Image":
        return copy.deepcopy(self)

    def topic_named(self, name: str) -> dict | None:
        """The topic of that name, found by name (a scan of every topic per record made histories quadratic)."""
        topic_id = self.topic_ids.get(name)
        return None if topic_id is None else self.topics.get(topic_id)

    def apply(self, record: dict) -> None:
        """Replay one record's JSON ({"type", "version", "data"}); ReplayProblem leaves the image as it was."""
        handler = getattr(self, "_" + record["type"].lower(), None)
        if handler is not None:  # no-ops, migration state and transaction markers change no state
            handler(record["data"])

    # brokers and controllers
    def _register_broker_record(self, d: dict) -> None:
        self.brokers[d["brokerId"]] = {
            "brokerId": d["brokerId"], "brokerEpoch": d["brokerEpoch"], "incarnationId": d["incarnationId"],
            "endPoints": sorted(d["endPoints"], key=lambda e: e["name"]),
            "features": sorted(d["features"], key=lambda f: f["name"]), "rack": d["rack"],
            "fenced": d["fenced"], "inControlledShutdown": d.get("inControlledShutdown", False),
            "isMigratingZkBroker": d.get("isMigratingZkBroker", False),
            "logDirs": sorted(d.get("logDirs", []), key=_uuid_order)}

    def _unregister_broker_record(self, d: dict) -> None:
        self.brokers.pop(d["brokerId"], None)

    def _broker(self, broker_id: int, epoch: int, action: str) -> dict:
        broker = self.brokers.get(broker_id)
        if broker is None:
            raise ReplayProblem(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
        if broker["brokerEpoch"] != epoch:
            raise ReplayProblem(f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not "
                                f"match the current broker epoch, {broker['brokerEpoch']}")
        return broker

    def _fence_broker_record(self, d: dict) -> None:
        self._broker(d["id"], d["epoch"], "fence")["fenced"] = True

    def _unfence_broker_record(self, d: dict) -> None:
        self._broker(d["id"], d["epoch"], "unfence")["fenced"] = False

    def _broker_registration_change_record(self, d: dict) -> None:
        broker = self._broker(d["brokerId"], d["brokerEpoch"], "change")
        fenced, shutdown = d.get("fenced", 0), d.get("inControlledShutdown", 0)
        if fenced not in FENCING:
            raise ReplayProblem(f"Unable to replay the record: unknown value for fenced field: {fenced}")
        if shutdown not in SHUTDOWN:
            raise ReplayProblem(f"Unable to replay the record: unknown value for inControlledShutdown field: {shutdown}")
        if FENCING[fenced] is not None:
            broker["fenced"] = FENCING[fenced]
        if SHUTDOWN[shutdown] is not None:
            broker["inControlledShutdown"] = True
        if d.get("logDirs"):
            broker["logDirs"] = sorted(d["logDirs"], key=_uuid_order)

    def _register_controller_record(self, d: dict) -> None:
        self.controllers[d["controllerId"]] = {
            "controllerId": d["controllerId"], "incarnationId": d["incarnationId"],
            "zkMigrationReady": d["zkMigrationReady"], "endPoints": sorted(d["endPoints"], key=lambda e: e["name"]),
            "features": sorted(d["features"], key=lambda f: f["name"])}

    # topics and partitions
    def _topic_record(self, d: dict) -> None:
        self.topics[d["topicId"]] = {"name": d["name"], "topicId": d["topicId"], "partitions": {}}
        self.topic_ids[d["name"]] = d["topicId"]

    def _topic(self, topic_id: str, what: str) -> dict:
        topic = self.topics.get(topic_id)
        if topic is None:
            raise ReplayProblem(f"Unable to {what}: no topic with id {topic_id}.")
        return topic

    def _partition_record(self, d: dict) -> None:
        topic = self._topic(d["topicId"], f"add partition {d['partitionId']}")
        given = d.get("directories")
        if given and len(given) != len(d["replicas"]):
            raise ReplayProblem(f"The lengths for replicas and directories do not match in partition "
                                f"{d['topicId']}:{d['partitionId']}.")
        self.topic_ids[topic["name"]] = d["topicId"]
        topic["partitions"][d["partitionId"]] = {
            "replicas": d["replicas"], "directories": _directories(given, len(d["replicas"])), "isr": d["isr"],
            "removingReplicas": d["removingReplicas"], "addingReplicas": d["addingReplicas"], "leader": d["leader"],
            "leaderRecoveryState": d.get("leaderRecoveryState", 0), "leaderEpoch": d["leaderEpoch"],
            "partitionEpoch": d["partitionEpoch"], "eligibleLeaderReplicas": d.get("eligibleLeaderReplicas") or [],
            "lastKnownElr": d.get("lastKnownElr") or []}

    def _partition_change_record(self, d: dict) -> None:
        topic = self.topics.get(d["topicId"])
        current = None if topic is None else topic["partitions"].get(d["partitionId"])
        if current is None:
            raise ReplayProblem(f"Unable to find partition {d['topicId']}:{d['partitionId']}")
        topic["partitions"][d["partitionId"]] = merged(current, d)
        self.topic_ids[topic["name"]] = d["topicId"]

    def _clear_elr_record(self, d: dict) -> None:
        if d["topicName"]:
            topic = self.topic_named(d["topicName"])
            if topic is None:
                raise ReplayProblem(f"Unable to clear elr for topic with name {d['topicName']}: no such topic found.")
            topics = [topic]
        else:
            topics = list(self.topics.values())
        for topic in topics:
            for number, part in topic["partitions"].items():
                if part["eligibleLeaderReplicas"] or part["lastKnownElr"]:
                    topic["partitions"][number] = merged(part, {"eligibleLeaderReplicas": [], "lastKnownElr": []})

    def _remove_topic_record(self, d: dict) -> None:
        topic = self.topics.pop(d["topicId"], None)
        if topic is None:
            raise ReplayProblem(f"Unable to delete topic with id {d['topicId']}: no such topic found.")
        self.topic_ids.pop(topic["name"], None)
        self.configs.pop(("TOPIC", topic["name"]), None)

    # configs, features, quotas, producer ids
    def _config_record(self, d: dict) -> None:
        resource = (CONFIG_TYPES.get(d["resourceType"], str(d["resourceType"])), d["resourceName"])
        values = self.configs.setdefault(resource, {})
        if d["value"] is None:
            values.pop(d["name"], None)
        else:
            values[d["name"]] = d["value"]
        if not values:
            del self.configs[resource]

    def _feature_level_record(self, d: dict) -> None:
        if d["name"] == "kraft.version":  # Kafka skips these: the voters' records carry it
            return
        if d["featureLevel"] == 0 and d["name"] != "metadata.version":
            self.features.pop(d["name"], None)
        else:
            self.features[d["name"]] = d["featureLevel"]

    def _client_quota_record(self, d: dict) -> None:
        entity = tuple(sorted(((e["entityType"], e["entityName"]) for e in d["entity"]),
                              key=lambda e: (e[0], e[1] is not None, e[1] or "")))  # None: the default entity
        values = self.quotas.setdefault(entity, {})
        if d["remove"]:
            values.pop(d["key"], None)
        else:
            values[d["key"]] = d["value"]
        if not values:
            del self.quotas[entity]

    def _producer_ids_record(self, d: dict) -> None:
        self.next_producer_id = d["nextProducerId"]

    # security
    def _access_control_entry_record(self, d: dict) -> None:
        self.acls[d["id"]] = {k: v for k, v in d.items() if k != "id"}

    def _remove_access_control_entry_record(self, d: dict) -> None:
        if self.acls.pop(d["id"], None) is None:
            raise ReplayProblem(f"Failed to find existing ACL with ID {d['id']} in either image or changes")

    def _user_scram_credential_record(self, d: dict) -> None:
        mechanism = SCRAM_MECHANISMS.get(d["mechanism"], str(d["mechanism"]))
        self.scram[(mechanism, d["name"])] = {"iterations": d["iterations"], "salt": d["salt"],
                                              "storedKey": d["storedKey"], "serverKey": d["serverKey"]}

    def _remove_user_scram_credential_record(self, d: dict) -> None:
        self.scram.pop((SCRAM_MECHANISMS.get(d["mechanism"], str(d["mechanism"])), d["name"]), None)

    def _delegation_token_record(self, d: dict) -> None:
        self.tokens[d["tokenId"]] = {k: v for k, v in d.items() if k != "tokenId"}

    def _remove_delegation_token_record(self, d: dict) -> None:
        self.tokens.pop(d["tokenId"], None)


def merged(part: dict, change: dict) -> dict:
    """Kafka's PartitionRegistration.merge: each field the change carries replaces the current one;
    a new leader bumps the leader epoch, and every change bumps the partition epoch."""
    replicas = change["replicas"] if change.get("replicas") is not None else part["replicas"]
    given = change.get("directories")
    if change.get("replicas") is not None and given and len(given) != len(replicas):
        raise ReplayProblem("The lengths for replicas and directories do not match in the change.")
    directories = _directories(given if given is not None else part["directories"], len(replicas))
    if len(directories) != len(replicas):
        raise ReplayProblem("The lengths for replicas and directories do not match.")
    out = dict(part, replicas=replicas, directories=directories, partitionEpoch=part["partitionEpoch"] + 1)
    for name in ("isr", "removingReplicas", "addingReplicas", "eligibleLeaderReplicas", "lastKnownElr"):
        if change.get(name) is not None:
            out[name] = change[name]
    leader = change.get("leader", NO_LEADER_CHANGE)
    if leader != NO_LEADER_CHANGE:
        out["leader"], out["leaderEpoch"] = leader, part["leaderEpoch"] + 1
    if change.get("leaderRecoveryState", -1) != -1:
        out["leaderRecoveryState"] = change["leaderRecoveryState"]
    return out
