"""What the tests share: paths, damage, fault injection, file-system faults, system-call traces, a standalone Spark cluster, and drivers of other implementations."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
