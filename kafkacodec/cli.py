"""The `kafkacodec` command."""
from __future__ import annotations

import click

from .commands import codegen, inspect, segments, spark


@click.group()
@click.version_option(package_name="kafkacodec")
def main() -> None:
    """Read, verify and write Apache Kafka's on-disk formats without a broker."""


for command in (codegen.generate, codegen.docs, segments.sample, segments.write, segments.convert,
                segments.reindex, segments.recover, inspect.verify, inspect.dump, spark.export):
    main.add_command(command)
