"""The hand-written modules import one another without a cycle, counting every import: at module
level, inside functions, and by name through importlib; and no folder holds more than 20 modules.

A cycle hidden inside a function still ties two modules together (neither can be understood, moved
or tested without the other), so it counts here as one at module level does."""
import ast
import tomllib
from collections import defaultdict
from pathlib import Path

from tests.support import ROOT

GENERATED = "kafkacodec.generated"  # written by the compiler, not by hand
MAX_MODULES = 20
# calls of importlib.import_module whose argument is not a name known before running, and why
DYNAMIC = {
    ("kafkacodec.runtime.compiled", "load"): "a compiled module, hand-written or generated, built or not",
    ("kafkacodec.cli.commands.packenv", "_built_from_source_beside"): "a compiled module a packed archive holds",
    ("kafkacodec.runtime.node", "_unpickled"): "the generated module a pickle names",
}


def package_dirs() -> dict[str, Path]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    out = {pkg: ROOT / folder for pkg, folder in cfg.items() if pkg}
    for pkg, folder in list(out.items()):  # folders below a mapped folder: packages of their own
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            out.setdefault(".".join((pkg, *rel)), init.parent)
    return out


def hand_written() -> dict[str, Path]:
    mods = {}
    for pkg, folder in package_dirs().items():
        if pkg == GENERATED or pkg.startswith(GENERATED + "."):
            continue
        for f in folder.glob("*.py"):
            mods[pkg if f.name == "__init__.py" else f"{pkg}.{f.stem}"] = f
    return mods


def _dict_values(tree: ast.Module, name: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and \
                any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return [v.value for v in node.value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return []


def _strings(arg: ast.expr, tree: ast.Module, package: str) -> list[str] | None:
    """The module names an import_module argument can be, or None when they cannot be known."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr) and len(arg.values) == 3:
        head, dot, tail = arg.values
        if isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name) and \
                head.value.id == "__package__" and isinstance(dot, ast.Constant) and dot.value == "." and \
                isinstance(tail, ast.FormattedValue) and isinstance(tail.value, ast.Subscript) and \
                isinstance(tail.value.value, ast.Name):
            return [f"{package}.{v}" for v in _dict_values(tree, tail.value.value.id)]
    return None


def imports(name: str, path: Path, known: set[str]) -> tuple[set[str], list[str]]:
    """(the modules `name` imports anywhere in it, the dynamic imports nobody vouched for)"""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out, unknown = set(), []
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    owner = {id(sub): f.name for f in functions for sub in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base)
        elif isinstance(node, ast.Call) and node.args and \
                getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__"):
            found = _strings(node.args[0], tree, package)
            if found is None:
                if (name, owner.get(id(node))) not in DYNAMIC:
                    unknown.append(f"{path.relative_to(ROOT)}:{node.lineno}: import_module of a name not known "
                                   "before running")
            else:
                out.update(found)
    return out, unknown


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_among_the_hand_written_modules():
    mods = hand_written()
    graph, unknown = defaultdict(set), []
    for name, path in mods.items():
        found, dynamic = imports(name, path, set(mods))
        graph[name] = {m for m in found if m in mods and m != name}
        unknown += dynamic
    assert not unknown, "\n".join(unknown)
    cycles = strongly_connected(graph)
    assert not cycles, "modules that import one another:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_a_cycle_hidden_in_a_function(tmp_path):
    """The test above can fail: two modules importing each other, one inside a function and one by
    its name through importlib, are found."""
    (tmp_path / "a.py").write_text("def f():\n    from . import b\n")
    (tmp_path / "b.py").write_text("import importlib\nK = {'x': 'a'}\n"
                                   "def g(k):\n    return importlib.import_module(f'{__package__}.{K[k]}')\n")
    known = {"p.a", "p.b"}
    graph = {m: imports(m, tmp_path / f"{m[2:]}.py", known)[0] & known for m in known}
    assert strongly_connected(graph) == [["p.a", "p.b"]]


def test_no_folder_holds_more_than_twenty_modules():
    folders = [p for p in package_dirs().values() if p.is_dir() and "generated" not in p.parts]
    folders += [p for p in (ROOT / "tests").rglob("*") if p.is_dir() and "__pycache__" not in p.parts]
    crowded = {str(f.relative_to(ROOT)): n for f in set(folders)
               if (n := len([m for m in f.glob("*.py") if m.name != "__init__.py"])) > MAX_MODULES}
    assert not crowded, crowded
