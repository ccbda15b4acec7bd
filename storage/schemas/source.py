"""A schema source: the registry state the decoders ask, and what building it passed over (each
record or file it could not use, with the file and byte), for commands to say."""
from __future__ import annotations

from dataclasses import dataclass, field

from kafkacodec.codec.values.registry import Registry

DEFAULT_TOPIC = "_schemas"


@dataclass
class SchemaSource:
    registry: Registry
    where: str  # what it was read from, for messages
    passed_over: list[str] = field(default_factory=list)  # files that hold no schema, said
    damaged: list[str] = field(default_factory=list)  # damage, and records the registry does not write: the
    # state may lack what they held, so what is decoded by it is not known to be right
