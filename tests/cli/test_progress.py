"""The progress display of long commands: drawn on stderr when it is a terminal, absent when it is
not, and for dump absent while stdout is the terminal too (its lines show the progress there)."""
import os
import pty
import shutil
import subprocess
import sys


def stderr_on_terminal(args, stdout_terminal=False):
    """(exit status, what reached the terminal on stderr) for `kafkacodec ARGS`, stderr a pseudo-terminal."""
    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm", COLUMNS="100")
    env.pop("NO_COLOR", None)
    run = subprocess.Popen([sys.executable, "-m", "kafkacodec", *map(str, args)], stdin=subprocess.DEVNULL,
                           stdout=slave if stdout_terminal else subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end closed: the command is done
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return run.wait(), seen.decode("utf-8", "replace")


def commands(sample, tmp):
    log = sample / "clicks-1" / "00000000000000000000.log"
    copy = tmp / "copy"
    shutil.copytree(sample, copy)
    return {
        "verifying": ["verify", sample],
        "reading": ["describe", sample],
        "indexing": ["reindex", copy],
        "checking": ["recover", "--dry-run", copy],
        "cleaning": ["clean", sample],
        "converting": ["convert", "--magic", "1", log, tmp / "out.log"],
        "dumping": ["dump", "--deep-iteration", log],
    }


def test_every_long_command_shows_progress_on_a_terminal(sample, tmp_path):
    for what, args in commands(sample, tmp_path).items():
        status, seen = stderr_on_terminal(args)
        assert status == 0, (args, seen)
        assert what in seen and "\x1b[" in seen, (args, seen)  # the bar, drawn with terminal controls


def test_no_progress_when_stderr_is_not_a_terminal(sample, tmp_path):
    for what, args in commands(sample, tmp_path).items():
        run = subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)
        assert run.returncode == 0, (args, run.stderr)
        assert what not in run.stderr and "\x1b[" not in run.stderr, (args, run.stderr)


def test_dump_shows_no_bar_between_its_own_lines(sample):
    status, seen = stderr_on_terminal(["dump", sample / "clicks-1" / "00000000000000000000.log"], stdout_terminal=True)
    assert status == 0 and "Dumping" in seen and "dumping" not in seen
