"""No hand-written module chooses between two branches that do the same thing (an if/else, an
if/elif or a conditional expression whose arms are identical): one of them was meant to differ,
or the choice is noise."""
import ast

from tests.packaging.test_import_cycles import hand_written
from tests.support import ROOT


def identical_branches(source: str) -> list[int]:
    """The lines of the choices in `source` whose arms are the same code."""
    def same(a: list[ast.stmt], b: list[ast.stmt]) -> bool:
        return ast.dump(ast.Module(a, [])) == ast.dump(ast.Module(b, []))

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and node.orelse:
            elif_ = len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)
            if same(node.body, node.orelse) or (elif_ and same(node.body, node.orelse[0].body)):
                out.append(node.lineno)
        elif isinstance(node, ast.IfExp) and ast.dump(node.body) == ast.dump(node.orelse):
            out.append(node.lineno)
    return out


def test_no_choice_between_identical_branches():
    found = [f"{path.relative_to(ROOT)}:{line}" for path in hand_written().values()
             for line in identical_branches(path.read_text())]
    assert not found, "branches that do the same thing:\n" + "\n".join(found)


def test_the_checker_sees_each_form():
    assert identical_branches("x = 'a' if c else 'a'\n") == [1]
    assert identical_branches("if c:\n    f(1)\nelse:\n    f(1)\n") == [1]
    assert identical_branches("if c:\n    f(1)\nelif d:\n    f(1)\n") == [1]
    assert identical_branches("x = 'a' if c else 'b'\nif c:\n    f(1)\nelif d:\n    f(2)\nelse:\n    f(1)\n") == []
