"""The `kafkacodec` command."""
from __future__ import annotations

import os
import sys

import click

from .commands import cat, cleaning, codegen, dump_log, lag, metadata, packenv, questions, reading, segments, spark


class _Main(click.Group):
    """The one place where errors become messages: whatever a command does not handle itself is
    printed as `error: ...` and ends the command with exit status 2 for a file that cannot be used
    (safeio.FileProblem, or a failure of the operating system) and 1 for damage (any other
    KafkaCodecError); never a traceback."""

    def invoke(self, ctx: click.Context):
        from kafkacodec.runtime.errors import KafkaCodecError
        from kafkacodec.storage.diskio.safeio import FileProblem, os_problem
        from .commands.terminal import say

        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # the reader of our output went away (`| head`): nothing to say, and
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush there
            ctx.exit(1)
        except FileProblem as err:  # messages quote names read from files: escaped (commands.terminal)
            say(f"error: {err}", err=True)
            ctx.exit(2)
        except KafkaCodecError as err:
            say(f"error: {err}", err=True)
            ctx.exit(1)
        except OSError as err:
            message = os_problem(err.filename, err) if err.filename is not None else err.strerror or err
            say(f"error: {message}", err=True)
            ctx.exit(2)
        except ModuleNotFoundError as err:  # a command that needs an extra a plain install lacks
            top = (err.name or "").split(".")[0]
            if top not in _EXTRA_OF:
                raise
            click.echo(f"error: {ctx.invoked_subcommand} needs {top}, which is not installed: "
                       f"pip install 'kafkacodec[{_EXTRA_OF[top]}]'", err=True)
            ctx.exit(2)


# the optional dependencies, by the extra of pyproject.toml that installs them
_EXTRA_OF = {"pyarrow": "columnar", "pyspark": "spark", "pandas": "spark", "fastavro": "values", "google": "values",
             "grpc_tools": "values", "jsonschema": "values", "referencing": "values"}


@click.group(cls=_Main)
@click.version_option(package_name="kafkacodec")
@click.option("--max-batch-bytes", type=click.IntRange(1), default=None,
              help="Largest batch decoded (default 64 MiB).")
@click.option("--max-decompressed-bytes", type=click.IntRange(1), default=None,
              help="Largest size one compressed batch may inflate to (default 64 MiB).")
@click.option("--max-items", type=click.IntRange(1), default=None,
              help="Most items of one counted list: records per batch, headers per record (default 2^20).")
def main(max_batch_bytes: int | None, max_decompressed_bytes: int | None, max_items: int | None) -> None:
    """Read, verify and write Apache Kafka's on-disk formats without a broker."""
    from kafkacodec.runtime.limits import LIMITS

    for name, value in (("max_batch_bytes", max_batch_bytes), ("max_decompressed_bytes", max_decompressed_bytes),
                        ("max_items", max_items)):
        if value is not None:
            setattr(LIMITS, name, value)


for command in (codegen.generate, codegen.docs, segments.sample, segments.write, segments.convert,
                segments.reindex, segments.recover, reading.verify, reading.dump, cleaning.clean, spark.export, spark.compact_table,
                questions.describe, questions.find, questions.offsets, cat.cat, lag.lag, dump_log.dump_log, metadata.metadata,
                packenv.pack_env):
    main.add_command(command)
