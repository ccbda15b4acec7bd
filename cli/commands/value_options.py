"""The options of the commands that decode keys and values (cat, dump --json), declared once,
and the decoders they make of them."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .terminal import say

# codec.values.decoding's formats, restated: the command line loads no layer below it at start-up
# (tests/values/test_framing.py checks they agree)
FORMATS = ["auto", "registry", "avro", "protobuf", "json-schema", "json", "string", "hex", "base64"]
FORMATS_HELP = ("auto (schema registry framing where the schema is known, else text, else base64), registry "
                "(by the type of the schema the framing names), avro, protobuf, json-schema, json, string, hex or base64")
NEEDS_SCHEMAS = {"registry", "avro", "protobuf", "json-schema"}


def format_options(default: str | None):
    def add(command):
        for name, what in (("--value-format", "values"), ("--key-format", "keys")):
            command = click.option(name, type=click.Choice(FORMATS), default=default, show_default=default is not None,
                                   help=f"How {what} are decoded: {FORMATS_HELP}.")(command)
        return command
    return add


def schema_options(command):
    options = [
        click.option("--schemas", "schemas_spec", default=None, metavar="DIR|URL",
                     help="Where the schemas are: a `_schemas` partition directory, a directory of schema files, or a "
                          "registry's http(s) address. Default: the log dir's own `_schemas` partition."),
        click.option("--schemas-topic", default="_schemas", show_default=True, help="The registry's storage topic."),
        click.option("--schema-context", default=None, metavar="CONTEXT",
                     help="The registry context whose ids the records name (e.g. .staging), where contexts repeat ids."),
        click.option("--avro-reader-schema", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                     help="Read Avro values with this schema (.avsc), resolved against each writer's schema."),
        click.option("--validate", is_flag=True, help="Check JSON Schema values against their schemas."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def decoders(path: Path, key_format: str | None, value_format: str | None, schemas_spec: str | None,
             schemas_topic: str, schema_context: str | None, avro_reader_schema: Path | None, validate: bool):
    """(key decoder, value decoder, the schema source or None); a decoder is None for a format
    not asked for. What the source passed over is said, and its damage (which the caller counts
    as damage); a format that needs schemas where there are none ends the command (exit 2)."""
    from kafkacodec.codec.values.decoding import ValueDecoder
    from kafkacodec.codec.values.problems import UndecodableValue
    from kafkacodec.storage.layout import logdir
    from kafkacodec.storage.schemas import open_schema_source

    if key_format is None and value_format is None:
        return None, None, None
    # the log dir a segment or a partition directory is in holds the schemas
    log_dir = path.parent.parent if not path.is_dir() else path.parent if logdir.is_partition_dir(path) else path
    source = open_schema_source(schemas_spec, log_dir, schemas_topic)
    if source is None and {key_format, value_format} & NEEDS_SCHEMAS:
        say(f"error: no `{schemas_topic}` partition in {log_dir}: say where the schemas are with --schemas", err=True)
        sys.exit(2)
    registry = source.registry if source is not None else None
    for line in source.passed_over if source is not None else ():
        say(f"note: {line}", err=True)
    for line in source.damaged if source is not None else ():
        say(f"error: the schemas: {line}", err=True)
    if schema_context is not None and registry is not None and not any(
            s.context == schema_context for s in registry.versions.values()):
        say(f"note: the schemas hold no version in context {schema_context}", err=True)
    try:
        reader = avro_reader_schema.read_text(encoding="utf-8") if avro_reader_schema is not None else None
        keys = ValueDecoder(key_format, registry, is_key=True, validate=validate, context=schema_context) \
            if key_format is not None else None
        values = ValueDecoder(value_format, registry, validate=validate, avro_reader_schema=reader,
                              context=schema_context) if value_format is not None else None
    except (UndecodableValue, UnicodeDecodeError) as err:
        raise click.BadParameter(str(err), param_hint="--avro-reader-schema") from None
    return keys, values, source
