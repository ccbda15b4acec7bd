"""lag: consumer groups' committed offsets and lag, as `kafka-consumer-groups --describe` prints
them, from a log dir's `__consumer_offsets` and the ends of its partitions."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from .terminal import say, shown

MISSING = "-"  # what Kafka's tool prints for a value it does not have


@dataclass(frozen=True)
class Row:
    group: str
    topic: str
    partition: int
    offset: int | None
    log_end: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    @property
    def lag(self) -> int | None:
        return None if self.offset is None or self.offset == -1 or self.log_end is None else self.log_end - self.offset

    def cells(self) -> list[str]:
        """As printed: names escaped (terminal.shown), so that the columns are as wide as they show."""
        values = [self.offset, self.log_end, self.lag, self.consumer_id, self.host, self.client_id]
        return [shown(self.group), shown(self.topic), str(self.partition)] + \
            [MISSING if v is None else shown(str(v)) for v in values]

    def to_json(self, state: str) -> dict:
        return {"group": self.group, "state": state, "topic": self.topic, "partition": self.partition,
                "currentOffset": self.offset, "logEndOffset": self.log_end, "lag": self.lag,
                "consumerId": self.consumer_id, "host": self.host, "clientId": self.client_id}


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--group", "names", multiple=True, metavar="GROUP",
              help="Only this group (repeatable); every group by default, as --all-groups.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per row, with the group's state.")
def lag(path: Path, names: tuple[str, ...], as_json: bool) -> None:
    """Consumer groups as `kafka-consumer-groups --describe` shows them: per group, each partition
    assigned to a member or with a committed offset, its committed offset (CURRENT-OFFSET), the
    log end offset of the partition's files in PATH (a log dir with `__consumer_offsets`) and the
    lag between them; members and their assignments as the group's latest records list them.

    Offsets committed in a transaction count once it commits. A partition not in PATH shows `-`
    for its log end and lag, as Kafka's tool does for one it cannot reach. Exit status: 0; 1 when
    a named group is not there or `__consumer_offsets` is damaged (what was read is still shown)."""
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.state.groups import load_groups, topic_ids_of
    from kafkacodec.codec.internal_topics import CONSUMER_OFFSETS_TOPIC

    root = logdir.at_path(path)
    coordinator = [p for p in root.partitions if p.topic == CONSUMER_OFFSETS_TOPIC]
    if not coordinator:
        say(f"error: {path} holds no {CONSUMER_OFFSETS_TOPIC} partition: the groups are not known", err=True)
        sys.exit(1)
    loaded = load_groups(coordinator, topic_ids_of(root.partitions))
    groups = {name: g for name, g in loaded.groups.items() if g.exists}
    missing = [name for name in names if name not in groups]
    ends = _LogEnds(root.partitions)
    for name in sorted(names or groups):
        if name in missing:
            click.echo("\n" + shown(f"Error: Consumer group '{name}' does not exist."), err=True)
            continue
        group = groups[name]
        state = "Stable" if group.members else "Empty"
        rows = _rows(group, ends)
        if as_json:
            for row in rows:
                click.echo(json.dumps(row.to_json(state)))
            continue
        if state == "Empty":
            click.echo("\n" + shown(f"Consumer group '{name}' has no active members."), err=True)
        if rows:
            click.echo(_table(rows))
    for group, line in loaded.notes:
        if group is None or group in groups and (not names or group in names):
            say(f"note: {line}", err=True)
    for line in loaded.damage:
        say(f"warning: {line}", err=True)
    sys.exit(1 if missing or loaded.damage else 0)


class _LogEnds:
    """The log end offset of each partition of the log dir, read when first asked for."""

    def __init__(self, partitions):
        self.partitions = {(p.topic, p.partition): p for p in partitions}
        self.found: dict[tuple[str, int], int | None] = {}

    def __call__(self, topic: str, partition: int) -> int | None:
        from kafkacodec.storage.segments.reader import log_end_offset

        key = (topic, partition)
        if key not in self.found:
            part = self.partitions.get(key)
            self.found[key] = log_end_offset(part) if part is not None else None
        return self.found[key]


def _rows(group, ends) -> list[Row]:
    """Members with partitions first, most partitions first, each one's partitions in order; then
    the partitions with a committed offset that no member has, as Kafka's tool lists them."""
    rows, assigned = [], set()
    members = sorted((m for m in group.members if m.assignment), key=lambda m: -len(m.assignment))
    for m in members:
        for topic, partition in sorted(set(m.assignment)):
            assigned.add((topic, partition))
            commit = group.offsets.get((topic, partition))
            rows.append(Row(group.name, topic, partition, commit.offset if commit else None, ends(topic, partition),
                            m.member_id, m.host, m.client_id))
    for (topic, partition), commit in sorted(group.offsets.items()):
        if (topic, partition) not in assigned:
            rows.append(Row(group.name, topic, partition, commit.offset, ends(topic, partition), MISSING, MISSING,
                            MISSING))
    return rows


def _table(rows: list[Row]) -> str:
    """Kafka's layout: the group, topic, consumer and host columns as wide as their widest value
    (at least 15), the others at fixed widths, each line after a newline."""
    widths = [max([15] + [len(r.cells()[i]) for r in rows]) for i in (0, 1, 6, 7)]
    fixed = dict(zip((0, 1, 6, 7), widths)) | {2: 10, 3: 15, 4: 15, 5: 15}

    def line(cells: list[str]) -> str:
        return " ".join(f"{c:<{fixed[i]}}" for i, c in enumerate(cells[:8])) + " " + cells[8]

    header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
              "CLIENT-ID"]
    return "\n" + "\n".join(line(cells) for cells in [header] + [r.cells() for r in rows])
