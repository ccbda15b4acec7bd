"""A plain install (`make install`, `pip install kafkacodec`) lacks the extras: a command that
needs one says which to install, exit status 2, never a traceback."""
import subprocess
import sys

import pytest

# run the command as if pyspark, pyarrow and pandas were not installed
WITHOUT_EXTRAS = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark", "pyarrow", "pandas"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
from kafkacodec.cli import main
main(sys.argv[1:], prog_name="kafkacodec")
"""


@pytest.mark.parametrize("command, extra", [(["export", "{logs}", "{out}"], "spark")])
def test_a_command_that_needs_an_extra_names_it(sample, tmp_path, command, extra):
    argv = [a.format(logs=sample, out=tmp_path / "out") for a in command]
    run = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *argv], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == \
        f"error: {command[0]} needs pyspark, which is not installed: pip install 'kafkacodec[{extra}]'"


def test_the_commands_of_a_plain_install_run_without_the_extras(sample):
    """What make run does with a plain install's command, but export: nothing of it needs an extra."""
    for argv in (["verify", str(sample)], ["describe", str(sample)], ["offsets", str(sample)],
                 ["find", str(sample), "--offset", "5"]):
        run = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *argv], capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0 and "Traceback" not in run.stderr, (argv, run.stderr)
