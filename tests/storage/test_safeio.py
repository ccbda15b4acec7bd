"""Opening files: regular files only, failures as typed errors naming the file."""
import os

import pytest

from kafkacodec.storage.diskio.safeio import FileProblem, check_regular, open_regular, read_at, read_bounded


def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path):
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)  # nothing ever opens its other end: a blocking open() would never return
    with pytest.raises(FileProblem, match="is a FIFO") as err:
        open_regular(fifo)
    assert err.value.file == str(fifo)


def test_directories_and_devices_are_refused(tmp_path):
    with pytest.raises(FileProblem, match="is a directory"):
        open_regular(tmp_path)
    with pytest.raises(FileProblem, match="is a character device"):
        check_regular("/dev/zero")


def test_missing_and_unreadable_files_name_the_file(tmp_path):
    with pytest.raises(FileProblem, match="no such file") as err:
        open_regular(tmp_path / "gone.log")
    assert "gone.log" in str(err.value)


def test_reads_are_bounded_by_what_the_file_can_hold(tmp_path):
    path = tmp_path / "x.index"
    path.write_bytes(b"\x01" * 64)
    assert read_bounded(path, 64, "offset index") == b"\x01" * 64
    with pytest.raises(FileProblem, match="larger than the 63 bytes"):
        read_bounded(path, 63, "offset index")
    with open_regular(path) as f:
        assert read_at(f, 60, 10, path) == b"\x01" * 4  # short only at the end of the file


def test_short_reads_are_repeated_until_the_whole_size(tmp_path, monkeypatch):
    """One pread returns at most about 2 GiB on Linux, and a segment may be larger: reads are
    repeated (simulated here with a pread that returns at most 1000 bytes a call)."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(range(256)) * 20)
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, pos: real(fd, min(n, 1000), pos))
    with open_regular(path) as f:
        assert read_at(f, 7, 4500, path) == path.read_bytes()[7:4507]
        assert read_at(f, 5000, 4500, path) == path.read_bytes()[5000:]  # fewer only at the end
