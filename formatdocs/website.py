"""A static HTML site from the Markdown pages under docs/: plain Jinja and markdown-it (already
installed with rich), so the site needs no other tool and builds offline. Relative links to
.md pages become links to .html pages; diagrams and schemas are copied beside them."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt

PAGE = jinja2.Template("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} · kafkacodec</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; display: flex; color: #111827; }
nav { width: 15rem; padding: 1rem; background: #f3f4f6; min-height: 100vh; flex-shrink: 0; box-sizing: border-box; }
nav a { display: block; margin: .2rem 0; color: #1d4ed8; text-decoration: none; }
nav .section { margin-top: .8rem; font-weight: 600; }
main { padding: 1rem 2rem; max-width: 72rem; flex: 1; min-width: 0; }
/* a wide table scrolls inside the page, never the page */
table { border-collapse: collapse; margin: 1rem 0; font-size: 13px; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d1d5db; padding: .25rem .5rem; vertical-align: top; }
td code, td a { overflow-wrap: anywhere; }
code { background: #f3f4f6; padding: 0 .2rem; }
pre { background: #f3f4f6; padding: .75rem; overflow-x: auto; }
img { max-width: 100%; }
</style></head>
<body><nav><strong>kafkacodec</strong>
{% for href, label in nav %}{% if href %}<a href="{{ href }}">{{ label }}</a>{% else %}<div class="section">{{ label }}</div>{% endif %}
{% endfor %}</nav>
<main>{{ body }}</main></body></html>
""")
_MD_LINK = re.compile(r'href="(?![a-z]+:|#)([^"#]*)\.md(#[^"]*)?"')


def _title(text: str, fallback: str) -> str:
    m = re.search(r"^# (.+)$", text, re.M)
    return m.group(1).strip() if m else fallback


def build_site(docs_dir: Path, schemas_dir: Path, out: Path, extra: dict[str, str] | None = None) -> list[Path]:
    """Write the site into `out`: docs/ mirrored under out/docs (with `extra` pages, Markdown by
    path, such as the command reference), schemas under out/schemas, and the home page as
    out/index.html too; returns the HTML pages written."""
    md = MarkdownIt("commonmark").enable("table")
    pages = {src.relative_to(docs_dir).as_posix(): src.read_text() for src in sorted(docs_dir.rglob("*.md"))}
    pages.update(extra or {})
    out.mkdir(parents=True, exist_ok=True)
    formats = sorted(p for p in pages if p.startswith("formats/") and p != "formats/index.md")
    recipes = sorted(p for p in pages if p.startswith("recipes/"))
    written = []
    for rel, text in sorted(pages.items()):
        dest = out / "docs" / Path(rel).with_suffix(".html")
        up = "../" * rel.count("/")
        written.append(_page(md, text, rel, _nav(up, pages, recipes, formats), dest))
    if "index.md" in pages:  # the home page at the root too, its links reaching into docs/
        written.append(_page(md, pages["index.md"], "index.md", _nav("docs/", pages, recipes, formats),
                             out / "index.html", link_prefix="docs/"))
    for svg in sorted(docs_dir.rglob("*.svg")):
        target = out / "docs" / svg.relative_to(docs_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(svg, target)
    (out / "schemas").mkdir(exist_ok=True)
    for ksy in sorted(schemas_dir.glob("*.ksy")):
        shutil.copyfile(ksy, out / "schemas" / ksy.name)
    return written


def _nav(up: str, pages: dict, recipes: list[str], formats: list[str]) -> list[tuple[str | None, str]]:
    def link(rel: str, label: str) -> list[tuple[str, str]]:
        return [(up + str(Path(rel).with_suffix(".html")), label)] if rel in pages else []

    nav = link("index.md", "Home") + link("commands.md", "Commands")
    if recipes:
        nav += [(None, "Recipes")] + [(up + str(Path(r).with_suffix(".html")), _title(pages[r], r)) for r in recipes]
    nav += [(None, "Formats")] + link("formats/index.md", "All formats")
    nav += [(up + str(Path(p).with_suffix(".html")), Path(p).stem) for p in formats]
    return nav + link("schema-language.md", "Schema language")


def _page(md: MarkdownIt, text: str, rel: str, nav: list, dest: Path, link_prefix: str = "") -> Path:
    body = _MD_LINK.sub(lambda m: f'href="{link_prefix}{m.group(1)}.html{m.group(2) or ""}"', md.render(text))
    if link_prefix:  # other relative links (images) from the root page too
        body = re.sub(r'(src|href)="(?![a-z]+:|#|/|' + re.escape(link_prefix) + r')', rf'\1="{link_prefix}', body)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(PAGE.render(title=_title(text, Path(rel).stem), nav=nav, body=body))
    return dest
