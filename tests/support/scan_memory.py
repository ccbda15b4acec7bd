"""Peak resident memory of scanning one segment file, in a fresh process: python scan_memory.py
WAY PATH prints the peak (VmHWM) minus the resident memory before the scan, in bytes."""
import sys


def resident(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def main(way: str, path: str) -> None:
    from kafkacodec.storage.segments import columnar, reader, scan
    from kafkacodec.storage.layout.logdir import open_partition
    import numpy
    import pyarrow
    # Arrow's first compute call sets up its thread pool and allocator arenas (some 100 MiB, once
    # per process): part of the constant, so done before the baseline
    pyarrow.array(numpy.arange(4, dtype=numpy.int32)).take(pyarrow.array([0, 2]))
    segment = open_partition(__import__("pathlib").Path(path).parent).segments[0]
    before = resident("VmRSS")
    if way == "headers":
        assert scan.scan_file(path, keep_batches=False, verify=False).is_valid
    elif way == "crcs":
        assert scan.scan_file(path, keep_batches=False).is_valid
    elif way == "batches":
        for batch in reader.segment_batches(segment):
            batch.records()
    elif way == "columns":
        for cols in columnar.segment_columns(path):
            cols.arrow_bytes("value")
    print(resident("VmHWM") - before)


if __name__ == "__main__":
    main(*sys.argv[1:])
