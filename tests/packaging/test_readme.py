"""The README's examples run as written: its first Python block on a segment of the sample log."""
import re
import shutil

from tests.support import TESTS

README = (TESTS.parent / "README.md").read_text()


def test_the_first_example_runs(tmp_path, monkeypatch, capsys):
    block = re.search(r"## Using it\n\n```python\n(.*?)```", README, re.S)[1]
    shutil.copy(TESTS / "fixtures" / "sample.log", tmp_path / "00000000000000000000.log")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["0", "0", "none", "0", "0", "True"]  # the sample's first entry: magic 0
    assert len(printed) > 10


def test_it_names_make_install_and_links_the_docs_and_every_recipe():
    setup = README.split("## Using it", 1)[0]
    assert re.search(r"^make install\s+#", setup, re.M)
    links = set(re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README))
    assert "docs/index.md" in links
    recipes = {p.relative_to(TESTS.parent).as_posix() for p in (TESTS.parent / "docs" / "recipes").iterdir()
               if p.suffix in (".md", ".sh")}
    assert recipes <= links, recipes - links
    for href in links - {h for h in links if re.match(r"[a-z]+:", h)}:  # each relative link leads to a file
        assert (TESTS.parent / href).exists(), href
