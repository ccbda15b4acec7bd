"""The format pages: complete, true to the codecs, fresh, and rendered by a real browser."""
import importlib
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from PIL import Image

from tests.support import ROOT
from kafkacodec.formatdocs.examples import WRITERS, example_rows
from kafkacodec.formatdocs.hexdump import show
from kafkacodec.generator.compile import compile_program
from kafkacodec.generator.docs import build_docs

DOCS = ROOT / "docs" / "formats"
ARTIFACTS = ROOT / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def program():
    return compile_program(ROOT / "schemas")[0]


def sections(page: str) -> dict[str, str]:
    """Text of each type's section, keyed by its anchor."""
    parts = re.split(r'<a id="(type-[a-z0-9-]+)"></a>', page)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_schema_has_a_page_and_every_field_a_row(program):
    index = (DOCS / "index.md").read_text()
    for sid, schema in program.schemas.items():
        page = (DOCS / f"{sid}.md").read_text()
        assert f"]({sid}.md)" in index
        by_anchor = sections(page)
        for spec in program.walk(schema.root):
            anchor = "type-" + "-".join(p.lower() for p in program.class_path(spec))
            section = by_anchor[anchor].split("\n## ", 1)[0]
            for attr in spec.seq:
                assert f"| `{attr.id}` |" in section, (sid, spec.name, attr.id)
            for inst in spec.instances:
                assert f"| `{inst.id}` |" in section, (sid, spec.name, inst.id)
            if spec.seq and not spec.intrinsic:
                svg = re.search(r"!\[[^\]]*\]\((svg/[^)]+)\)", section).group(1)
                assert (DOCS / svg).read_text().startswith("<svg ")


def example_table(page: str) -> list[tuple[int, bytes, str, str]]:
    rows = []
    for line in page.split("## Example", 1)[1].splitlines():
        m = re.match(r"^\| (\d+) \| `([0-9a-f ]*)`(.*?) \| `([^`]+)` \| (.*) \|$", line)
        if m:
            assert not m.group(3), f"a truncated example row cannot be checked: {line}"
            rows.append((int(m.group(1)), bytes.fromhex(m.group(2)), m.group(4), m.group(5)))
    return rows


def resolve(obj, path: str):
    for part in path.split("."):
        name, _, index = part.partition("[")
        obj = getattr(obj, name)
        if index:
            obj = obj[int(index.rstrip("]"))]
    return obj


@pytest.mark.parametrize("sid", sorted(WRITERS))
def test_example_hex_dump_decodes_to_its_labels(sid):
    """The bytes printed on the page, put back together, decode with the generated reader to the
    values printed beside them, and every byte is labelled exactly once."""
    rows = example_table((DOCS / f"{sid}.md").read_text())
    data = b""
    for offset, chunk, _, _ in rows:
        assert offset == len(data)
        data += chunk
    obj = WRITERS[sid][1].from_bytes(data)
    assert obj.to_bytes() == data
    for _, _, path, value in rows:
        assert show(resolve(obj, path)) == value.replace("\\|", "|"), path


@pytest.mark.parametrize("sid", ["varint", "varlong", "uvarint"])
def test_varint_examples_decode_with_the_runtime(sid):
    from kafkacodec.runtime.varint import read_uvarint, read_zigzag32, read_zigzag64
    read = {"varint": read_zigzag32, "varlong": read_zigzag64, "uvarint": read_uvarint}[sid]
    for offset, chunk, _, value in example_table((DOCS / f"{sid}.md").read_text()):
        assert read(chunk, 0, len(chunk)) == (int(value), len(chunk)), offset


def test_a_doc_edit_changes_its_code_and_its_page_and_nothing_else(program, tmp_path):
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    ksy = tmp_path / "schemas" / "time_index.ksy"
    text = ksy.read_text()
    edited = text.replace("doc: Offset minus the segment's base offset.",
                          "doc: Offset minus the segment's base offset (the file name's number).")
    assert edited != text
    ksy.write_text(edited)
    before_code = compile_program(ROOT / "schemas")[1]
    after_program, after_code = compile_program(tmp_path / "schemas")
    assert {k for k in before_code if before_code[k] != after_code[k]} == {"time_index.py"}
    before_docs = build_docs(program, example_rows(program))
    after_docs = build_docs(after_program, example_rows(after_program))
    assert {k for k in before_docs if before_docs[k] != after_docs[k]} == {"time_index.md"}
    assert "(the file name's number)" in after_docs["time_index.md"]


def test_generate_check_fails_on_a_stale_page(tmp_path):
    docs = tmp_path / "formats"
    shutil.copytree(DOCS, docs)
    kc = [sys.executable, "-m", "kafkacodec", "generate", "--check", "--docs", str(docs)]
    assert subprocess.run(kc, capture_output=True).returncode == 0
    page = docs / "offset_index.md"
    page.write_text(page.read_text().replace("Sparse map", "Sparse table"))
    run = subprocess.run(kc, capture_output=True, text=True)
    assert run.returncode == 1
    assert "-Sparse table" in run.stdout and "+Sparse map" in run.stdout and "make generate" in run.stderr


MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(page: Path) -> list[str]:
    """The page's Markdown links and images that point into the checkout (no scheme, no bare anchor)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [href for href in MD_LINK.findall(text) if not urlparse(href).scheme and not href.startswith("#")]


def test_every_page_links_only_to_files_of_the_checkout():
    """Read in the checkout or on a forge, as well as in the built site: a link to a page that only
    the site has (the command reference) leads nowhere there."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    for page in pages:
        for href in relative_links(page):
            target = (page.parent / unquote(urlparse(href).path)).resolve()
            assert target.exists(), (str(page.relative_to(ROOT)), href)
    linked = {(ROOT / "docs" / h).resolve() for h in relative_links(ROOT / "docs" / "index.md")}
    for recipe in sorted((ROOT / "docs" / "recipes").glob("*.md")):
        assert recipe.resolve() in linked, f"docs/index.md does not link {recipe.name}"


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.images = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "img":
            self.images.append(a["src"])


def test_html_site_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("headless Chromium is needed (make test installs Debian's chromium package)")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "kafkacodec", "docs", "--html", str(site)], check=True,
                   capture_output=True)
    pages = sorted(site.rglob("*.html"))
    hand_written = list((ROOT / "docs").rglob("*.md"))
    # every Markdown page, the command reference made from the commands, and the home page at the root
    assert len(pages) == len(hand_written) + 2
    home = (site / "index.html").read_text().split("<main>")[1]
    assert home.count('href="docs/recipes/') == 5 and "refresh" not in home  # a real page, not a redirect
    reference = (site / "docs" / "commands.html").read_text()
    from kafkacodec.cli import main
    assert all(f"kafkacodec {name}</code></h2>" in reference for name in main.commands)
    assert "--files &lt;String: file1, file2, ...&gt;" in reference  # dump-log's own options
    parsed = {}
    for page in pages:
        p = Links()
        p.feed(page.read_text())
        parsed[page] = p
    for page, p in parsed.items():  # every relative link and image resolves, anchors included
        for href in p.links + p.images:
            url = urlparse(href)
            if url.scheme:
                continue
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            assert target.exists(), (page.name, href)
            if url.fragment and target.suffix == ".html":
                assert url.fragment in parsed[target].ids, (page.name, href)
    svg_module = importlib.import_module("kafkacodec.generator.svg")
    diagram = {tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (svg_module.FILL, svg_module.COVERED)}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    painted = [page for page in pages if not (page.name == "index.html" and page.parent == site)
               and (parsed[page].images or page.stem == "index")]
    # one Chromium for all the pages, each in a frame of its own (a Chromium per page took a minute)
    overflows = _overflows(chromium, pages, tmp_path)
    for page in pages:
        assert overflows[page] == 0, page  # every table fits a 1300-pixel window
    with Image.open(_screenshot(chromium, painted, tmp_path)) as png:
        shot = png.convert("RGB")
    for i, page in enumerate(painted):  # the others are laid out, as the probe showed
        left, top = _tile_corner(i)
        tile = shot.crop((left, top, left + TILE[0], top + TILE[1]))
        seen = {c for _, c in tile.getcolors(maxcolors=1 << 20)}
        assert len(seen) > 20, page.name  # text and tables drawn, not a blank page
        if parsed[page].images:  # the diagrams were loaded and painted
            assert seen & diagram, page.name


# a page is painted at 1280 by 1600 pixels and shown at a quarter of that in a tile of the screenshot
TILE, TILES_ACROSS = (320, 400), 5
# frames of file: pages are read by the page holding them only with this switch
CHROMIUM = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files")


def _tile_corner(i: int) -> tuple[int, int]:
    """The top left corner of the i-th page's tile, in pixels of the screenshot."""
    return (i % TILES_ACROSS) * TILE[0], (i // TILES_ACROSS) * TILE[1]


def _screenshot(chromium: str, pages: list[Path], tmp_path: Path) -> Path:
    """Every page in a tile of one screenshot, kept under build/test-artifacts to look at."""
    tiles = "".join(
        f'<div style="position:absolute;left:{left}px;top:{top}px;width:{TILE[0]}px;height:{TILE[1]}px;'
        f'overflow:hidden"><iframe src="{page.as_uri()}" style="width:{TILE[0] * 4}px;height:{TILE[1] * 4}px;'
        'border:0;transform:scale(0.25);transform-origin:0 0"></iframe></div>'
        for (left, top), page in zip(map(_tile_corner, range(len(pages))), pages))
    holder = tmp_path / "tiles.html"
    holder.write_text(f'<html><body style="margin:0">{tiles}</body></html>')
    shot = ARTIFACTS / "docs-pages.png"
    shot.unlink(missing_ok=True)
    rows = -(-len(pages) // TILES_ACROSS)
    subprocess.run([chromium, *CHROMIUM, f"--user-data-dir={tmp_path / 'profile-shot'}",
                    f"--window-size={TILES_ACROSS * TILE[0]},{rows * TILE[1]}", f"--screenshot={shot}",
                    holder.as_uri()], check=True, capture_output=True, timeout=300)
    return shot


def _overflows(chromium: str, pages: list[Path], tmp_path: Path) -> dict[Path, int]:
    """How many pixels each page's main column or its widest table would have to scroll sideways
    in a 1300-pixel window: the pages in frames of that width, and a script that writes the figures
    into the DOM, which Chromium then prints. (The previous stylesheet gave 57 to 395 on the format
    pages.)"""
    frames = "".join(f'<iframe src="{page.as_uri()}" style="width:1300px;height:900px;border:0"></iframe>'
                     for page in pages)
    probe = tmp_path / "probe.html"
    probe.write_text(
        f"<html><body>{frames}<script>window.addEventListener('load', () => {{ const widths = []; "
        "for (const frame of document.querySelectorAll('iframe')) { const d = frame.contentDocument; let w = 0; "
        "for (const e of [d.querySelector('main'), ...d.querySelectorAll('table')]) { "
        "w = Math.max(w, e.scrollWidth - e.clientWidth); } widths.push(w); } "
        "document.body.setAttribute('data-overflow', widths.join(',')) })</script></body></html>")
    run = subprocess.run([chromium, *CHROMIUM, "--window-size=1300,900",
                          f"--user-data-dir={tmp_path / 'profile-probe'}", "--dump-dom", probe.as_uri()],
                         check=True, capture_output=True, text=True, timeout=300)
    widths = re.search(r'data-overflow="([-\d,]*)"', run.stdout)[1].split(",")
    assert len(widths) == len(pages), run.stdout[-2000:]
    return {page: int(w) for page, w in zip(pages, widths)}
