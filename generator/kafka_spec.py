"""Drafts a .ksy schema from Kafka's JSON message specs, for development only: code generation
never runs it. Each message becomes one type that takes its version as a param, as Kafka's own
message generator makes one class per message: its fields in Kafka's order, each guarded by the
versions that have it; where only the later versions are flexible, strings switch between the
classic and the compact encoding on the version and arrays have both counts. Tagged fields Kafka
knows are decoded through a switch on the tag and named (`-tagged`, with their defaults and
places), and stay raw in a version that does not define them (Kafka's own reader refuses such a
tag; a reader for recovery keeps it), as do unknown tags and tags of a struct type. Docs are taken from the schema being replaced, by
type and field id (the latest version's, where that schema had a type per version), so a schema
reviewed and documented by hand survives a redraft; new fields come out undocumented for a
person to describe.

Two framings: records framed as KRaft frames them (frame version, api key and version as
unsigned varints; `__cluster_metadata`, `__remote_log_metadata`), or with --coordinator the
key/value pairs of a coordinator's topic (an int16 record type before the key, an int16 version
before the value; `__consumer_offsets`, `__share_group_state`): then the root reads a key and
each value is a type of its own (its version, then the message's type), or with --types-only
only the messages' types are drafted: a root the schema has (written by hand) stays, with its
imports, and enums carry over to the fields that had them.

    python -m generator.kafka_spec OUT.ksy --id ID --title T --doc-ref URL [--coordinator [--types-only]] SPEC.json...
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

PRIMITIVE = {"int8": "s1", "int16": "s2", "int32": "s4", "int64": "s8", "uint16": "u2", "float64": "f8",
             "bool": "u1"}
TAG_WRAPPER = {"int8": "tagged_int8", "int16": "tagged_int16", "int32": "tagged_int32", "int64": "tagged_int64",
               "bool": "tagged_bool",
               "[]int32": "compact_int32_array", "[]uuid": "compact_uuid_array",
               "string": "compact_nullable_string", "uuid": "tagged_uuid"}


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


VERSION_DOC = "Version of the message (from the framing before it); what that version lacks is absent."


def version_param(name: str) -> dict:
    return {"id": name, "type": "s2", "doc": VERSION_DOC}


class Drafter:
    def __init__(self, old_docs: dict):
        self.types: dict[str, dict] = {}
        self.signatures: dict[str, str] = {}  # a type's body as text -> its name, to share equal ones
        self.old_docs = old_docs
        self.structs: dict[str, dict] = {}  # common structs by name
        self.owner = ""  # the message being drafted
        self.made_by: dict[str, str] = {}  # type name -> the message that drafted it
        self.valid: range = range(0)  # the versions of the message being drafted
        self.flexible_from: int | None = None  # the message's first flexible version
        self.latest = 0
        self.param = "version"  # the version's name in the struct being drafted

    def doc(self, type_name: str, field_id: str | None = None) -> str | None:
        """The doc of a type or field in the schema being replaced, also where that schema had a
        type per version (the latest version's doc) or named a coordinator value's body so."""
        return self.kept(type_name, field_id).get("doc")

    def kept(self, type_name: str, field_id: str | None = None) -> dict:
        """What a person wrote on a type or field of the schema being replaced (its doc, a
        field's enum), found as `doc` finds it."""
        if type_name is None:
            return self.old_docs.get((None, field_id), {})
        base = type_name.removesuffix("_body")
        for name in [type_name] + [f"{base}_v{v}" for v in range(99, -1, -1)]:
            if (name, field_id) in self.old_docs:
                return self.old_docs[(name, field_id)]
        return {}

    def begin(self, m: Message) -> None:
        self.structs = {s["name"]: s for s in m.spec.get("commonStructs", [])}
        self.owner = snake(m.name)
        self.valid, self.latest = m.valid, m.latest
        flexible = [v for v in m.valid if m.flexible(v)]
        if flexible and flexible != list(range(flexible[0], self.valid[-1] + 1)):
            raise SystemExit(f"{m.name}: flexible versions {flexible} are not the latest ones")
        self.flexible_from = flexible[0] if flexible else None

    def message(self, m: Message, name: str | None = None) -> str:
        """The message's one type: its version as a param, each field present in the versions
        that have it."""
        self.begin(m)
        base = name or snake(m.name)
        body, _ = self.struct_body(base, m.spec["fields"])
        return self.add(base, {"params": [version_param(param_name(m.spec["fields"]))], **body})

    def key(self, m: Message) -> str:
        """A coordinator key: one version, not flexible, named as the message is."""
        self.begin(m)
        return self.struct(snake(m.name), m.spec["fields"])[0]

    def value(self, m: Message) -> str:
        """A coordinator value: its int16 version, then the fields of that version."""
        body = self.message(m, f"{snake(m.name)}_body")
        name = snake(m.name)
        self.types[name] = {"seq": [
            {"id": "version", "type": "s2"},
            {"id": "body", "size-eos": True,
             "type": {"switch-on": "version", "cases": {v: f"{body}(version)" for v in m.valid}}}]}
        self.made_by[name] = self.owner
        return name

    def flexible(self, present: list[int]) -> bool | str:
        """Whether the versions `present` are flexible: True, False, or the condition telling
        them apart, where some are and some are not (Kafka's generator tests the version so)."""
        f = self.flexible_from
        if f is None or present[-1] < f:
            return False
        return True if present[0] >= f else f"{self.param} >= {f}"

    def condition(self, present: list[int]) -> str | None:
        """The `if` of a field present in `present` (a run of the message's versions)."""
        if present != list(range(present[0], present[-1] + 1)):
            raise SystemExit(f"{self.owner}: a field in versions {present} that are not a run")
        if self.valid[0] < present[0] == present[-1] < self.valid[-1]:  # one version between others
            return f"{self.param} == {present[0]}"
        parts = []
        if present[0] > self.valid[0]:
            parts.append(f"{self.param} >= {present[0]}")
        if present[-1] < self.valid[-1]:
            parts.append(f"{self.param} <= {present[-1]}")
        return " and ".join(parts) or None

    def struct(self, base: str, fields: list) -> tuple[str, bool]:
        """A struct's type, and whether it takes the version (its fields or tags depend on it)."""
        body, versioned = self.struct_body(base, fields)
        if versioned:
            body = {"params": [version_param(param_name(fields))], **body}
        return self.add(base, body), versioned

    def struct_body(self, base: str, fields: list) -> tuple[dict, bool]:
        outer, self.param = self.param, param_name(fields)
        try:
            return self._struct_body(base, fields)
        finally:
            self.param = outer

    def _struct_body(self, base: str, fields: list) -> tuple[dict, bool]:
        seq, tags, versioned = [], [], False
        named = []  # the tagged fields, each after the field before it in Kafka's order
        before = None
        for f in fields:
            # a field only tagged may leave out `versions`, which are then its tagged versions
            versions = f.get("versions") or f.get("taggedVersions")
            present = [v for v in self.valid if v in versions_of(versions, self.latest)]
            if not present:
                continue
            tagged = [v for v in present if v in versions_of(f.get("taggedVersions"), self.latest)]
            if tagged:
                if tagged != present:
                    raise SystemExit(f"{self.owner}: {f['name']} is tagged in some of its versions only")
                if f["type"] not in TAG_WRAPPER:  # a struct, say: its tag stays raw, as unknown tags do
                    print(f"{self.owner}: tagged field {f['name']} of type {f['type']} stays raw", file=sys.stderr)
                    continue
                tags.append((f, present))
                shown, cond = json_of(f), self.condition(present)
                named.append({"id": snake(f["name"]), "tag": int(f["tag"]), "default": tag_default(f),
                              **({"after": before} if before else {}), **({"json": shown} if shown else {}),
                              **({"if": cond} if cond else {})})
                before = snake(f["name"])
                continue
            before = snake(f["name"])
            entries, nested_versioned = self.field(f, present)
            if shown := json_of(f):
                next(e for e in entries if e["id"] == snake(f["name"]))["-json"] = shown
            versioned |= nested_versioned
            cond = self.condition(present)
            if cond:
                versioned = True
                for entry in entries:
                    entry["if"] = f"{cond} and {entry['if']}" if "if" in entry else cond
            seq += entries
        flexible = self.flexible(list(self.valid))
        if flexible:
            if tags:
                name, tags_versioned = self.tags(base, tags)
                versioned |= tags_versioned
                section = {"id": "tagged_fields", "type": name + (f"({self.param})" if tags_versioned else ""),
                           "-tagged": named}
            else:
                section = {"id": "tagged_fields", "type": "kafka_types::tagged_fields"}
            if flexible is not True:  # the section ends the flexible versions only
                section["if"] = flexible
                versioned = True
            seq.append(section)
        return {"seq": seq}, versioned

    def add(self, base: str, body: dict) -> str:
        sig = base + json.dumps(body, sort_keys=True, default=bytes.hex)
        if sig in self.signatures:
            return self.signatures[sig]
        if base in self.types and self.made_by[base] != self.owner:  # another message's struct of that name
            base = f"{self.owner.removesuffix('_value')}_{base}"
        name = base
        while name in self.types:
            name += "_"
        self.types[name] = body
        self.made_by[name] = self.owner
        self.signatures[sig] = name
        return name

    def field(self, f: dict, present: list[int]) -> tuple[list[dict], bool]:
        """The entries of one field (a count before an array, a null marker before a nullable
        struct), and whether its type takes the version."""
        fid, kind = snake(f["name"]), f["type"]
        flexible = self.flexible(present)
        nullable = any(v in versions_of(f.get("nullableVersions"), self.latest) for v in present)
        if kind.startswith("[]"):
            item, versioned = self.item(f, kind[2:], present=present)
            compact = {"id": f"{fid}_count_plus_one", "type": "uvarint",
                       "-derive": {"count-of": fid, "plus": 1, **({"if-absent": 0} if nullable else {})}}
            classic = {"id": f"{fid}_count", "type": "s4",
                       "-derive": {"count-of": fid, **({"if-absent": -1} if nullable else {})}}
            n = {True: f"{fid}_count_plus_one.value - 1", False: f"{fid}_count"}
            some = {True: f"{fid}_count_plus_one.value > 0", False: f"{fid}_count >= 0"}
            if flexible in (True, False):
                counts = [compact if flexible else classic]
                n, some = n[flexible], some[flexible]
            else:  # one count or the other, by version, each derived from the same items
                counts = [{**classic, "if": flexible.replace(">=", "<")}, {**compact, "if": flexible}]
                n, some = f"{flexible} ? {n[True]} : {n[False]}", f"{flexible} ? {some[True]} : {some[False]}"
                versioned = True
            items = {"id": fid, "repeat": "expr", "repeat-expr": n, **item}
            if nullable:
                items["if"] = some
            return [*counts, items], versioned
        item, versioned = self.item(f, kind, nullable, present)
        if nullable and kind not in ("string", "bytes"):  # a struct: an int8 before it, -1 for null
            return [{"id": f"{fid}_present", "type": "s1"}, {"id": fid, "if": f"{fid}_present >= 0", **item}], versioned
        return [{"id": fid, **item}], versioned

    def item(self, f: dict, kind: str, nullable: bool = False, present: list[int] = ()) -> tuple[dict, bool]:
        if kind in PRIMITIVE:
            return {"type": PRIMITIVE[kind]}, False
        if kind == "uuid":
            return {"size": 16}, False
        if kind in ("string", "bytes"):
            name = f"{'nullable_' if nullable else ''}{kind}"
            flexible = self.flexible(present)
            if flexible in (True, False):
                return {"type": f"kafka_types::{'compact_' if flexible else ''}{name}"}, False
            # the classic encoding or the compact one, by version
            return {"type": {"switch-on": flexible, "cases": {"true": f"kafka_types::compact_{name}",
                                                               "_": f"kafka_types::{name}"}}}, True
        struct = self.structs.get(kind) or {"fields": f["fields"]}
        name, versioned = self.struct(snake(kind), struct["fields"])
        return {"type": name + (f"({self.param})" if versioned else "")}, versioned

    def tags(self, base: str, tags: list) -> tuple[str, bool]:
        """The tagged-field section: known tags decoded by a switch on the tag, which leaves raw a
        tag that the message's version does not define (where Kafka's reader refuses it)."""
        outer, self.valid = self.valid, range(self.flexible_from, self.valid[-1] + 1)  # the section's versions
        try:
            return self._tags(base, tags)
        finally:
            self.valid = outer

    def _tags(self, base: str, tags: list) -> tuple[str, bool]:
        cases, absent = {}, {}  # the versions without a tag, as a condition -> those tags
        for f, present in tags:
            cases[int(f["tag"])] = "kafka_types::" + TAG_WRAPPER[f["type"]]
            if self.condition(present):
                outside = [f"version < {present[0]}"] * (present[0] > self.valid[0]) + \
                          [f"version > {present[-1]}"] * (present[-1] < self.valid[-1])  # the tag types' own
                absent.setdefault(" or ".join(outside), []).append(int(f["tag"]))
        on = "tag.value"
        for outside, numbers in reversed(absent.items()):
            which = " or ".join(f"tag.value == {n}" for n in numbers)
            which = f"({which})" if len(numbers) > 1 else which
            test = f"{which} and ({outside})" if " or " in outside else f"{which} and {outside}"
            on = f"{test} ? -1 : {on}" if on == "tag.value" else f"{test} ? -1 : ({on})"
        hidden = bool(absent)
        params = {"params": [version_param("version")]} if hidden else {}
        arg = "(version)" if hidden else ""
        # docs a person may replace (the schema being replaced keeps theirs)
        field = self.add(f"{base}_tag", {"doc": "One tagged field, decoded by its tag; other tags stay raw.",
                                         **params, "seq": [
            {"id": "tag", "type": "uvarint", "doc": "Tag number of the field."},
            {"id": "data_length", "type": "uvarint", "-derive": {"length-of": "data"},
             "doc": "Size of the field's data in bytes."},
            {"id": "data", "size": "data_length.value",
             "type": {"switch-on": on, "cases": dict(sorted(cases.items()))},
             "doc": "The field's data, decoded by its tag; other tags stay raw bytes."}]})
        return self.add(f"{base}_tags", {"doc": "The tagged fields.", **params, "seq": [
            {"id": "count", "type": "uvarint", "-derive": {"count-of": "fields"}, "doc": "Number of tagged fields."},
            {"id": "fields", "type": field + arg, "repeat": "expr", "repeat-expr": "count.value",
             "doc": "The tagged fields, by ascending tag."}]}), bool(hidden)


def json_of(f: dict) -> dict:
    """What Kafka's JSON of a field needs that our id and encoding do not say (`-json`): that a
    byte is a bool and 16 bytes a UUID, and its name where camel-casing the id does not give
    it back."""
    out = {}
    kind = f["type"].removeprefix("[]")
    if kind in ("bool", "uuid"):
        out["as"] = kind
    name = f["name"][:1].lower() + f["name"][1:]
    # the id camel-cased as codec/kafka_json._camel does it (the generator imports no codec code)
    head, *rest = snake(f["name"]).split("_")
    if head + "".join(p.title() for p in rest) != name:
        out["name"] = name
    return out


def tag_default(f: dict) -> int | None | list:
    """A tagged field's default as Kafka's generator takes it: the spec's, else 0 for a number,
    false for a boolean, an empty array."""
    d = f.get("default")
    if d is None:
        if f["type"].startswith("[]"):
            return []
        if f["type"] == "uuid":
            return bytes(16)  # Kafka's ZERO_UUID
        if f["type"] in PRIMITIVE:
            return 0
        raise SystemExit(f"tagged field {f['name']} of type {f['type']} needs a default this drafter can write")
    if d in ("null", "false", "true"):
        return {"null": None, "false": 0, "true": 1}[d]
    return int(d)


def param_name(fields: list) -> str:
    """`version`, unless the struct has a field of that name (a regular expression's version)."""
    return "message_version" if any(snake(f["name"]) == "version" for f in fields) else "version"


def old_docs(path: Path) -> dict:
    """(type, field) -> the doc and enum written there by a person ((type, None) for a type's doc)."""
    if not path.exists():
        return {}
    ksy = yaml.safe_load(path.read_text())
    docs = {(None, None): {"doc": ksy.get("doc")}}
    for name, body in (ksy.get("types") or {}).items():
        docs[(name, None)] = {"doc": body.get("doc")}
        for param in body.get("params", []):
            docs[(name, f"(param) {param['id']}")] = {"doc": param.get("doc")}
        for attr in body.get("seq", []):
            docs[(name, attr["id"])] = {k: attr[k] for k in ("doc", "enum") if attr.get(k)}
    for attr in ksy.get("seq", []):
        docs[(None, attr["id"])] = {"doc": attr.get("doc")}
    return {k: v for k, v in docs.items() if any(v.values())}


def framed_seq(d: Drafter, messages: list[Message]) -> list[dict]:
    """Frame version, api key and version, then the record of that type and version."""
    cases = {}
    for m in sorted(messages, key=lambda m: m.spec["apiKey"]):
        name = d.message(m)
        for v in m.valid:
            cases[m.spec["apiKey"] * 1000 + v] = f"{name}(version.value)"
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
    ap.add_argument("--types-only", action="store_true",
                    help="the messages' types only; a root the schema has stays (with --coordinator)")
    args = ap.parse_args()
    messages = [Message(spec["name"], spec, max(versions_of(spec["validVersions"], 99)))
                for s in sorted(args.specs) for spec in [read_spec(s)]]
    d = Drafter(old_docs(args.out))
    seq = coordinator_seq(d, messages) if args.coordinator else framed_seq(d, messages)
    old = yaml.safe_load(args.out.read_text()) if args.out.exists() else {}
    if args.types_only:  # a root written by hand (a key read its own way) stays, with its imports
        seq = old.get("seq")
    imports = (old.get("meta") or {}).get("imports") or ["kafka_types", "uvarint"]
    ksy = {"meta": {"id": args.id, "title": args.title, "license": "Apache-2.0", "endian": "be",
                    "imports": imports},
           "doc": d.doc(None) or "", "doc-ref": args.doc_ref, **({"seq": seq} if seq else {}),
           **({"enums": old["enums"]} if old.get("enums") else {}), "types": {}}
    for name, body in d.types.items():
        if d.doc(name) or body.get("doc"):
            body = {"doc": d.doc(name) or body["doc"], **{k: v for k, v in body.items() if k != "doc"}}
        for param in body.get("params", []):
            param["doc"] = d.doc(name, f"(param) {param['id']}") or param["doc"]
        for attr in body["seq"]:
            kept = d.kept(name, attr["id"])
            if "enum" in kept and "type" in attr:  # after its type, as written
                at = list(attr).index("type") + 1
                attr_items = list(attr.items())
                attr.clear()
                attr.update(attr_items[:at] + [("enum", kept["enum"])] + attr_items[at:])
            if kept.get("doc"):
                attr["doc"] = kept["doc"]
        ksy["types"][name] = body
    for attr in ksy.get("seq", []):
        if d.doc(None, attr["id"]):
            attr["doc"] = d.doc(None, attr["id"])
    args.out.write_text(yaml.dump(ksy, Dumper=_Indented, sort_keys=False, width=110, allow_unicode=True))


class _Indented(yaml.SafeDumper):
    """Lists indented under their key, as the other schemas are written."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


_Indented.ignore_aliases = lambda self, data: True  # a param list shared by two types is written twice
_Indented.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


if __name__ == "__main__":
    main()
