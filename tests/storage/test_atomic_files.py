"""Whole-file writes: on a full or read-only disk the target stays as it was and no `.tmp` is
left; once they return they survive a loss of power (file flushed before the rename, directory
after it). Every function of the durable-file API reports a failure of the operating system as
a FileProblem naming the file, never as an OSError."""
import inspect
import os
import textwrap

import pytest

from tests.support.disks import remount, tmpfs
from kafkacodec.storage.diskio import durable
from kafkacodec.storage.diskio.durable import write_atomically, write_files_atomically
from kafkacodec.storage.diskio.safeio import FileProblem
from tests.support.syscalls import trace


def test_a_full_disk_leaves_the_target_as_it_was_and_no_tmp(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        target = disk / "00000000000000000000.log"
        target.write_bytes(b"old")
        with pytest.raises(FileProblem) as err:
            write_atomically(target, bytes(100_000))
        assert (err.value.file, err.value.message) == (str(target), "no space left on the device")
        assert sorted(p.name for p in disk.iterdir()) == [target.name]
        assert target.read_bytes() == b"old"
        write_atomically(target, bytes(10_000))  # the space the .tmp took is free again
        assert target.read_bytes() == bytes(10_000)


def test_files_written_together_change_none_when_one_cannot_be_written(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        log, idx = disk / "a.log", disk / "a.index"
        log.write_bytes(b"old log")
        with pytest.raises(FileProblem) as err:
            write_files_atomically({log: bytes(20_000), idx: bytes(100_000)})
        assert (err.value.file, err.value.message) == (str(idx), "no space left on the device")
        assert sorted(p.name for p in disk.iterdir()) == ["a.log"] and log.read_bytes() == b"old log"


def test_a_read_only_file_system_refuses_and_leaves_nothing(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        target = disk / "cleaner-offset-checkpoint"
        target.write_text("0\n0\n")
        remount(disk, "ro")
        try:
            with pytest.raises(FileProblem) as err:
                write_atomically(target, "0\n1\nt 0 5\n")
            assert (err.value.file, err.value.message) == (str(target), "the file system is read-only")
        finally:
            remount(disk, "rw")
        assert sorted(p.name for p in disk.iterdir()) == [target.name] and target.read_text() == "0\n0\n"


WRITE = textwrap.dedent("""
    import os, sys
    from kafkacodec.storage.diskio.durable import write_atomically
    write_atomically(sys.argv[1], b"data")
    os.access("/mark-done", os.F_OK)
    write_atomically(sys.argv[1], b"scratch", durable=False)
""")


def test_the_data_is_flushed_before_the_rename_and_the_directory_after_it(tmp_path):
    target = tmp_path / "f"
    events = trace(WRITE, str(target), cwd=tmp_path)
    tmp = f"{target}.tmp"
    durable = events[:events.index(("mark", "done"))]
    order = [e for e in durable if e in (("sync", tmp), ("rename", tmp, str(target)), ("sync", str(tmp_path)))]
    assert order == [("sync", tmp), ("rename", tmp, str(target)), ("sync", str(tmp_path))]
    scratch = events[events.index(("mark", "done")):]
    assert ("rename", tmp, str(target)) in scratch and not [e for e in scratch if e[0] == "sync"]
    assert target.read_bytes() == b"scratch"


NEVER_FAIL = {"tmp_path_of", "remove_quietly"}  # a name computed; a removal whose failure is not the one to report


def test_every_function_of_the_api_raises_a_file_problem_naming_the_file(tmp_path):
    """A failure of the operating system in any public function is a FileProblem naming the file
    at fault (never an OSError, which callers catching FileProblem would let through)."""
    gone = tmp_path / "gone"  # a directory that does not exist
    existing = tmp_path / "existing"
    existing.write_bytes(b"x")
    with tmpfs(tmp_path / "disk", "64k") as disk:
        (disk / "tree").mkdir()
        (disk / "tree" / "a.log").write_bytes(b"a")
        (disk / "f").write_bytes(b"f")
        remount(disk, "ro")
        try:
            fd = os.open(existing, os.O_RDONLY)  # a write to it fails
            try:
                cases = {
                    "fsync_file": (lambda: durable.fsync_file(gone / "f"), gone / "f"),
                    "fsync_dir": (lambda: durable.fsync_dir(gone), gone),
                    "fsync_tree": (lambda: durable.fsync_tree(gone), gone),  # not passed over as empty
                    "write_fully": (lambda: durable.write_fully(fd, b"data", existing), existing),
                    "write_new_file": (lambda: durable.write_new_file(gone / "f.tmp", b"d", True, target=gone / "f"),
                                       gone / "f"),
                    "write_atomically": (lambda: durable.write_atomically(disk / "f", b"new"), disk / "f"),
                    "write_files_atomically": (lambda: durable.write_files_atomically({gone / "a": b"", gone / "b": ""}),
                                               gone / "a"),
                    "create_kept": (lambda: durable.create_kept(disk / "kept", b"bytes"), disk / "kept"),
                    "rename_durably": (lambda: durable.rename_durably(disk / "f", disk / "g"), disk / "f"),
                    "truncate_durably": (lambda: durable.truncate_durably(disk / "f", 0), disk / "f"),
                    "unlink_durably": (lambda: durable.unlink_durably(disk / "f"), disk / "f"),
                    "remove_tree": (lambda: durable.remove_tree(disk / "tree"), disk / "tree" / "a.log"),
                }
                public = {name for name, f in inspect.getmembers(durable, inspect.isfunction)
                          if f.__module__ == durable.__name__ and not name.startswith("_")}
                assert public == set(cases) | NEVER_FAIL  # a new function gets a case here
                for name, (call, named) in cases.items():
                    with pytest.raises(FileProblem) as err:
                        call()
                    assert err.value.file == str(named), name
                    assert err.value.message in ("no such file or directory", "the file system is read-only",
                                                 "Bad file descriptor"), (name, err.value.message)
            finally:
                os.close(fd)
        finally:
            remount(disk, "rw")
        assert sorted(p.name for p in disk.iterdir()) == ["f", "tree"] and (disk / "f").read_bytes() == b"f"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk", "existing"]
