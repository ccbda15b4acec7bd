"""tests/incident.sh, the incident flow end to end with the installed commands (it checks each
step's output itself and exits non-zero at the first that is wrong)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import TESTS

pytestmark = pytest.mark.spark


def test_the_incident_flow_replays(tmp_path):
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    run = subprocess.run(["bash", str(TESTS / "incident.sh"), str(tmp_path / "work")], capture_output=True,
                         text=True, env=env, timeout=900)
    assert run.returncode == 0 and run.stdout.strip().endswith("incident replayed"), \
        run.stdout[-3000:] + run.stderr[-3000:]
