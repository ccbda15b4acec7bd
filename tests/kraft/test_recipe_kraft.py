"""docs/recipes/kraft.md as written: its commands run in order in an empty directory, and what its
steps say of the sample controller's metadata is what they print."""
import re
import shlex
import subprocess
import sys

from tests.support import ROOT

RECIPE = (ROOT / "docs" / "recipes" / "kraft.md").read_text()


def recipe_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", RECIPE, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_kraft_recipe_runs_and_says_what_its_commands_print(tmp_path):
    commands = recipe_commands()
    assert commands[0] == "kafkacodec sample --kraft-controller kraft" and len(commands) >= 8
    out = {}
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "kafkacodec", command
        run = subprocess.run([sys.executable, "-m", "kafkacodec", *argv[1:]], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (command, run.stderr)
        assert "warning" not in run.stderr, (command, run.stderr)
        out[command] = run.stdout

    def printed(*words: str) -> str:
        (command,) = [c for c in out if all(w in c.split() for w in words)]
        return out[command]

    assert "__cluster_metadata-0" in printed("verify") and "ok" in printed("verify")
    assert out["kafkacodec metadata kraft"].startswith("__cluster_metadata at offset 53,")
    # step 3: orders-0's ISR during the incident
    during = printed("--at-time", "2023-11-15T01:30:00Z")
    orders = during.split("  orders ", 1)[1].splitlines()
    assert re.match(r"\s+0 .*\breplicas 1,2,3\s+isr 1,3\s", orders[1]), orders[1]
    # step 4: left out at 01:24, taken back at 01:36; the broker's shutdown, fencing, registration
    history = printed("--history", "orders-0")
    assert re.search(r"2023-11-15T01:24:\S+\s+PARTITION_CHANGE_RECORD: isr \[1,2,3\] -> \[1,3\] \(left 2\);", history)
    assert re.search(r"2023-11-15T01:36:\S+\s+PARTITION_CHANGE_RECORD: isr \[1,3\] -> \[1,3,2\] \(joined 2\);", history)
    broker = printed("--history", "broker:2")
    assert re.search(r"2023-11-15T01:23:\S+\s+BROKER_REGISTRATION_CHANGE_RECORD: inControlledShutdown false -> true",
                     broker)
    assert re.search(r"2023-11-15T01:25:\S+\s+BROKER_REGISTRATION_CHANGE_RECORD: fenced false -> true", broker)
    assert re.search(r"2023-11-15T01:33:\S+\s+REGISTER_BROKER_RECORD: brokerEpoch", broker)
    # step 5: payments-0's leader moved from 2 to 1 over the hour
    assert "topics.payments.partitions.0.leader: 2 -> 1" in printed("--diff")
    # step 6: one JSON object at that offset
    import json
    state = json.loads(printed("--json"))
    assert state["offset"] == 34
    # step 7: Kafka's tool's lines, a metadata record decoded
    dump = printed("dump-log")
    assert dump.startswith("Dumping kraft/__cluster_metadata-0/00000000000000000043.log")
    assert 'payload: {"type":"REGISTER_BROKER_RECORD"' in dump
