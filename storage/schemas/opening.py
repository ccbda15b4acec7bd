"""Which schema source a command's options name."""
from __future__ import annotations

from pathlib import Path

from kafkacodec.storage.layout import logdir

from . import files, remote, topic_records
from .source import DEFAULT_TOPIC, SchemaSource


def open_schema_source(spec: str | None, log_dir: Path | None, topic: str = DEFAULT_TOPIC) -> SchemaSource | None:
    """`spec`: a registry's http(s) address, a `_schemas` partition directory, or a directory of
    schema files; None: the log dir's own `_schemas` partition, or None when it has none."""
    if spec is not None and spec.startswith(("http://", "https://")):
        return remote.source(spec)
    if spec is not None:
        path = Path(spec)
        if logdir.is_partition_dir(path):
            return topic_records.source(logdir.open_partition(path))
        return files.source(path)
    if log_dir is None:
        return None
    root = logdir.at_path(log_dir) if log_dir.is_dir() else None
    found = [p for p in (root.partitions if root else []) if p.topic == topic]
    return topic_records.source(found[0]) if found else None
