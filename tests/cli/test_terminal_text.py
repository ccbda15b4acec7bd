"""Names from Kafka's files reach the terminal as text, not as commands to it: the escaping helper
(kafkacodec.cli.commands.terminal.shown) and `metadata`'s text output over a metadata log whose
topic, config and broker names hold carriage returns, escape sequences and newlines."""
import subprocess
import sys

from hypothesis import given, strategies as st

from kafkacodec.cli.commands.terminal import shown
from kafkacodec.codec.records import Record, write_batch
from kafkacodec.storage.kraft.records import pack
from kafkacodec.storage.samples.controller import T0, MINUTE, config, moved, partition, rec, register, uuid

ACTED_ON = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0x202E, 0x2066, 0x200B, 0xFEFF]}


def undone(text: str) -> str:
    """The text an escaped one stands for, read back as Python reads its escapes."""
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_escaped_text_holds_nothing_a_terminal_acts_on_and_reads_back_to_itself(text):
    out = shown(text)
    assert not ACTED_ON & set(out) and not any(0xD800 <= ord(c) <= 0xDFFF for c in out)
    assert undone(out) == text


def test_plain_names_are_left_as_they_are():
    for text in ("orders", "payments-0", "User:billing", "café", "日本語", "a.b_c-d", ""):
        assert shown(text) == text
    assert shown("a\\b") == "a\\\\b" and shown("\r\n\t\x1b\x9b\u202e") == "\\r\\n\\t\\x1b\\x9b\\u202e"


EVIL = "evil\x1b]0;owned\x07\rname\nforged line"
SHOWN = "evil\\x1b]0;owned\\x07\\rname\\nforged line"


def write_log(root):
    batches = [[register(1, 10)],
               [rec("TOPIC_RECORD", name=EVIL, topicId=uuid(1)), partition(1, 0, [1]),
                config(2, EVIL, "retention.ms", "1\x1b[31m"), rec("CLEAR_ELR_RECORD", topicName="gone\r")],
               [moved(1, 0, isr=[])]]
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    out, offset = [], 0
    for i, records in enumerate(batches):
        out.append(write_batch([Record(value=pack(r), timestamp=T0 + i * MINUTE) for r in records],
                               base_offset=offset))
        offset += len(records)
    (part / f"{0:020d}.log").write_bytes(b"".join(out))


def cli(*args):
    """The command's run, its output decoded as it was written (text mode would turn \\r into \\n)."""
    run = subprocess.run([sys.executable, "-m", "kafkacodec", *args], capture_output=True, timeout=120)
    run.stdout, run.stderr = (out.decode("utf-8", "surrogateescape") for out in (run.stdout, run.stderr))
    return run


def test_metadata_text_escapes_names_in_the_state_the_diff_and_the_history(tmp_path):
    write_log(tmp_path)
    runs = {"state": cli("metadata", str(tmp_path)), "diff": cli("metadata", str(tmp_path), "--diff", "2", "5"),
            "history": cli("metadata", str(tmp_path), "--history", "topic:" + EVIL)}
    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr)
        assert not {"\x1b", "\r", "\x07"} & set(run.stdout + run.stderr), name
        assert not any(line.startswith("forged line") for line in run.stdout.splitlines()), name
    state = runs["state"].stdout
    assert f"  {SHOWN}  id " in state and f"TOPIC {SHOWN}: " in state
    assert f"topics.{SHOWN}.partitions.0.isr: [1] -> []" in runs["diff"].stdout
    as_json = "evil\\u001b]0;owned\\u0007\\rname\\nforged line"  # a value, written as ASCII JSON
    assert as_json in runs["history"].stdout and as_json in runs["diff"].stdout
    assert "retention.ms=1\\x1b[31m" in state and "Unable to clear elr for topic with name gone\\r" in state
    assert "isr [1] -> []" in runs["history"].stdout
