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
nav { width: 15rem; padding: 1rem; background: #f3f4f6; min-height: 100vh; flex-shrink: 0; }
nav a { display: block; margin: .2rem 0; color: #1d4ed8; text-decoration: none; }
main { padding: 1rem 2rem; max-width: 72rem; overflow-x: auto; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 13px; }
th, td { border: 1px solid #d1d5db; padding: .25rem .5rem; vertical-align: top; }
code { background: #f3f4f6; padding: 0 .2rem; }
pre { background: #f3f4f6; padding: .75rem; overflow-x: auto; }
img { max-width: 100%; }
</style></head>
<body><nav><strong>kafkacodec</strong>
{% for href, label in nav %}<a href="{{ href }}">{{ label }}</a>
{% endfor %}</nav>
<main>{{ body }}</main></body></html>
""")
_MD_LINK = re.compile(r'href="(?![a-z]+:|#)([^"#]*)\.md(#[^"]*)?"')


def _title(text: str, fallback: str) -> str:
    m = re.search(r"^# (.+)$", text, re.M)
    return m.group(1).strip() if m else fallback


def build_site(docs_dir: Path, schemas_dir: Path, out: Path) -> list[Path]:
    """Write the site into `out` (docs/ mirrored under out/docs, schemas under out/schemas, an index
    that opens the formats index); returns the HTML pages written."""
    md = MarkdownIt("commonmark").enable("table")
    sources = sorted(docs_dir.rglob("*.md"))
    out.mkdir(parents=True, exist_ok=True)
    formats = [p for p in sources if p.parent.name == "formats" and p.name != "index.md"]
    written = []
    for src in sources:
        rel = src.relative_to(docs_dir)
        dest = out / "docs" / rel.with_suffix(".html")
        dest.parent.mkdir(parents=True, exist_ok=True)
        up = "../" * (len(rel.parts) - 1)
        nav = [(f"{up}formats/index.html", "Formats")] + \
              [(f"{up}formats/{p.stem}.html", p.stem) for p in formats] + \
              [(f"{up}schema-language.html", "Schema language")]
        text = src.read_text()
        body = _MD_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', md.render(text))
        dest.write_text(PAGE.render(title=_title(text, src.stem), nav=nav, body=body))
        written.append(dest)
    for svg in sorted(docs_dir.rglob("*.svg")):
        target = out / "docs" / svg.relative_to(docs_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(svg, target)
    (out / "schemas").mkdir(exist_ok=True)
    for ksy in sorted(schemas_dir.glob("*.ksy")):
        shutil.copyfile(ksy, out / "schemas" / ksy.name)
    (out / "index.html").write_text('<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" '
                                    'content="0; url=docs/formats/index.html"><a href="docs/formats/index.html">'
                                    'Kafka\'s on-disk formats</a>\n')
    return written
