"""The command line imports the layers below it inside each command (cli/commands/__init__.py says
why): `kafkacodec generate` runs while generated/ cannot be imported at all, and starting the
command line loads none of the codec, storage or pipeline layers."""
import subprocess
import sys

from tests.support import ROOT

REFUSE_GENERATED = """
import runpy, sys
from importlib.abc import MetaPathFinder

class Broken(MetaPathFinder):  # generated/ half rewritten: none of it imports
    def find_spec(self, name, path=None, target=None):
        if name == "kafkacodec.generated" or name.startswith("kafkacodec.generated."):
            raise ImportError(f"{name} is broken")

sys.meta_path.insert(0, Broken())
sys.argv = ["kafkacodec", *sys.argv[1:]]
runpy.run_module("kafkacodec", run_name="__main__")
"""


def test_generate_runs_while_generated_does_not_import(tmp_path):
    out = tmp_path / "generated"
    run = subprocess.run([sys.executable, "-c", REFUSE_GENERATED, "generate", "--schemas", str(ROOT / "schemas"),
                          "--out", str(out)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    committed = sorted(f.name for f in (ROOT / "generated").glob("*.py"))
    assert committed and sorted(f.name for f in out.glob("*.py")) == committed
    for name in committed:
        assert (out / name).read_text() == (ROOT / "generated" / name).read_text(), name


def test_the_refusal_above_is_real(tmp_path):
    """A command that needs the codecs fails under the same refusal, so the test above can fail."""
    run = subprocess.run([sys.executable, "-c", REFUSE_GENERATED, "sample", str(tmp_path / "logs")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode != 0 and "kafkacodec.generated" in run.stderr, run.stderr


def test_starting_the_command_line_loads_no_layer_below_it():
    """Nor the libraries its commands use (rich, the Spark extra's, the compiler's)."""
    probe = ("import sys\nfrom click.testing import CliRunner\nfrom kafkacodec.cli import main\n"
             "assert CliRunner().invoke(main, ['--help']).exit_code == 0\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('kafkacodec.') or\n"
             "                      m.partition('.')[0] in ('rich', 'pyspark', 'pyarrow', 'numpy', 'yaml', 'jinja2'))))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = run.stdout.split()
    assert "kafkacodec.cli.commands" in loaded and all(m.startswith("kafkacodec.cli") for m in loaded), loaded
