"""The `kafkacodec` command."""
from __future__ import annotations

import sys
from pathlib import Path

import click


def _repo_root() -> Path:
    """The checkout holding schemas/ and generated/: this file's parent's parent in a checkout."""
    here = Path(__file__).resolve().parent.parent
    if (here / "schemas").is_dir() and (here / "generator").is_dir():
        return here
    return Path.cwd()


@click.group()
@click.version_option(package_name="kafkacodec")
def main() -> None:
    """Read, verify and write Apache Kafka's on-disk formats without a broker."""


@main.command()
@click.option("--check", is_flag=True, help="Exit non-zero with a diff if generated/ is stale; write nothing.")
@click.option("--schemas", "schema_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of .ksy schemas (default: schemas/ of this checkout).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for generated modules (default: generated/ of this checkout).")
def generate(check: bool, schema_dir: Path | None, out_dir: Path | None) -> None:
    """Compile the schemas into Python codecs under generated/."""
    from .generator.compile import compile_dir
    from .generator.outputs import stale, write
    from .generator.problems import CompileFailed

    root = _repo_root()
    schema_dir = schema_dir or root / "schemas"
    out_dir = out_dir or root / "generated"
    try:
        outputs = compile_dir(schema_dir)
    except CompileFailed as failed:
        for problem in failed.problems:
            click.echo(str(problem), err=True)
        n = len(failed.problems)
        click.echo(f"{n} problem{'s' if n != 1 else ''}; nothing generated", err=True)
        sys.exit(1)
    if check:
        diffs = stale(out_dir, outputs)
        if diffs:
            for d in diffs:
                click.echo(d, nl=False)
            click.echo(f"\n{out_dir} is stale; fix it with: make generate", err=True)
            sys.exit(1)
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)")
        return
    changed = write(out_dir, outputs)
    for name in changed:
        click.echo(f"wrote {out_dir / name}")
    if not changed:
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)")


@main.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--records/--no-records", "print_records", default=True, help="Print every record too.")
@click.option("--limit", type=int, default=None, help="Stop after this many batches.")
def dump(path: Path, print_records: bool, limit: int | None) -> None:
    """Decode a segment file (.log) and print its batches and records."""
    from .records import read_batches
    from .runtime.errors import DecodeError

    data = path.read_bytes()
    try:
        # a CRC mismatch is reported as isvalid: false, as Kafka's dump tool does; damage to
        # the structure stops the dump with the byte position
        for n, batch in enumerate(read_batches(data, verify=False)):
            if limit is not None and n >= limit:
                break
            click.echo(batch.describe())
            if print_records:
                for rec in batch:
                    click.echo("| " + batch.describe_record(rec))
    except DecodeError as err:
        err.file = err.file or str(path)
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
