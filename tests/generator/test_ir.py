"""The typed IR and the house rules of the generator: facts computed once per type, constants
shared with the runtime held equal to it, and no emitter reading back the text it wrote."""
import ast

from kafkacodec.generator.compile import load_program
from kafkacodec.generator.ir import IR, FixedRun, Single, SpanKind, ValueKind
from kafkacodec.generator.model import VARINT_MAX, VARINT_TABLE_LIMIT
from kafkacodec.generator.passes import run as run_passes
from kafkacodec.generator.problems import Problems
from kafkacodec.runtime import varint
from tests.support import ROOT

GENERATOR = ROOT / "generator"


def checked_ir():
    problems = Problems()
    program = load_program(ROOT / "schemas", problems)
    run_passes(program, problems)
    assert not problems.items
    return program, IR(program)


def type_named(program, name):
    return next(t for t in program.all_types() if t.name == name)


def test_shared_constants_are_the_runtimes():
    assert VARINT_MAX == {"zigzag32": varint.MAX_VARINT_BYTES, "zigzag64": varint.MAX_VARLONG_BYTES,
                          "uvarint32": varint.MAX_VARINT_BYTES}
    assert VARINT_TABLE_LIMIT == varint.TABLE_LIMIT == len(varint.SMALL_VARINTS)


def test_a_record_batch_s_facts():
    program, ir = checked_ir()
    batch = ir[type_named(program, "record_batch")]
    assert ir[type_named(program, "record_batch")] is batch  # made once
    assert isinstance(batch.ops[0], FixedRun) and batch.ops[0].width == 61
    assert [type(op) for op in batch.ops[1:]] == [Single]
    assert batch.ops[0].fmt == ">qiibIHiqqqhii"  # attributes are unsigned
    assert {s.kind for s in batch.spans} == {SpanKind.CHECKSUM, SpanKind.LENGTH}
    assert batch.read_marks == {"attributes", "partition_leader_epoch"}  # crc from attributes, length from the epoch
    assert [f.id for f in batch.pinned] == ["batch_length", "crc", "records_count"]
    assert [f.pin_bit for f in batch.pinned] == [1, 2, 4]
    record = ir[type_named(program, "record")]
    assert record.field("headers").count_source == "headers_count"
    assert record.field("key_length").value is ValueKind.VARINT
    assert record.field("length").value is ValueKind.VARINT and record.spans[0].varint_prefix
    assert record.write_marks == set()  # a varint prefix's span is measured from its reserved bytes


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield from ([base] if node.module else [base + alias.name for alias in node.names])


def test_the_generator_imports_neither_the_runtime_nor_generated_code():
    for path in GENERATOR.rglob("*.py"):
        for name in _imports(path):
            assert not name.startswith(("kafkacodec.runtime", "kafkacodec.generated")), (path, name)


def test_passes_and_the_ir_import_no_emitter():
    emitters = ("plans", "cython", "render", "docs", "svg")
    for module in ("passes.py", "ir.py", "shapes.py", "model.py", "program.py", "pyexpr.py"):
        for name in _imports(GENERATOR / module):
            assert not name.lstrip(".").startswith(emitters), (module, name)


def test_no_emitter_parses_or_pattern_matches_text():
    """The emitters and the IR hold no parser or regular expression to read code back; the
    schema's own text is parsed by source, build and expr, which come before the model."""
    emitting = [*GENERATOR.glob("plans/*.py"), *(GENERATOR / n for n in
                ("cython.py", "render.py", "ir.py", "shapes.py", "compile.py", "outputs.py"))]
    for path in emitting:
        imported = set(_imports(path))
        assert not imported & {"ast", "re", "tokenize"}, (path, imported & {"ast", "re", "tokenize"})
