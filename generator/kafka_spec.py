"""Drafts a .ksy schema from Kafka's JSON message specs, for development only: code generation
never runs it. Each version of each message becomes a type of its own (fields present in that
version, in Kafka's order, in Kafka's encoding of that version); tagged fields Kafka knows are
decoded through a switch on the tag, unknown ones stay raw. Docs are taken from the schema being
replaced, by type and field id, so a schema reviewed and documented by hand survives a redraft;
new fields come out undocumented for a person to describe.

Two framings: records framed as KRaft frames them (frame version, api key and version as
unsigned varints; `__cluster_metadata`, `__remote_log_metadata`), or with --coordinator the
key/value pairs of a coordinator's topic (an int16 record type before the key, an int16 version
before the value; `__consumer_offsets`, `__share_group_state`): then the root reads a key and
each value is a type of its own, or with --types-only there is no root and another schema uses
the types.

    python -m generator.kafka_spec OUT.ksy --id ID --title T --doc-ref URL [--coordinator [--types-only]] SPEC.json...
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

PRIMITIVE = {"int8": "s1", "int16": "s2", "int32": "s4", "int64": "s8", "uint16": "u2", "float64": "f8",
             "bool": "u1"}
TAG_WRAPPER = {"int8": "tagged_int8", "int32": "tagged_int32", "bool": "tagged_bool",
               "[]int32": "compact_int32_array", "[]uuid": "compact_uuid_array",
               "string": "compact_nullable_string"}


# the body's case: api key and version in one number (a version of 1000 or more matches none)
SWITCH_KEY = "version.value < 1000 ? api_key.value * 1000 + version.value : -1"


def read_spec(path: Path) -> dict:
    """Kafka's specs are JSON with // comments."""
    return json.loads(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M))


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def versions_of(spec: str | None, latest: int) -> range:
    """Kafka's version ranges: "N", "N+", "N-M", "none"."""
    if spec in (None, "none", ""):
        return range(0)
    if spec.endswith("+"):
        return range(int(spec[:-1]), latest + 1)
    low, _, high = spec.partition("-")
    return range(int(low), int(high or low) + 1)


@dataclass
class Message:
    name: str  # the spec's, e.g. PartitionRecord
    spec: dict
    latest: int

    @property
    def valid(self) -> range:
        return versions_of(self.spec["validVersions"], self.latest)

    def flexible(self, v: int) -> bool:
        return v in versions_of(self.spec.get("flexibleVersions"), self.latest)


class Drafter:
    def __init__(self, old_docs: dict):
        self.types: dict[str, dict] = {}
        self.signatures: dict[str, str] = {}  # a type's fields as text -> its name, to share equal ones
        self.old_docs = old_docs
        self.structs: dict[str, dict] = {}  # common structs by name
        self.owner = ""  # the message being drafted
        self.made_by: dict[str, str] = {}  # type name -> the message that drafted it

    def doc(self, type_name: str, field_id: str | None = None) -> str | None:
        return self.old_docs.get((type_name, field_id))

    def message(self, m: Message) -> dict[int, str]:
        """The type of each version, by version."""
        self.structs = {s["name"]: s for s in m.spec.get("commonStructs", [])}
        self.owner = snake(m.name)
        return {v: self.struct(snake(m.name), m.spec["fields"], v, m.flexible(v), m.latest, f"_v{v}")
                for v in m.valid}

    def key(self, m: Message) -> str:
        """A coordinator key: one version, not flexible, named as the message is."""
        self.structs = {s["name"]: s for s in m.spec.get("commonStructs", [])}
        self.owner = snake(m.name)
        (v,) = m.valid
        return self.struct(snake(m.name), m.spec["fields"], v, m.flexible(v), m.latest)

    def value(self, m: Message) -> str:
        """A coordinator value: its int16 version, then the fields of that version."""
        cases = self.message(m)
        name = snake(m.name)
        self.types[name] = {"seq": [
            {"id": "version", "type": "s2"},
            {"id": "body", "size-eos": True, "type": {"switch-on": "version", "cases": cases}}]}
        self.made_by[name] = self.owner
        return name

    def struct(self, base: str, fields: list, v: int, flexible: bool, latest: int, suffix: str = "") -> str:
        seq, tags = [], []
        for f in fields:
            if v not in versions_of(f.get("versions"), latest):
                continue
            if v in versions_of(f.get("taggedVersions"), latest):
                tags.append(f)
                continue
            seq += self.field(f, v, flexible, latest)
        if flexible:
            seq.append({"id": "tagged_fields", "type": self.tags(base, tags, v, latest) if tags else
                        "kafka_types::tagged_fields"})
        return self.add(base, suffix, {"seq": seq}, v)

    def add(self, base: str, suffix: str, body: dict, v: int) -> str:
        sig = base + json.dumps(body, sort_keys=True)
        if sig in self.signatures:
            return self.signatures[sig]
        if base in self.types and self.made_by[base] != self.owner:  # another message's struct of that name
            base = f"{self.owner.removesuffix('_value')}_{base}"
        name = base if base not in self.types and not suffix else base + (suffix or f"_v{v}")
        while name in self.types:
            name += "_"
        self.types[name] = body
        self.made_by[name] = self.owner
        self.signatures[sig] = name
        return name

    def field(self, f: dict, v: int, flexible: bool, latest: int) -> list[dict]:
        fid, kind = snake(f["name"]), f["type"]
        nullable = v in versions_of(f.get("nullableVersions"), latest)
        if kind.startswith("[]"):
            item = kind[2:]
            count = {"id": f"{fid}_count_plus_one", "type": "uvarint",
                     "-derive": {"count-of": fid, "plus": 1, **({"if-absent": 0} if nullable else {})}} \
                if flexible else {"id": f"{fid}_count", "type": "s4",
                                  "-derive": {"count-of": fid, **({"if-absent": -1} if nullable else {})}}
            n = f"{fid}_count_plus_one.value - 1" if flexible else f"{fid}_count"
            items = {"id": fid, "repeat": "expr", "repeat-expr": n, **self.item(f, item, v, flexible, latest)}
            if nullable:
                items["if"] = f"{fid}_count_plus_one.value > 0" if flexible else f"{fid}_count >= 0"
            return [count, items]
        if nullable and kind not in ("string", "bytes"):  # a struct: an int8 before it, -1 for null
            return [{"id": f"{fid}_present", "type": "s1"},
                    {"id": fid, "if": f"{fid}_present >= 0", **self.item(f, kind, v, flexible, latest)}]
        return [{"id": fid, **self.item(f, kind, v, flexible, latest, nullable)}]

    def item(self, f: dict, kind: str, v: int, flexible: bool, latest: int, nullable: bool = False) -> dict:
        if kind in PRIMITIVE:
            return {"type": PRIMITIVE[kind]}
        if kind == "uuid":
            return {"size": 16}
        if kind in ("string", "bytes"):
            prefix = "compact_" if flexible else ""
            return {"type": f"kafka_types::{prefix}{'nullable_' if nullable else ''}{kind}"}
        struct = self.structs.get(kind) or {"fields": f["fields"]}
        return {"type": self.struct(snake(kind), struct["fields"], v, flexible, latest)}

    def tags(self, base: str, tags: list, v: int, latest: int) -> str:
        cases = {}
        for f in tags:
            if f["type"] not in TAG_WRAPPER:
                raise SystemExit(f"{base}: tagged field {f['name']} of type {f['type']} needs a wrapper type")
            cases[int(f["tag"])] = "kafka_types::" + TAG_WRAPPER[f["type"]]
        field = self.add(f"{base}_tag", "", {"seq": [
            {"id": "tag", "type": "uvarint"},
            {"id": "data_length", "type": "uvarint", "-derive": {"length-of": "data"}},
            {"id": "data", "size": "data_length.value",
             "type": {"switch-on": "tag.value", "cases": dict(sorted(cases.items()))}}]}, v)
        return self.add(f"{base}_tags", "", {"seq": [
            {"id": "count", "type": "uvarint", "-derive": {"count-of": "fields"}},
            {"id": "fields", "type": field, "repeat": "expr", "repeat-expr": "count.value"}]}, v)


def old_docs(path: Path) -> dict:
    if not path.exists():
        return {}
    ksy = yaml.safe_load(path.read_text())
    docs = {(None, None): ksy.get("doc")}
    for name, body in (ksy.get("types") or {}).items():
        docs[(name, None)] = body.get("doc")
        for attr in body.get("seq", []):
            docs[(name, attr["id"])] = attr.get("doc")
    for attr in ksy.get("seq", []):
        docs[(None, attr["id"])] = attr.get("doc")
    return {k: v for k, v in docs.items() if v}


def framed_seq(d: Drafter, messages: list[Message]) -> list[dict]:
    """Frame version, api key and version, then the record of that type and version."""
    cases = {}
    for m in sorted(messages, key=lambda m: m.spec["apiKey"]):
        for v, name in d.message(m).items():
            cases[m.spec["apiKey"] * 1000 + v] = name
    return [{"id": "frame_version", "type": "uvarint"}, {"id": "api_key", "type": "uvarint"},
            {"id": "version", "type": "uvarint"},
            {"id": "body", "size-eos": True, "type": {"switch-on": SWITCH_KEY, "cases": cases}, "-require-eos": True}]


def coordinator_seq(d: Drafter, messages: list[Message]) -> list[dict]:
    """The record type, then the key of that type; each value becomes a type of its own. Kafka's
    coordinators read a key or a value and ignore what follows it, so bodies are not required to
    fill their bytes."""
    keys = {}
    for m in sorted(messages, key=lambda m: (m.spec["apiKey"], m.spec["type"])):
        if m.spec["type"] == "coordinator-key":
            keys[m.spec["apiKey"]] = d.key(m)
        else:
            d.value(m)
    return [{"id": "type", "type": "s2"},
            {"id": "key", "size-eos": True, "type": {"switch-on": "type", "cases": keys}}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("specs", type=Path, nargs="+")
    ap.add_argument("--id", required=True)
    ap.add_argument("--title", required=True)
    ap.add_argument("--doc-ref", required=True)
    ap.add_argument("--coordinator", action="store_true", help="key/value pairs of a coordinator's topic")
    ap.add_argument("--types-only", action="store_true", help="no root type (with --coordinator)")
    args = ap.parse_args()
    messages = [Message(spec["name"], spec, max(versions_of(spec["validVersions"], 99)))
                for s in sorted(args.specs) for spec in [read_spec(s)]]
    d = Drafter(old_docs(args.out))
    seq = coordinator_seq(d, messages) if args.coordinator else framed_seq(d, messages)
    ksy = {"meta": {"id": args.id, "title": args.title, "license": "Apache-2.0", "endian": "be",
                    "imports": ["kafka_types", "uvarint"]},
           "doc": d.doc(None) or "", "doc-ref": args.doc_ref,
           **({} if args.types_only else {"seq": seq}), "types": {}}
    for name, body in d.types.items():
        if d.doc(name):
            body = {"doc": d.doc(name), **body}
        for attr in body["seq"]:
            if d.doc(name, attr["id"]):
                attr["doc"] = d.doc(name, attr["id"])
        ksy["types"][name] = body
    for attr in ksy.get("seq", []):
        if d.doc(None, attr["id"]):
            attr["doc"] = d.doc(None, attr["id"])
    args.out.write_text(yaml.dump(ksy, Dumper=_Indented, sort_keys=False, width=110, allow_unicode=True))


class _Indented(yaml.SafeDumper):
    """Lists indented under their key, as the other schemas are written."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


_Indented.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


if __name__ == "__main__":
    main()
