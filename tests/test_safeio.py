"""Opening files: regular files only, failures as typed errors naming the file."""
import os

import pytest

from kafkacodec.storage.safeio import FileProblem, check_regular, open_regular, read_at, read_bounded


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


def test_reads_past_two_gib_are_whole(tmp_path):
    """One pread stops near 2 GiB on Linux; a segment can be larger (a sparse file costs nothing)."""
    path = tmp_path / "00000000000000000000.log"
    size = (2 << 30) + 100
    with open(path, "wb") as f:
        f.truncate(size)
        f.seek(size - 4)
        f.write(b"tail")
    with open_regular(path) as f:
        data = read_at(f, 0, size, path)
    assert len(data) == size and data[-4:] == b"tail"
