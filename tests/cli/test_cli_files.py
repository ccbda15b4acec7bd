"""Files the commands cannot use (FIFOs, devices, directories, missing or unreadable files, a full
or read-only file system) give `error: ...` naming the file and exit status 2, promptly: never a
hang, a traceback or unbounded reading. One place in the CLI turns what commands do not handle
into messages."""
import errno
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kafkacodec.cli import main
from kafkacodec.runtime.errors import InvalidValueError
from kafkacodec.storage.indexes import index
from kafkacodec.storage.diskio.safeio import FileProblem, os_problem
from kafkacodec.storage.change.writer import PartitionWriter

ROOT = Path(__file__).resolve().parents[2]


# root without the capabilities that let it pass over file modes: bound by them as any user is,
# while it still reaches the interpreter and the package wherever they are (a clone in a directory
# only its owner may enter, as `mktemp -d` makes them, is out of any other user's reach)
BOUND_BY_MODES = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def kafkacodec(*args, bound_by_modes: bool = False, cwd=None, python: str = sys.executable):
    """The command in a process of its own, with a time limit: a hang fails the test."""
    command = [python, "-m", "kafkacodec", *map(str, args)]
    if bound_by_modes:
        command = BOUND_BY_MODES + command
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=cwd or ROOT)


def partition(tmp_path: Path, name: str = "t-0") -> Path:
    part = tmp_path / name
    with PartitionWriter(part, index_interval_bytes=300) as w:
        for i in range(20):
            w.append([{"key": b"k%d" % i, "value": b"v" * 80, "timestamp": 1_000 + i}])
    return part


def unusable(tmp_path: Path, kind: str) -> Path:
    """A .log path that is not a usable segment file."""
    path = tmp_path / "odd" / "00000000000000000000.log"
    path.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes to it: a blocking open() would wait for ever
    elif kind == "device-link":
        path.symlink_to("/dev/zero")  # never ends: reading it whole would grow without bound
    elif kind == "directory":
        path.mkdir()
    return path  # "missing": nothing there


COMMANDS = {
    "dump": lambda p, out: ["dump", p],
    "dump-json": lambda p, out: ["dump", "--json", p],
    "convert": lambda p, out: ["convert", p, out, "--magic", "1"],
    "reindex": lambda p, out: ["reindex", p],
    "reindex-check": lambda p, out: ["reindex", "--check", p],
    "verify": lambda p, out: ["verify", p],
    "recover": lambda p, out: ["recover", p],
    "clean": lambda p, out: ["clean", p, "--policy", "delete"],
}


@pytest.mark.parametrize("kind", ["fifo", "device-link", "directory", "missing"])
@pytest.mark.parametrize("command", COMMANDS)
def test_unusable_files_are_refused_naming_the_file(tmp_path, command, kind):
    if kind == "directory" and command in ("verify", "recover", "clean", "reindex", "reindex-check"):
        pytest.skip("a directory is a log dir to these (an empty one holds nothing to check); "
                    "see the partition test below for one in place of a segment file")
    path = unusable(tmp_path, kind)
    run = kafkacodec(*COMMANDS[command](path, tmp_path / "out.log"))
    assert run.returncode == 2, (run.returncode, run.stdout[-500:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr and path.name in run.stderr
    assert not (tmp_path / "out.log").exists()


@pytest.mark.parametrize("command", ["verify", "recover", "clean", "reindex"])
@pytest.mark.parametrize("kind", ["fifo", "device-link"])
def test_a_partition_holding_an_unusable_segment_file_is_refused(tmp_path, command, kind):
    part = partition(tmp_path)
    odd = part / "00000000000000000100.log"
    shutil.move(unusable(tmp_path, kind), odd) if kind != "fifo" else os.mkfifo(odd)
    before = sorted(p.name for p in part.iterdir())
    run = kafkacodec(*COMMANDS[command](part, None))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert f"error: {odd}: is a" in run.stderr
    assert sorted(p.name for p in part.iterdir()) == before


@pytest.mark.parametrize("command", ["verify", "recover", "clean", "reindex"])
def test_a_directory_named_like_a_segment_is_passed_over_as_kafka_does(tmp_path, command):
    part = partition(tmp_path)
    (part / "00000000000000000100.log").mkdir()
    (part / "00000000000000000100.log" / "inside").write_bytes(b"x")
    plain = partition(tmp_path / "plain")
    ran = [kafkacodec(*COMMANDS[command](p, None)) for p in (part, plain)]
    assert ran[0].returncode == ran[1].returncode == 0, ran[0].stderr[-2000:]
    now = re.compile(r"\b1\d{12}\b")  # clean's report names the time it ran
    assert now.sub("", ran[0].stdout.replace(str(part), str(plain))) == now.sub("", ran[1].stdout)
    assert (part / "00000000000000000100.log" / "inside").read_bytes() == b"x"


@pytest.mark.parametrize("command", ["verify", "recover", "clean", "convert", "reindex"])
def test_a_device_given_directly_is_refused(tmp_path, command):
    run = kafkacodec(*COMMANDS[command]("/dev/zero", tmp_path / "out.log"))
    assert run.returncode == 2 and "error: /dev/zero: is a character device" in run.stderr, run.stderr[-2000:]


def test_dump_goes_on_with_the_other_files(tmp_path):
    part = partition(tmp_path)
    fifo = unusable(tmp_path, "fifo")
    run = kafkacodec("dump", fifo, part / "00000000000000000000.log")
    assert run.returncode == 2 and run.stderr.strip() == f"error: {fifo}: is a FIFO, not a regular file"
    assert f"Dumping {part / '00000000000000000000.log'}" in run.stdout


def _can_drop_the_override() -> bool:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    return subprocess.run(BOUND_BY_MODES + ["true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_drop_the_override(), reason="needs root and setpriv")
@pytest.mark.parametrize("command", ["verify", "recover", "clean"])
def test_permission_denied_is_an_error_naming_the_file(tmp_path, command):
    """Root reads whatever the modes say: the command runs as root bound by the modes, on a segment
    nobody may read, in a log dir nobody may write. It is started as from a clone in a directory
    other users cannot enter (the interpreter reached through one): run as another user, it could
    not import kafkacodec from there."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "env").symlink_to(sys.prefix, target_is_directory=True)
    python = private / "env" / Path(sys.executable).relative_to(sys.prefix) \
        if Path(sys.executable).is_relative_to(sys.prefix) else Path(sys.executable)
    top = tmp_path / "logs"
    part = partition(top)
    log = part / "00000000000000000000.log"
    log.chmod(0)
    top.chmod(0o555)
    try:
        run = kafkacodec(*COMMANDS[command](part, None), bound_by_modes=True, cwd=private, python=str(python))
    finally:
        top.chmod(0o755)
    # recover changes files: it needs the log dir's lock first, which may not be created there
    denied = top / ".kafkacodec.lock" if command == "recover" else log
    assert run.returncode == 2 and run.stderr.strip() == f"error: {denied}: permission denied", run.stderr[-2000:]


def test_operating_system_errors_are_worded_for_an_operator():
    for number, words in ((errno.EACCES, "permission denied"), (errno.ENOSPC, "no space left on the device"),
                          (errno.EROFS, "the file system is read-only"), (errno.ENOENT, "no such file")):
        problem = os_problem("/x/y.log", OSError(number, os.strerror(number)))
        assert isinstance(problem, FileProblem) and str(problem).startswith(f"/x/y.log: {words}")


def test_the_cli_turns_what_a_command_leaves_into_error_messages():
    raised = {"file": FileProblem("a.log", "is a FIFO, not a regular file"),
              "damage": InvalidValueError("bad", 12, "log/size", "b.log"),
              "os": OSError(errno.ENOSPC, "No space left on device", "c.log.tmp"),
              "bare-os": OSError(errno.EIO, "Input/output error")}

    @click.command("boom")
    @click.argument("what")
    def boom(what):
        raise raised[what]

    main.add_command(boom)
    try:
        runner = CliRunner()
        results = {what: runner.invoke(main, ["boom", what]) for what in raised}
    finally:
        del main.commands["boom"]
    assert {w: (r.exit_code, r.stderr.strip()) for w, r in results.items()} == {
        "file": (2, "error: a.log: is a FIFO, not a regular file"),
        "damage": (1, "error: b.log: byte 12: log/size: bad"),
        "os": (2, "error: c.log.tmp: no space left on the device"),
        "bare-os": (2, "error: Input/output error")}


def test_reindex_takes_a_segment_whose_name_is_not_an_offset(tmp_path):
    """Its base offset comes from its first batch; the indexes written are those of its original."""
    part = tmp_path / "t-0"
    with PartitionWriter(part, segment_bytes=3000, index_interval_bytes=300) as w:
        for i in range(40):
            w.append([{"value": b"v" * 100, "timestamp": 10 + i}])
    second = sorted(part.glob("*.log"))[1]
    base = int(second.name.split(".")[0])
    assert base > 0
    renamed = tmp_path / "suspect.log"
    shutil.copy(second, renamed)
    run = kafkacodec("reindex", "--index-interval-bytes", "300", renamed)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    for suffix, read in ((".index", index.read_offset_index), (".timeindex", index.read_time_index)):
        got = read((tmp_path / f"suspect{suffix}").read_bytes(), base)
        assert got and got == read(second.with_suffix(suffix).read_bytes(), base)
    assert kafkacodec("reindex", "--check", "--index-interval-bytes", "300", renamed).returncode == 0


@pytest.fixture
def small_mount(tmp_path):
    """A tmpfs of 1 MiB, root only; unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount")
    mount = tmp_path / "mnt"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", "-l", str(mount)])


def test_reindex_on_a_full_file_system_is_an_error_leaving_nothing_behind(small_mount):
    part = partition(small_mount)
    log = part / "00000000000000000000.log"
    for suffix in (".index", ".timeindex"):
        log.with_suffix(suffix).unlink()
    filler = small_mount / "filler"
    with open(filler, "wb", buffering=0) as f:  # every block left taken
        try:
            while True:
                f.write(b"\1" * 4096)
        except OSError:
            pass
    before = sorted(p.name for p in part.iterdir())
    run = kafkacodec("reindex", "--index-interval-bytes", "300", log)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "no space left on the device" in run.stderr and str(log.with_suffix(".index")) in run.stderr
    assert sorted(p.name for p in part.iterdir()) == before  # no .tmp left behind


def test_reindex_on_a_read_only_file_system_is_an_error(small_mount):
    part = partition(small_mount)
    log = part / "00000000000000000000.log"
    want = {p.name: p.read_bytes() for p in part.iterdir()}
    log.with_suffix(".index").write_bytes(b"")  # stale: reindex has something to write
    want[log.with_suffix(".index").name] = b""
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_mount)]).returncode == 0
    run = kafkacodec("reindex", "--index-interval-bytes", "300", log)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    # reindex writes: it takes the log dir's lock first, which a read-only file system refuses
    assert f"error: {small_mount / '.kafkacodec.lock'}: the file system is read-only" in run.stderr
    assert {p.name: p.read_bytes() for p in part.iterdir()} == want
