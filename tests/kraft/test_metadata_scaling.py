"""How the metadata replay's work grows with the log: a history or a state over twice the topics
costs about twice the work, not four times. Work is counted as the lines the replay's own code
runs (a count, not a time, so that a busy machine cannot make the test pass or fail)."""
import sys
from pathlib import Path

import pytest

from kafkacodec.codec.records import Record, write_batch
from kafkacodec.storage.kraft import image
from kafkacodec.storage.kraft.records import pack
from kafkacodec.storage.kraft.replay import open_metadata_log, replay
from kafkacodec.storage.kraft.view import history, subject
from kafkacodec.storage.samples.controller import T0, moved, partition, rec

STORAGE = str(Path(image.__file__).parents[1])


def write_topics(root, count: int):
    """`count` topics created one batch each, the last named `last`, then a change of its partition."""
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    out, offset = [], 0
    batches = [[rec("TOPIC_RECORD", name="last" if n == count - 1 else f"t{n}", topicId=uuid_of(n)), partition_of(n)]
               for n in range(count)]
    batches.append([moved_of(count - 1)])
    for records in batches:
        out.append(write_batch([Record(value=pack(r), timestamp=T0) for r in records], base_offset=offset))
        offset += len(records)
    (part / f"{0:020d}.log").write_bytes(b"".join(out))
    return open_metadata_log(root)


def uuid_of(n: int) -> str:
    import base64
    return base64.urlsafe_b64encode(n.to_bytes(16, "big")).rstrip(b"=").decode()


def partition_of(n: int) -> dict:
    p = partition(1, 0, [1, 2])
    return {**p, "data": {**p["data"], "topicId": uuid_of(n)}}


def moved_of(n: int) -> dict:
    m = moved(1, 0, isr=[1])
    return {**m, "data": {**m["data"], "topicId": uuid_of(n)}}


def lines_run(work) -> int:
    """The lines of storage/ code that `work()` runs."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(STORAGE) else None

    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("what", ["history last-0", "history topic:last", "state"])
def test_twice_the_topics_is_about_twice_the_work(tmp_path, what):
    def work_for(n: int) -> int:
        log = write_topics(tmp_path / str(n), n)
        if what == "state":
            return lines_run(lambda: replay(log))
        return lines_run(lambda: list(history(log, subject(what.split()[1]))))

    small, large = work_for(600), work_for(1200)
    assert large / small < 2.5, (small, large)  # a scan of every topic per record gives about 4
