"""Golden diagnostics: each schema in tests/schemas_err carries the problems it must produce in
its leading `# error LINE:COL: PATH: error: MESSAGE` comments, in order."""
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT, TESTS
from kafkacodec.generator.compile import compile_dir
from kafkacodec.generator.problems import CompileFailed

BROKEN = sorted((TESTS / "schemas_err").glob("*.ksy"))


def expected(path):
    return [line[len("# error "):].rstrip("\n") for line in path.read_text().splitlines()
            if line.startswith("# error ")]


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_schema_reports_exactly_its_problems(path, tmp_path):
    shutil.copy(path, tmp_path / path.name)
    with pytest.raises(CompileFailed) as failed:
        compile_dir(tmp_path)
    got = [str(p).split(f"{path.name}:", 1)[1] for p in failed.value.problems]
    assert got == expected(path)
    assert expected(path), "a golden schema must expect at least one problem"


def test_one_run_reports_the_problems_of_every_file(tmp_path):
    for path in BROKEN:
        shutil.copy(path, tmp_path / path.name)
    with pytest.raises(CompileFailed) as failed:
        compile_dir(tmp_path)
    files = {p.file.rsplit("/", 1)[-1] for p in failed.value.problems}
    assert files == {path.name for path in BROKEN}


def test_command_prints_problems_and_exits_non_zero(tmp_path):
    shutil.copy(TESTS / "schemas_err" / "unknown_names.ksy", tmp_path)
    run = subprocess.run([sys.executable, "-m", "kafkacodec", "generate", "--schemas", str(tmp_path),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert lines[0].endswith("unknown_names.ksy:14:11: /seq/2/size: error: unknown name 'ken_length' in "
                             "type 'unknown_names' (at character 1 of the expression)")
    assert lines[-1] == "3 problems; nothing generated"
    assert not (tmp_path / "out").exists()
