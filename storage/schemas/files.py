"""Schemas from a directory of files:
- `*.json` holding what a registry's REST API answers for a version (`GET
  /subjects/{s}/versions/{v}`: subject, version, id, schemaType, schema, references) or a list of
  them (`GET /schemas`), as backups and exports keep them;
- a schema's own text in a file named by its id: `<id>.avsc` (Avro), `<id>.proto` (Protobuf),
  `<id>.json` (JSON Schema, an object without a `schema` text member).
Anything else is passed over and said."""
from __future__ import annotations

import json
import re
from pathlib import Path

from kafkacodec.codec.values.registry import (AVRO, JSON_SCHEMA, PROTOBUF, SCHEMA_TYPES, Reference, RegisteredSchema,
                                              Registry)
from kafkacodec.storage.diskio.safeio import read_whole

from .source import SchemaSource

TYPE_OF_SUFFIX = {".avsc": AVRO, ".proto": PROTOBUF, ".json": JSON_SCHEMA}
MAX_FILE = 64 << 20


def answered_version(obj: dict, where: str) -> RegisteredSchema:
    """One version as the REST API gives it."""
    schema_type = obj.get("schemaType") or AVRO
    if not isinstance(obj.get("schema"), str) or not isinstance(obj.get("id"), int) or schema_type not in SCHEMA_TYPES \
            or not isinstance(obj.get("version", 1), int) or not isinstance(obj.get("references") or [], list):
        raise ValueError(f"{where}: not a registry's answer for a schema version (schema text, id, version, "
                         "schemaType, references)")
    refs = tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"])) for r in obj.get("references") or ())
    # metadata and rule set as answered: a GUID covers them
    extra = {name: obj[key] for name, key in (("metadata", "metadata"), ("rule_set", "ruleSet"))
             if isinstance(obj.get(key), dict)}
    return RegisteredSchema(str(obj.get("subject", f"id-{obj['id']}")), int(obj.get("version", 1)), obj["id"],
                            schema_type, obj["schema"], refs, bool(obj.get("deleted", False)), **extra)


def _of_file(path: Path) -> list[RegisteredSchema]:
    if path.stat().st_size > MAX_FILE:
        raise ValueError(f"{path}: larger than {MAX_FILE >> 20} MiB, not a schema")
    text = read_whole(path).decode("utf-8")
    if path.suffix == ".json":
        obj = json.loads(text)
        if isinstance(obj, list):
            return [answered_version(item, f"{path} item {i}") for i, item in enumerate(obj) if isinstance(item, dict)]
        if isinstance(obj, dict) and isinstance(obj.get("schema"), str):
            return [answered_version(obj, str(path))]
    m = re.fullmatch(r"([0-9]{1,10})", path.stem)
    if m is None or int(m[1]) >= 2 ** 31:
        raise ValueError(f"{path}: a bare schema's file is named by its id (e.g. 7{path.suffix})")
    return [RegisteredSchema(f"id-{m[1]}", 1, int(m[1]), TYPE_OF_SUFFIX[path.suffix], text)]


def source(root: Path) -> SchemaSource:
    registry, passed_over = Registry(), []
    if not root.is_dir():
        raise FileNotFoundError(2, "no directory of schema files nor a `_schemas` partition there", str(root))
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in TYPE_OF_SUFFIX:
            continue
        try:
            for schema in _of_file(path):
                if registry.version(schema.subject, schema.version) is not None:
                    raise ValueError(f"{path}: {schema.subject} version {schema.version} is given twice")
                registry.add(schema)
        except (ValueError, KeyError, TypeError, OverflowError, AttributeError, UnicodeDecodeError) as why:
            passed_over.append(f"{path} is passed over: {why}")
        except RecursionError:
            passed_over.append(f"{path} is passed over: its JSON nests deeper than Python reads")
    return SchemaSource(registry, str(root), passed_over)
