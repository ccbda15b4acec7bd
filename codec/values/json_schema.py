"""JSON payloads of a registered JSON Schema: the JSON read strictly (UTF-8, one document), and
validated against the schema when asked, its references (`$ref`s by the names they are
registered under) resolved from the schema source."""
from __future__ import annotations

import json
from typing import Callable

from .problems import BAD_SCHEMA, INVALID, NOT_TEXT, Remembered, UndecodableValue
from .registry import RegisteredSchema, referenced

Resolve = Callable[[str, int], RegisteredSchema | None]
PATTERN_SECONDS = 1.0  # how long a schema's pattern may take on one string (a pattern can backtrack without end)


class PatternProblem(Exception):
    """A schema's pattern that could not be matched: `kind` as problems.py names it."""

    def __init__(self, kind: str, said: str):
        super().__init__(said)
        self.kind, self.said = kind, said


def _search(pattern: str, text: str):
    import regex

    try:
        return regex.search(pattern, text, timeout=PATTERN_SECONDS)
    except TimeoutError:
        raise PatternProblem(INVALID, f"not validated: the pattern {pattern!r} took longer than "
                                      f"{PATTERN_SECONDS:g} s on a string of the value") from None
    except regex.error as err:
        raise PatternProblem(BAD_SCHEMA, f"the pattern {pattern!r} is not a regular expression: {err}") from None


def _bounded(cls):
    """The validator class with `pattern` and `patternProperties` matched by `regex` under a time
    limit (jsonschema matches them with Python's re, which a pattern like (a|aa)+$ keeps busy for
    ever on a long enough string)."""
    from jsonschema import ValidationError, validators

    def pattern(validator, expected, instance, schema):
        if validator.is_type(instance, "string") and not _search(expected, instance):
            yield ValidationError(f"{instance!r} does not match {expected!r}")

    def pattern_properties(validator, patterns, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        for expected, subschema in patterns.items():
            for key, value in instance.items():
                if _search(expected, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=expected)

    return validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties})


def read_json(payload: bytes, at: int = 0, schema_id: int | None = None):
    try:
        return json.loads(bytes(payload[at:]).decode("utf-8"))
    except UnicodeDecodeError as err:
        raise UndecodableValue(NOT_TEXT, f"the payload is not UTF-8: {err.reason} at its byte {err.start}",
                               at + err.start, schema_id) from None
    except ValueError as err:
        raise UndecodableValue(NOT_TEXT, f"the payload is not JSON: {err}", at, schema_id) from None
    except RecursionError:
        raise UndecodableValue(NOT_TEXT, "the payload's JSON nests deeper than Python reads", at, schema_id) from None


def _schema_json(text: str, what: str, schema_id: int):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:
        raise UndecodableValue(BAD_SCHEMA, f"{what} is not JSON Python reads: {type(err).__name__}",
                               schema_id=schema_id) from None


class JsonSchemaDecoder:
    def __init__(self, resolve: Resolve, validate: bool = False):
        self._resolve = resolve
        self.validate = validate
        self.validator = Remembered(self._validator)

    def _validator(self, schema: RegisteredSchema):
        """The schema's validator, its references resolved from the schema source."""
        from jsonschema import exceptions, validators
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7

        resources = {}
        self._references(schema, resources)
        root = _schema_json(schema.text, f"schema {schema.id}", schema.id)
        registry = Registry().with_resources(
            (name, Resource.from_contents(doc, default_specification=DRAFT7)) for name, doc in resources.items())
        cls = validators.validator_for(root, default=validators.Draft7Validator)
        try:
            cls.check_schema(root)
        except exceptions.SchemaError as err:
            raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id} is not a JSON Schema: {err.message}",
                                   schema_id=schema.id) from None
        return _bounded(cls)(root, registry=registry)

    def documents(self, schema: RegisteredSchema) -> dict:
        """The schemas `schema` references (and they reference), parsed, by the names they are referenced by."""
        out: dict = {}
        self._references(schema, out)
        return out

    def _references(self, schema: RegisteredSchema, out: dict) -> None:
        for ref in schema.references:
            if ref.name in out:
                continue
            found = referenced(self._resolve, schema, ref)
            out[ref.name] = _schema_json(found.text, f"the schema {ref.name} that schema {schema.id} references",
                                         schema.id)
            self._references(found, out)

    def decode(self, payload: bytes, schema: RegisteredSchema, at: int = 0):
        value = read_json(payload, at, schema.id)
        if self.validate:
            from jsonschema import exceptions
            from referencing.exceptions import Unresolvable

            try:
                error = next(iter(self.validator(schema).iter_errors(value)), None)
            except Unresolvable as err:
                raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id} has a $ref the schema source does not "
                                                   f"give: {err}", schema_id=schema.id) from None
            except RecursionError:  # a $ref that leads back to itself without consuming the value
                raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id} refers to itself without end",
                                       schema_id=schema.id) from None
            except exceptions.SchemaError as err:
                raise UndecodableValue(BAD_SCHEMA, f"schema {schema.id}: {err.message}", schema_id=schema.id) from None
            except PatternProblem as err:
                raise UndecodableValue(err.kind, f"schema {schema.id}: {err.said}", at, schema.id) from None
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "(the whole value)"
                raise UndecodableValue(INVALID, f"the value does not match schema {schema.id} at {where}: "
                                                f"{error.message}", at, schema.id)
        return value
