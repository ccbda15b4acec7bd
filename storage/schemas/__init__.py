"""Where the schemas of a log dir's records come from: the schema registry's own storage topic
(`_schemas`) in the log dir, a directory of schema files, or a registry's REST address."""
from __future__ import annotations

from .opening import open_schema_source
from .source import SchemaSource

__all__ = ["SchemaSource", "open_schema_source"]
