"""export: a log dir to a table through Spark."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .terminal import say

READER = click.option("--reader", type=click.Choice(["auto", "jvm", "python"]), default="auto", show_default=True,
                      help="Read the records with the JVM reader (auto: where a JDK can build it) or Spark's "
                           "Python data source.")


@click.command()
@click.argument("logdir")
@click.argument("out")
@click.option("--format", "fmt", type=click.Choice(["parquet", "delta"]), default="parquet", show_default=True)
@click.option("--master", default=None, help="Spark master URL (default: a local session on every core).")
@READER
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--topic", "topics", default=None, metavar="T1,T2", help="Only these topics (kafka-log's subscribe).")
@click.option("--value-format", type=click.Choice(["avro", "protobuf", "json-schema"]), default=None,
              help="Add the values as a typed column (valueDecoded, valueSchemaId, valueError) of the subject's "
                   "latest schema: one topic, or --value-subject.")
@click.option("--value-subject", default=None, help="The subject whose schema types the values (default <topic>-value).")
@click.option("--schemas", default=None, metavar="DIR|URL",
              help="Where the schemas are (default: the log dir's `_schemas` partition).")
def export(logdir: str, out: str, fmt: str, master: str | None, reader: str, force: bool, topics: str | None,
           value_format: str | None, value_subject: str | None, schemas: str | None) -> None:
    """Export a log dir (or partition, or segment; local or s3://, gs://, hdfs://) to a table through
    Spark: every record with Kafka's columns and the batch columns, headers and transaction
    markers (isControl) included; with --value-format, the values decoded as typed columns too."""
    from rich.console import Console

    from kafkacodec.pipeline.export import export as run, session, stage_progress

    if "://" not in out and Path(out).exists() and not force:  # before paying for a Spark start
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(1)
    console = Console(stderr=True)
    spark = session(master)
    try:
        with stage_progress(spark, console):
            options = {name: value for name, value in (("subscribe", topics), ("valueFormat", value_format),
                                                       ("valueSubject", value_subject), ("schemas", schemas))
                       if value is not None}
            summary = run(spark, logdir, out, fmt, "overwrite" if force else "errorifexists", reader=reader,
                          options=options)
    except Exception as err:  # Spark reports a Python error deep in its own; say it in one line
        text = str(err).strip().splitlines()
        click.echo(f"error: {text[0] if text else err}", err=True)
        sys.exit(1)
    finally:
        spark.stop()
    Console().print(summary.table())
    if summary.lag:
        Console().print(summary.lag_table())
    click.echo(f"wrote {out} ({fmt}, read by the {summary.reader} reader); corrupt batches: {summary.corrupt_batches}; "
               f"invalid bytes at segment ends: "
               f"{summary.invalid_bytes}; aborted transactions: {summary.aborted_transactions}")
    for segment, position, why in summary.damaged:
        click.echo(f"damaged: {segment} at byte {position}: {why}", err=True)
    for segment, position, offset, why in summary.undecoded:
        say(f"not decoded: {segment}: batch at byte {position}: offset {offset}: {why}", err=True)
    if summary.undecoded:
        click.echo(f"{len(summary.undecoded)} records did not decode (written with their bytes and the error column)",
                   err=True)
    sys.exit(1 if summary.damaged or summary.undecoded else 0)


@click.command("compact-table")
@click.argument("logdir")
@click.argument("out")
@click.option("--format", "fmt", type=click.Choice(["parquet", "delta"]), default="parquet", show_default=True)
@click.option("--read-uncommitted", is_flag=True, help="Count records of aborted transactions too.")
@click.option("--master", default=None, help="Spark master URL (default: a local session on every core).")
@READER
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def compact_table(logdir: str, out: str, fmt: str, read_uncommitted: bool, master: str | None, reader: str,
                  force: bool) -> None:
    """The current value of every key of every topic-partition of a log dir (local or s3://...),
    as a table: the latest record per key, tombstones delete, read-committed unless told."""
    from rich.console import Console
    from rich.table import Table

    from kafkacodec.pipeline.export import session, stage_progress
    from kafkacodec.pipeline.latest import compact_table as run

    if "://" not in out and Path(out).exists() and not force:
        click.echo(f"error: {out} exists; pass --force to replace it", err=True)
        sys.exit(1)
    spark = session(master, app="kafkacodec compact-table")
    try:
        with stage_progress(spark, Console(stderr=True)):
            topics = run(spark, logdir, out, fmt, "overwrite" if force else "errorifexists", not read_uncommitted,
                         reader=reader)
    except Exception as err:
        text = str(err).strip().splitlines()
        click.echo(f"error: {text[0] if text else err}", err=True)
        sys.exit(1)
    finally:
        spark.stop()
    table = Table("topic", "partitions", "keys")
    for topic, parts, keys in topics:
        table.add_row(topic, str(parts), f"{keys:,}")
    Console().print(table)
    click.echo(f"wrote {out} ({fmt}): the latest value of {sum(k for _, _, k in topics):,} keys")
