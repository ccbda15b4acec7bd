"""The `kafkacodec` command."""
from __future__ import annotations

import click

from .commands import cleaning, codegen, inspect, segments, spark


@click.group()
@click.version_option(package_name="kafkacodec")
@click.option("--max-batch-bytes", type=click.IntRange(1), default=None,
              help="Largest batch decoded (default 64 MiB).")
@click.option("--max-decompressed-bytes", type=click.IntRange(1), default=None,
              help="Largest size one compressed batch may inflate to (default 64 MiB).")
@click.option("--max-items", type=click.IntRange(1), default=None,
              help="Most items of one counted list: records per batch, headers per record (default 2^20).")
def main(max_batch_bytes: int | None, max_decompressed_bytes: int | None, max_items: int | None) -> None:
    """Read, verify and write Apache Kafka's on-disk formats without a broker."""
    from .runtime.limits import LIMITS

    for name, value in (("max_batch_bytes", max_batch_bytes), ("max_decompressed_bytes", max_decompressed_bytes),
                        ("max_items", max_items)):
        if value is not None:
            setattr(LIMITS, name, value)


for command in (codegen.generate, codegen.docs, segments.sample, segments.write, segments.convert,
                segments.reindex, segments.recover, inspect.verify, inspect.dump, cleaning.clean, spark.export, spark.compact_table):
    main.add_command(command)
