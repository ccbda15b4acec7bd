"""The generated Python stays within four times its schemas' lines: code every field would repeat
lives in the runtime's helpers, except in the -hot types, whose speed needs it inline."""
from tests.support import ROOT


def lines(paths) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def test_generated_python_is_at_most_four_times_its_schemas():
    schemas = lines(sorted((ROOT / "schemas").glob("*.ksy")))
    generated = lines(sorted((ROOT / "generated").glob("*.py")))
    assert schemas > 1000 and generated <= 4 * schemas, f"{generated} generated lines for {schemas} schema lines"
