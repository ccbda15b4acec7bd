"""The compiler as a tool: deterministic output, the freshness check, the edit-regenerate loop,
and generality (a schema with nothing of Kafka in it)."""
import hashlib
import importlib.util
import shutil
import struct
import subprocess
import sys
import zlib

import pytest

from tests.support import ROOT, TESTS
from kafkacodec.generator.compile import compile_dir


def run_kc(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def checkout(tmp_path):
    """A copy of schemas/ and generated/ to edit."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    shutil.copytree(ROOT / "generated", tmp_path / "generated")
    return tmp_path


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_output_is_deterministic_and_independent_of_location(checkout):
    first = compile_dir(ROOT / "schemas")
    assert compile_dir(ROOT / "schemas") == first
    assert compile_dir(checkout / "schemas") == first


def test_committed_code_is_fresh():
    run = run_kc("generate", "--check")
    assert run.returncode == 0, run.stdout + run.stderr


def test_check_shows_a_diff_and_the_fix_while_stale(checkout):
    schema = checkout / "schemas" / "record_batch.ksy"
    schema.write_text(schema.read_text().replace(
        "doc: Epoch of that producer id; -1 for none.", "doc: Epoch of that producer id (edited); -1 for none."))
    args = ("--schemas", str(checkout / "schemas"), "--out", str(checkout / "generated"))
    stale = run_kc("generate", "--check", *args)
    assert stale.returncode == 1
    assert "+++ b/generated/record_batch.py" in stale.stdout and "(edited)" in stale.stdout
    assert "make generate" in stale.stderr
    before = {p.name: p.read_text() for p in (checkout / "generated").glob("*.py")}
    wrote = run_kc("generate", *args)
    assert wrote.returncode == 0 and "record_batch.py" in wrote.stdout
    after = {p.name: p.read_text() for p in (checkout / "generated").glob("*.py")}
    assert {n for n in after if after[n] != before[n]} == {"record_batch.py"}
    changed = [(a, b) for a, b in zip(before["record_batch.py"].splitlines(), after["record_batch.py"].splitlines())
               if a != b]
    # the schema's hash in the header, the docstring line, and the hash of the compiled readers'
    # source, whose header names the schema's hash too
    assert len(changed) == 3 and "sha256" in changed[0][1] and "(edited)" in changed[1][1]
    assert "_attach_compiled(" in changed[2][1]
    pyx = (checkout / "generated" / "_c_record_batch.pyx").read_text()
    assert hashlib.sha256(pyx.encode()).hexdigest() in changed[2][1]
    assert run_kc("generate", "--check", *args).returncode == 0


def test_rename_a_field_and_add_an_enum_value(checkout):
    schema = checkout / "schemas" / "record_batch.ksy"
    text = schema.read_text().replace("id: producer_epoch", "id: producer_generation")
    text = text.replace("      id: zstd\n      doc: Zstandard (Kafka 2.1 and later).",
                        "      id: zstd\n      doc: Zstandard (Kafka 2.1 and later).\n    7:\n      id: future_codec")
    schema.write_text(text)
    assert run_kc("generate", "--schemas", str(checkout / "schemas"), "--out", str(checkout / "generated")).returncode == 0
    module = load_module(checkout / "generated" / "record_batch.py", "edited_record_batch")
    assert module.RecordBatch.CompressionType.future_codec == 7
    b = module.RecordBatch(producer_generation=9, records=module.RecordBatch.Records(
        items=[module.RecordBatch.Record(offset_delta=0, value=b"v")]))
    again = module.RecordBatch.from_bytes(b.to_bytes())
    assert again.producer_generation == 9 and not hasattr(again, "producer_epoch")


def test_stale_generated_files_are_deleted(checkout):
    (checkout / "generated" / "removed_schema.py").write_text("# left over\n")
    args = ("--schemas", str(checkout / "schemas"), "--out", str(checkout / "generated"))
    assert "removed_schema.py" in run_kc("generate", "--check", *args).stdout
    run_kc("generate", *args)
    assert not (checkout / "generated" / "removed_schema.py").exists()


def test_a_schema_with_nothing_of_kafka(tmp_path):
    outputs = compile_dir(TESTS / "schemas_toy")
    (tmp_path / "toy_archive.py").write_text(outputs["toy_archive.py"])
    toy = load_module(tmp_path / "toy_archive.py", "toy_archive")
    archive = toy.ToyArchive(files=[toy.ToyArchive.File(name="a.txt", kind=0, body=b"hello"),
                                    toy.ToyArchive.File(name="b.bin", kind=1, body=b"\x00\x01")])
    data = archive.to_bytes()
    # the same bytes built by hand: little-endian count and checksum, big-endian body size
    def entry(name, kind, body):
        rest = bytes([len(name)]) + name + bytes([kind]) + struct.pack(">I", len(body)) + body
        return struct.pack("<I", zlib.crc32(rest)) + rest
    assert data == b"TOY1" + struct.pack("<H", 2) + entry(b"a.txt", 0, b"hello") + entry(b"b.bin", 1, b"\x00\x01")
    again = toy.ToyArchive.from_bytes(data)
    assert [(f.name, f.kind, f.is_text, f.body) for f in again.files] == [
        ("a.txt", toy.ToyArchive.Kind.text, True, b"hello"), ("b.bin", toy.ToyArchive.Kind.binary, False, b"\x00\x01")]
    assert again == archive and again.size() == len(data)
    with pytest.raises(Exception, match="expected b'TOY1'"):
        toy.ToyArchive.from_bytes(b"TOY2" + data[4:])
