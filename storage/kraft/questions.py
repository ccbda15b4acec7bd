"""Everyday questions to a replayed state (a metadata_view.replay_json view): the topics named,
the under-replicated and offline partitions as Kafka's kafka-topics counts them
(--under-replicated-partitions, --unavailable-partitions), the fenced brokers; and how a list of
brokers changed between two views (an ISR reordered, or brokers that joined or left it)."""
from __future__ import annotations

from dataclasses import dataclass

# what a view holds beside the image: where the state stands and what the replay met
HEADER = ("offset", "time", "epoch", "snapshot", "logRecords", "notes", "problems", "skipped", "openTransaction")


def under_replicated(part: dict) -> bool:
    """Fewer in sync than replicas, a reassignment's adding replicas not counted (kafka-topics)."""
    return len(part["replicas"]) - len(part["addingReplicas"]) > len(part["isr"])


def offline(part: dict, live: set[int]) -> bool:
    """No leader, or one that is not a live broker: registered and not fenced (kafka-topics)."""
    return part["leader"] not in live


@dataclass(frozen=True)
class Selection:
    topics: tuple[str, ...] = ()
    under_replicated: bool = False
    offline: bool = False
    fenced: bool = False

    def __bool__(self) -> bool:
        return bool(self.topics or self.under_replicated or self.offline or self.fenced)

    def partition_kinds(self) -> str:
        """What the partition filters ask for, in words."""
        return " or ".join(k for k, on in (("under-replicated", self.under_replicated), ("offline", self.offline))
                           if on)

    def missing(self, view: dict) -> list[str]:
        """The topics named that the state does not hold."""
        held = {t["name"] for t in view["topics"]}
        return [name for name in self.topics if name not in held]

    def of(self, view: dict) -> dict:
        """The view with only what is asked: its header, then the topics (their partitions that
        pass the partition filters, those left without any gone) and their configs, or the fenced
        brokers. Filters of partitions add up, as kafka-topics' report options do."""
        out = {k: view[k] for k in HEADER if k in view}
        if self.topics or self.under_replicated or self.offline:
            live = {b["brokerId"] for b in view["brokers"] if not b["fenced"]}
            wanted = set(self.topics)
            topics = []
            for topic in view["topics"]:
                if wanted and topic["name"] not in wanted:
                    continue
                parts = [p for p in topic["partitions"] if self._passes(p, live)]
                if parts or not (self.under_replicated or self.offline):
                    topics.append({**topic, "partitions": parts})
            out["topics"] = topics
        if self.topics:
            out["configs"] = [c for c in view["configs"]
                              if c["resourceType"] == "TOPIC" and c["resourceName"] in wanted]
        if self.fenced:
            out["brokers"] = [b for b in view["brokers"] if b["fenced"]]
        return out

    def _passes(self, part: dict, live: set[int]) -> bool:
        if not (self.under_replicated or self.offline):
            return True
        return (self.under_replicated and under_replicated(part)) or (self.offline and offline(part, live))


MEMBERS = ("isr", "replicas", "eligibleLeaderReplicas", "lastKnownElr", "voters")  # lists whose members are brokers


def membership(path: str, before, after) -> dict:
    """For a list of the brokers that are members of something (an ISR, the replicas, the
    voters), at `path` of a view: whether only their order changed, or which joined and which
    left; {} for anything else."""
    if path.rsplit(".", 1)[-1] not in MEMBERS or not (isinstance(before, list) and isinstance(after, list)) or \
            before == after or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in before + after):
        return {}
    joined = [v for v in after if v not in before]
    left = [v for v in before if v not in after]
    if not joined and not left:
        return {"reordered": True} if sorted(before) == sorted(after) else {}
    return {k: v for k, v in (("joined", joined), ("left", left)) if v}


def membership_text(change: dict) -> str:
    """` (reordered: the same members)`, ` (joined 4; left 2)`, or nothing."""
    if change.get("reordered"):
        return " (reordered: the same members)"
    said = "; ".join(f"{k} {','.join(map(str, change[k]))}" for k in ("joined", "left") if k in change)
    return f" ({said})" if said else ""
