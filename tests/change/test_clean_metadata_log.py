"""clean and the KRaft metadata log: Kafka's log cleaner and retention never touch
__cluster_metadata (its controller deletes only the segments its snapshots cover). Compacted,
every one of its keyless records went; past retention.ms, the records after the latest snapshot
went with their segment, and with them the cluster's state since."""
import filecmp
import os
import subprocess
import sys



def kafkacodec(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, COLUMNS="200"))


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b, ignore=[".kafkacodec.lock"])
    return not (cmp.left_only or cmp.right_only or cmp.diff_files) and all(
        same_tree(a / d, b / d) for d in cmp.common_dirs)


def test_clean_passes_over_the_metadata_log_and_says_so(tmp_path):
    source, logs = tmp_path / "controller", tmp_path / "logs"
    assert kafkacodec("sample", "--kraft-controller", source).returncode == 0
    assert kafkacodec("sample", "--kraft-controller", logs).returncode == 0
    part = logs / "__cluster_metadata-0"
    for policy in ("compact", "delete", "compact,delete"):
        run = kafkacodec("clean", logs, "--policy", policy, "--retention-ms", "1", "--min-cleanable-dirty-ratio", "0",
                         "--now", "1900000000000", "--apply", "--in-place")
        assert run.returncode == 0, run.stderr
        assert f"passed over: {part} (the KRaft metadata log is not cleaned" in run.stdout
        assert "removed: 0 bytes, 0 records" in run.stdout and same_tree(source, logs), policy
    out = tmp_path / "out"
    run = kafkacodec("clean", logs, "--policy", "compact", "--now", "1900000000000", "--apply", "--out", out)
    assert run.returncode == 0 and same_tree(part, out / "__cluster_metadata-0"), run.stdout + run.stderr
    assert kafkacodec("verify", out).returncode == 0
