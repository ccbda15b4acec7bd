"""The typed IR and the house rules of the generator: facts computed once per type and emitted as
generated facts (the fixed layout, checked here against real bytes), constants shared with the
runtime held equal to it, and no emitter reading back the text it wrote."""
import ast
import struct

from kafkacodec.generated.legacy_log_entry import LegacyLogEntry
from kafkacodec.generated.record_batch import RecordBatch
from kafkacodec.generator.compile import load_program
from kafkacodec.generator.ir import IR, FixedRun, Single, SpanKind, ValueKind
from kafkacodec.generator.model import VARINT_MAX, VARINT_TABLE_LIMIT
from kafkacodec.generator.passes import run as run_passes
from kafkacodec.generator.problems import Problems
from kafkacodec.runtime import varint
from kafkacodec.storage.samples.broker import write_sample
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


def _unsigned(data: bytes, offset: int, width: int) -> int:
    return int.from_bytes(data[offset:offset + width], "big")


def test_the_generated_layout_finds_each_field_in_real_bytes(tmp_path):
    write_sample(tmp_path)
    checked = 0
    for log in sorted(tmp_path.rglob("*.log")):
        data = log.read_bytes()
        if len(data) < 61 or data[16] != 2:
            continue  # empty, or a log of magic 0 and 1 messages
        pos = 0
        while pos < len(data):
            batch, end = RecordBatch._read(data, pos, len(data))
            for name, (offset, width) in RecordBatch.LAYOUT.items():
                assert _unsigned(data, pos + offset, width) == getattr(batch, name) % (1 << (8 * width)), name
            pos, checked = end, checked + 1
    assert checked > 10
    assert RecordBatch.LAYOUT["records_count"] == (57, 4)  # the records follow at 61


def test_a_legacy_message_s_layout_in_real_bytes():
    entry = LegacyLogEntry(offset=7, message=LegacyLogEntry.LegacyMessage(
        magic=1, attributes=0, timestamp=1_700_000_000_000, key=b"k", value=b"v"))
    data = bytes(entry.to_bytes())
    read = LegacyLogEntry.from_bytes(data)
    for name, (offset, width) in LegacyLogEntry.LAYOUT.items():
        assert _unsigned(data, offset, width) == getattr(read, name) % (1 << (8 * width))
    at = LegacyLogEntry.LAYOUT["message_size"][0] + 4
    for name, (offset, width) in LegacyLogEntry.LegacyMessage.LAYOUT.items():
        assert _unsigned(data, at + offset, width) == getattr(read.message, name) % (1 << (8 * width))
    assert struct.unpack_from(">b", data, at + LegacyLogEntry.LegacyMessage.LAYOUT["magic"][0]) == (1,)


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
    emitters = ("plans", "compiled", "flat", "render", "docs", "svg")
    for module in ("passes.py", "ir.py", "shapes.py", "model.py", "program.py", "pyexpr.py"):
        for name in _imports(GENERATOR / module):
            assert not name.lstrip(".").startswith(emitters), (module, name)


def test_no_emitter_parses_or_pattern_matches_text():
    """The emitters and the IR hold no parser or regular expression to read code back; the
    schema's own text is parsed by source, build and expr, which come before the model."""
    emitting = [*GENERATOR.glob("plans/*.py"), *GENERATOR.glob("compiled/*.py"), *(GENERATOR / n for n in
                ("flat.py", "render.py", "ir.py", "shapes.py", "compile.py", "outputs.py"))]
    for path in emitting:
        imported = set(_imports(path))
        assert not imported & {"ast", "re", "tokenize"}, (path, imported & {"ast", "re", "tokenize"})
