"""Whole-file writes: on a full or read-only disk the target stays as it was and no `.tmp` is
left; once they return they survive a loss of power (file flushed before the rename, directory
after it)."""
import errno
import textwrap

import pytest

from tests.support.disks import remount, tmpfs
from kafkacodec.storage.diskio.files import write_atomically, write_files_atomically
from tests.support.syscalls import trace


def test_a_full_disk_leaves_the_target_as_it_was_and_no_tmp(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        target = disk / "00000000000000000000.log"
        target.write_bytes(b"old")
        with pytest.raises(OSError) as err:
            write_atomically(target, bytes(100_000))
        assert err.value.errno == errno.ENOSPC
        assert sorted(p.name for p in disk.iterdir()) == [target.name]
        assert target.read_bytes() == b"old"
        write_atomically(target, bytes(10_000))  # the space the .tmp took is free again
        assert target.read_bytes() == bytes(10_000)


def test_files_written_together_change_none_when_one_cannot_be_written(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        log, idx = disk / "a.log", disk / "a.index"
        log.write_bytes(b"old log")
        with pytest.raises(OSError):
            write_files_atomically({log: bytes(20_000), idx: bytes(100_000)})
        assert sorted(p.name for p in disk.iterdir()) == ["a.log"] and log.read_bytes() == b"old log"


def test_a_read_only_file_system_refuses_and_leaves_nothing(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        target = disk / "cleaner-offset-checkpoint"
        target.write_text("0\n0\n")
        remount(disk, "ro")
        try:
            with pytest.raises(OSError) as err:
                write_atomically(target, "0\n1\nt 0 5\n")
            assert err.value.errno == errno.EROFS
        finally:
            remount(disk, "rw")
        assert sorted(p.name for p in disk.iterdir()) == [target.name] and target.read_text() == "0\n0\n"


WRITE = textwrap.dedent("""
    import os, sys
    from kafkacodec.storage.diskio.files import write_atomically
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
