"""generate and docs: the compiler's outputs from the schemas."""
from __future__ import annotations

import sys
from pathlib import Path

import click


def _repo_root() -> Path:
    """The checkout holding schemas/ and generated/: three folders up from this file in a checkout."""
    here = Path(__file__).resolve().parents[2]
    if (here / "schemas").is_dir() and (here / "generator").is_dir():
        return here
    return Path.cwd()


@click.command()
@click.option("--check", is_flag=True, help="Exit non-zero with a diff if generated/ or docs/formats/ is stale; "
                                            "write nothing.")
@click.option("--schemas", "schema_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of .ksy schemas (default: schemas/ of this checkout).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for generated modules (default: generated/ of this checkout).")
@click.option("--docs", "docs_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the format pages (default: docs/formats/ of this checkout; "
                   "with --schemas or --out, none unless given).")
def generate(check: bool, schema_dir: Path | None, out_dir: Path | None, docs_dir: Path | None) -> None:
    """Compile the schemas into Python codecs under generated/ and format pages under docs/formats/."""
    from kafkacodec.generator.compile import compile_program
    from kafkacodec.generator.outputs import DOC_SUFFIXES, stale, write
    from kafkacodec.generator.problems import CompileFailed

    root = _repo_root()
    if docs_dir is None and schema_dir is None and out_dir is None:
        docs_dir = root / "docs" / "formats"
    schema_dir = schema_dir or root / "schemas"
    out_dir = out_dir or root / "generated"
    try:
        program, outputs = compile_program(schema_dir)
    except CompileFailed as failed:
        for problem in failed.problems:
            click.echo(str(problem), err=True)
        n = len(failed.problems)
        click.echo(f"{n} problem{'s' if n != 1 else ''}; nothing generated", err=True)
        sys.exit(1)
    if check:
        diffs = stale(out_dir, outputs)
        if not diffs and docs_dir is not None:  # the pages' examples come from the code checked above
            diffs = stale(docs_dir, _doc_outputs(program), DOC_SUFFIXES)
        if diffs:
            for d in diffs:
                click.echo(d, nl=False)
            click.echo("\ngenerated output is stale; fix it with: make generate", err=True)
            sys.exit(1)
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)" +
                   (f"; {docs_dir}: up to date" if docs_dir is not None else ""))
        return
    changed = [out_dir / name for name in write(out_dir, outputs)]
    if docs_dir is not None:  # after the code: the examples are written and read by it
        changed += [docs_dir / name for name in write(docs_dir, _doc_outputs(program), DOC_SUFFIXES)]
    for path in changed:
        click.echo(f"wrote {path}")
    if not changed:
        click.echo(f"{out_dir}: up to date ({len(outputs)} files)")


def _doc_outputs(program) -> dict[str, str]:
    """The format pages, with examples from the generated codecs as they are on disk now."""
    import importlib

    from kafkacodec.generator.docs import build_docs

    importlib.invalidate_caches()
    from kafkacodec.formatdocs.examples import example_rows

    return build_docs(program, example_rows(program))


@click.command()
@click.option("--html", "html_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the static site (created; its pages are replaced).")
def docs(html_dir: Path) -> None:
    """Build a static HTML site from docs/: the home page, the command reference (from the
    commands themselves), the recipes, the format pages and the schema-language guide."""
    from kafkacodec.formatdocs.website import build_site

    root = _repo_root()
    if not (root / "docs" / "formats" / "index.md").exists():
        click.echo(f"error: {root / 'docs' / 'formats'} has no pages; run: kafkacodec generate", err=True)
        sys.exit(2)
    from kafkacodec.formatdocs.commands import commands_markdown
    from .dump_log import HELP

    main = click.get_current_context().find_root().command  # the group this command runs under
    reference = commands_markdown(main, {"dump-log": [(f"`{o}`", t) for o, t in HELP]})
    pages = build_site(root / "docs", root / "schemas", html_dir, {"commands.md": reference})
    click.echo(f"wrote {len(pages)} pages to {html_dir}; open {html_dir / 'index.html'}")
