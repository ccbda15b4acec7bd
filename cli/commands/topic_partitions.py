"""kafka-get-offsets' --topic-partitions: a comma-separated list of rules `TOPIC-REGEX:PARTITIONS`,
a partition selected when any rule selects it. TOPIC-REGEX (whole name; empty for any topic) may
be left out; PARTITIONS is N, N-M (M excluded), N- (N and above), -M (below M), or left out (all),
as Kafka 4's tool reads them."""
from __future__ import annotations

import re
from dataclasses import dataclass

import click

RULE = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
ALL = 2 ** 31 - 1  # Kafka's Integer.MAX_VALUE: the upper bound when none is given


@dataclass(frozen=True)
class Rule:
    topic: re.Pattern
    low: int  # included
    high: int  # excluded

    def selects(self, topic: str, partition: int) -> bool:
        return self.low <= partition < self.high and self.topic.fullmatch(topic) is not None


def parse_topic_partitions(text: str) -> list[Rule]:
    rules = []
    for spec in text.split(","):
        m = RULE.fullmatch(spec)
        if m is None:
            raise click.BadParameter(f"invalid rule specification: {spec!r}", param_hint="--topic-partitions")
        # Kafka's topic list filter: spaces dropped, quotes around the expression stripped
        expression = re.sub(r"""^["']+|["']+$""", "", (m[1] or "").strip().replace(" ", "")) or ".*"
        try:
            topic = re.compile(expression)
        except re.error as err:
            raise click.BadParameter(f"{expression!r} is not a regular expression: {err}",
                                     param_hint="--topic-partitions") from None
        if m[2]:
            rules.append(Rule(topic, int(m[2]), int(m[2]) + 1))
        else:
            rules.append(Rule(topic, int(m[3]) if m[3] else 0, int(m[4]) if m[4] else ALL))
    return rules


def selects(rules: list[Rule], topic: str, partition: int) -> bool:
    return any(rule.selects(topic, partition) for rule in rules)
