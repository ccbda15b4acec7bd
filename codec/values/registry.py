"""A schema registry's state rebuilt from the records of its storage topic (`_schemas`), as the
registry's own reader rebuilds it at start-up: records applied in offset order, keys and values
as compact JSON, a null value removing its key.

- SCHEMA {subject, version} -> one registered version: id, type (absent means AVRO), text,
  references, and `deleted` (a soft delete re-writes the record with true).
- DELETE_SUBJECT -> versions up to its value's `version` are soft-deleted; their records are not
  re-written, so the mark is applied here.
- CLEAR_SUBJECT -> the soft-deleted versions of the subjects it names are forgotten.
- CONFIG, MODE, CONTEXT, NOOP and association keys hold no schema: read, checked, kept aside.

An id stays readable while any version registered under it, deleted or not, is there: payloads
written before a soft delete still name it. Ids count per context; a subject in a context other
than the default one is qualified, `:.ctx:subject`."""
from __future__ import annotations

import base64
import hashlib
import json
import struct
import uuid
from dataclasses import dataclass, field

from .problems import BAD_SCHEMA, UndecodableValue

AVRO, PROTOBUF, JSON_SCHEMA = "AVRO", "PROTOBUF", "JSON"
SCHEMA_TYPES = (AVRO, PROTOBUF, JSON_SCHEMA)
DEFAULT_CONTEXT = "."
CONTEXT_PREFIX = ":."
# key types that hold no schema (read and passed over as the registry's reader does)
OTHER_KEY_TYPES = frozenset({"CONFIG", "MODE", "NOOP", "CONTEXT", "ASSOC"})


@dataclass(frozen=True)
class Reference:
    name: str  # how the referring schema names it (an Avro full name, a .proto import, a $ref)
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    subject: str
    version: int
    id: int
    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()
    deleted: bool = False
    metadata: dict | None = field(default=None, compare=False)
    rule_set: dict | None = field(default=None, compare=False)
    md5: str | None = field(default=None, compare=False)  # base64, where the record carries it

    @property
    def context(self) -> str:
        return context_of(self.subject)

    @property
    def guid(self) -> str:
        """The registry's GUID of the schema: the MD5 its record carries (where sensitive metadata
        is kept encrypted), else an MD5 over its text, references, metadata and rule set as the
        registry hashes them, written as a UUID."""
        stored = _stored_md5(self.md5)
        return str(uuid.UUID(bytes=stored if stored is not None else _md5(self).digest()))


def _stored_md5(text) -> bytes | None:
    try:
        found = base64.b64decode(text, validate=True) if isinstance(text, str) else None
    except ValueError:
        return None
    return found if found is not None and len(found) == 16 else None


def _java_sorted(items) -> list[str]:
    """Strings as Java sorts them (by UTF-16 code unit)."""
    return sorted((str(i) for i in items), key=lambda t: t.encode("utf-16-be", "surrogatepass"))


def _utf8(text) -> bytes:
    return str(text).encode("utf-8", "surrogatepass")


def _md5(schema: "RegisteredSchema"):
    digest = hashlib.md5(_utf8(schema.text))
    for ref in schema.references:
        digest.update(_utf8(ref.name) + _utf8(ref.subject) + struct.pack(">i", ref.version))
    if schema.metadata:
        digest.update(b"\x01")
        tags, properties = _dict(schema.metadata.get("tags")), _dict(schema.metadata.get("properties"))
        for tag in _java_sorted(tags):
            digest.update(_utf8(tag))
            for value in _java_sorted(tags[tag] if isinstance(tags[tag], list) else ()):
                digest.update(_utf8(value))
        for key in _java_sorted(properties):
            digest.update(_utf8(key) + _utf8(properties[key]))
        sensitive = schema.metadata.get("sensitive")
        for name in _java_sorted(sensitive if isinstance(sensitive, list) else ()):
            digest.update(_utf8(name))
    if schema.rule_set:
        digest.update(b"\x01")
        for kind in ("migrationRules", "domainRules", "encodingRules"):
            rules = schema.rule_set.get(kind)
            for rule in rules if isinstance(rules, list) else ():
                _rule_md5(digest, rule if isinstance(rule, dict) else {})
    return digest


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _rule_md5(digest, rule: dict) -> None:
    """A rule as the registry hashes it: its kind and mode defaulted, its tags and params sorted."""
    for name in ("name", "doc"):
        if rule.get(name) is not None:
            digest.update(_utf8(rule[name]))
    digest.update(_utf8(rule.get("kind") or "TRANSFORM") + _utf8(rule.get("mode") or "WRITEREAD"))
    if rule.get("type") is not None:
        digest.update(_utf8(rule["type"]))
    for tag in _java_sorted(rule.get("tags") if isinstance(rule.get("tags"), list) else ()):
        digest.update(_utf8(tag))
    params = _dict(rule.get("params"))
    for key in _java_sorted(params):
        digest.update(_utf8(key) + _utf8(params[key]))
    for name in ("expr", "onSuccess", "onFailure"):
        if rule.get(name) is not None:
            digest.update(_utf8(rule[name]))
    if rule.get("disabled") is True:
        digest.update(b"\x01")


def context_of(subject: str) -> str:
    """`.ctx` of `:.ctx:subject`; the default context `.` of an unqualified subject."""
    if subject.startswith(CONTEXT_PREFIX):
        end = subject.find(":", len(CONTEXT_PREFIX))
        if end > 0:
            return subject[1:end]
    return DEFAULT_CONTEXT


def qualified_reference(referrer: str, subject: str) -> str:
    """A reference's subject, in the referring subject's context when it names none itself."""
    if subject.startswith(CONTEXT_PREFIX) or context_of(referrer) == DEFAULT_CONTEXT:
        return subject
    return f":{context_of(referrer)}:{subject}"


def referenced(resolve, schema: RegisteredSchema, ref: Reference, verb: str = "references") -> RegisteredSchema:
    """The version `ref` of `schema` names, by `resolve(subject, version)`; an UndecodableValue of
    the kind bad-schema when the source does not hold it."""
    found = resolve(qualified_reference(schema.subject, ref.subject), ref.version)
    if found is None:
        raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id} {verb} {ref.name} ({ref.subject} version "
                                           f"{ref.version}), which the schema source does not hold",
                               schema_id=schema.id)
    return found


class RecordProblem(ValueError):
    """A record of the storage topic that is not one the registry writes."""


def _json(data: bytes, what: str) -> dict:
    try:
        obj = json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise RecordProblem(f"its {what} is not JSON: {err}") from None
    except RecursionError:
        raise RecordProblem(f"its {what} is JSON nested deeper than Python reads") from None
    if not isinstance(obj, dict):
        raise RecordProblem(f"its {what} is JSON but not an object")
    return obj


def _subject(obj: dict, what: str) -> str | None:
    subject = obj.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise RecordProblem(f"its {what}'s subject is not text")
    return subject


def _version(obj: dict, what: str) -> int:
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordProblem(f"its {what} has no whole-number version")
    return version


def _schema_value(subject: str, version: int, obj: dict) -> RegisteredSchema:
    schema_id, text = obj.get("id"), obj.get("schema")
    if not isinstance(schema_id, int) or isinstance(schema_id, bool):
        raise RecordProblem("its value has no whole-number id")
    if not isinstance(text, str):
        raise RecordProblem("its value has no schema text")
    schema_type = obj.get("schemaType") or AVRO
    if schema_type not in SCHEMA_TYPES:
        raise RecordProblem(f"its schema type {schema_type!r} is none of {', '.join(SCHEMA_TYPES)}")
    refs = []
    if not isinstance(obj.get("references") or [], list):
        raise RecordProblem("its value's references are not a list")
    for ref in obj.get("references") or ():
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str) or not isinstance(ref.get("subject"), str):
            raise RecordProblem("a reference of its value lacks a name or a subject")
        refs.append(Reference(ref["name"], ref["subject"], _version(ref, "reference")))
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
    if not isinstance(obj.get("deleted", False), bool):
        raise RecordProblem("its value's deleted is not true or false")
    rule_set = obj.get("ruleSet") if isinstance(obj.get("ruleSet"), dict) else None
    return RegisteredSchema(subject, version, schema_id, schema_type, text, tuple(refs),
                            bool(obj.get("deleted", False)), metadata, rule_set, obj.get("md5"))


class Registry:
    """The registered versions, by subject and version and by id; `apply` one storage record
    at a time, in offset order. `add` puts in a version known some other way (a file, a REST
    answer)."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, int], RegisteredSchema] = {}
        self._by_id: dict[tuple[str, int], dict[tuple[str, int], None]] = {}  # (context, id) -> versions
        self._by_guid: dict[str, tuple[str, int]] | None = None
        self._of_subject: dict[str, set[int]] = {}  # its versions: a subject's delete marks them without a scan
        self.other_records = 0  # config, mode, context, noop and association records read

    # -- rebuilding ------------------------------------------------------------------------------
    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One record of the storage topic; RecordProblem for one the registry does not write."""
        if key is None:
            raise RecordProblem("it has no key")
        obj = _json(key, "key")
        keytype = obj.get("keytype")
        if not isinstance(keytype, str):
            raise RecordProblem("its key has no key type")
        if keytype == "SCHEMA":
            subject = _subject(obj, "key")
            if subject is None:
                raise RecordProblem("its SCHEMA key has no subject")
            version = _version(obj, "key")
            if value is None:
                self._remove((subject, version))
            else:
                self.add(_schema_value(subject, version, _json(value, "value")))
        elif keytype == "DELETE_SUBJECT":
            if value is not None:
                body = _json(value, "value")
                subject = _subject(body, "value") or _subject(obj, "key")
                if subject is None:
                    raise RecordProblem("its DELETE_SUBJECT record names no subject")
                upto = _version(body, "value")
                for v in list(self._of_subject.get(subject, ())):
                    schema = self.versions[(subject, v)]
                    if v <= upto and not schema.deleted:
                        self.versions[(subject, v)] = _with_deleted(schema)
        elif keytype == "CLEAR_SUBJECT":
            if value is not None:
                self._clear(_subject(_json(value, "value"), "value"))
        elif keytype in OTHER_KEY_TYPES:
            self.other_records += 1
        else:
            raise RecordProblem(f"its key type {keytype!r} is not one the registry writes")

    def add(self, schema: RegisteredSchema) -> None:
        where = (schema.subject, schema.version)
        self._remove(where)
        self.versions[where] = schema
        self._of_subject.setdefault(schema.subject, set()).add(schema.version)
        self._by_id.setdefault((schema.context, schema.id), {})[where] = None
        self._by_guid = None

    def _remove(self, where: tuple[str, int]) -> None:
        old = self.versions.pop(where, None)
        if old is not None:
            self._of_subject.get(where[0], set()).discard(where[1])
            holders = self._by_id.get((old.context, old.id), {})
            holders.pop(where, None)
            if not holders:
                self._by_id.pop((old.context, old.id), None)
            self._by_guid = None

    def _clear(self, subject: str | None) -> None:
        """Forget soft-deleted versions: of every subject (None), of a context (`:.ctx:`), or of one."""
        for (s, v), schema in list(self.versions.items()):
            if not schema.deleted:
                continue
            if subject is None or s == subject or (subject.endswith(":") and subject.startswith(CONTEXT_PREFIX)
                                                   and context_of(s) == context_of(subject)):
                self._remove((s, v))

    # -- questions -------------------------------------------------------------------------------
    def by_id(self, schema_id: int, context: str | None = None) -> RegisteredSchema | None:
        """The schema of an id: in `context`, else the default context, else the one other
        context that has it. A live version is preferred to a deleted one (same schema)."""
        contexts = [context] if context is not None else [DEFAULT_CONTEXT]
        for ctx in contexts:
            found = self._holder(ctx, schema_id)
            if found is not None:
                return found
        if context is None:
            others = sorted(ctx for ctx, i in self._by_id if i == schema_id and ctx != DEFAULT_CONTEXT)
            if len(others) == 1:
                return self._holder(others[0], schema_id)
        return None

    def ids(self) -> list[int]:
        """Every schema id some context holds."""
        return sorted({i for _, i in self._by_id})

    def contexts_of(self, schema_id: int) -> list[str]:
        return sorted(ctx for ctx, i in self._by_id if i == schema_id)

    def _holder(self, context: str, schema_id: int) -> RegisteredSchema | None:
        holders = [self.versions[w] for w in self._by_id.get((context, schema_id), ())]
        if not holders:
            return None
        return min(holders, key=lambda s: (s.deleted, s.subject, s.version))

    def by_guid(self, guid: str) -> RegisteredSchema | None:
        if self._by_guid is None:
            self._by_guid = {}
            for where, schema in sorted(self.versions.items(), key=lambda item: (item[1].deleted, item[0])):
                self._by_guid.setdefault(schema.guid, where)
        where = self._by_guid.get(guid)
        return self.versions.get(where) if where else None

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        return self.versions.get((subject, version))

    def latest(self, subject: str) -> RegisteredSchema | None:
        """The subject's highest version not deleted, as the registry's `latest` is."""
        live = [s for (subj, _), s in self.versions.items() if subj == subject and not s.deleted]
        return max(live, key=lambda s: s.version) if live else None

    def subjects(self, deleted: bool = False) -> list[str]:
        return sorted({s for (s, _), schema in self.versions.items() if deleted or not schema.deleted})

    def __len__(self) -> int:
        return len(self.versions)


def _with_deleted(schema: RegisteredSchema) -> RegisteredSchema:
    from dataclasses import replace

    return replace(schema, deleted=True)
