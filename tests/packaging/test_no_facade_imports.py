"""The layers import what they use from the module that defines it, never through the package
facade `kafkacodec` (kafkacodec/__init__.py), which re-exports the codec for users: a layer
importing the facade depends on the top of the package it is below."""
import ast
import tomllib

from tests.support import ROOT


def layer_modules():
    dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in dirs.items():
        if package in ("", "kafkacodec", "kafkacodec.generated"):
            continue
        yield from (ROOT / folder).rglob("*.py")


def test_no_layer_imports_the_package_facade():
    facade = []
    for path in layer_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "kafkacodec" or \
                    isinstance(node, ast.Import) and any(a.name == "kafkacodec" for a in node.names):
                facade.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not facade, "imports of the package facade: " + ", ".join(facade)
