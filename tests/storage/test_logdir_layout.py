"""What a partition directory is, for every command, the Spark source and the sink's commit alike:
a directory holding a segment's .log named by its offset (`names.is_partition_listing`). A file a
broker keeps at a log dir's root (its own log4j `server.log`) does not make the root a partition.
And a partition directory that is a symbolic link: read through it, as Kafka reads it; never
replaced by renaming the link (refused, nothing changed); an operation older versions left half
done on one is finished."""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from kafkacodec.storage.layout import logdir, names
from kafkacodec.storage.change.unfinished import pending
from kafkacodec.storage.change.lock import log_root
from kafkacodec.storage.segments.reader import partition_records
from kafkacodec.storage.samples.broker import PARTITIONS as SAMPLE_PARTITIONS, write_sample
from kafkacodec.storage.segments.scan import batch_positions
from kafkacodec.storage.change.writer import PartitionWriter

SERVER_LOG = b"[2024-05-01 10:00:00,000] INFO KafkaConfig values: (kafka.server.KafkaConfig)\n" * 40
CLEAN = ["clean", "--policy", "delete", "--now", "1600000500000", "--retention-ms", "150000"]


def kafkacodec(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env=dict(os.environ, COLUMNS="200"))


def tree(path):
    """Every file below `path` (through symbolic links) with a digest of its bytes, and each link."""
    out = {}
    for top, dirs, files in os.walk(path, followlinks=True):
        for name in dirs + files:
            p = os.path.join(top, name)
            rel = os.path.relpath(p, path)
            if os.path.islink(p):
                out[rel + " ->"] = os.readlink(p)
            if name in files and name != ".kafkacodec.lock":
                with open(p, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


def records(part_dir):
    return [(r.offset, r.key, r.value) for _, r in partition_records(logdir.open_partition(part_dir))]


def damage_middle_batch(log):
    data = bytearray(log.read_bytes())
    starts = batch_positions(bytes(data))
    data[starts[len(starts) // 2] + 30] ^= 0xFF
    log.write_bytes(bytes(data))


@pytest.fixture
def two_log_dirs(tmp_path):
    """The sample log dir, damaged in clicks-0, twice: `plain`, and `stray` with a broker's
    server.log (and a rotated one) at its root."""
    out = {}
    for name in ("plain", "stray"):
        root = tmp_path / name / "logs"
        write_sample(root)
        damage_middle_batch(root / "clicks-0" / "00000000000000000290.log")
        out[name] = root
    (out["stray"] / "server.log").write_bytes(SERVER_LOG)
    (out["stray"] / "server.log.2024-05-01-09").write_bytes(SERVER_LOG)
    return out


def same_output(command, roots, *args):
    """The command's exit status and output on both log dirs, the paths made alike."""
    plain, stray = (kafkacodec(*command, root, *args) for root in (roots["plain"], roots["stray"]))
    assert stray.returncode == plain.returncode, (stray.stdout, stray.stderr)
    alike = lambda text: text.replace(str(roots["stray"]), "LOGS").replace(str(roots["plain"]), "LOGS")  # noqa: E731
    assert alike(stray.stdout) == alike(plain.stdout)
    assert alike(stray.stderr) == alike(plain.stderr)
    return plain


def test_a_server_log_at_the_root_changes_nothing_the_commands_say(two_log_dirs):
    """It made the whole log dir one empty partition: verify printed `logs 0 0 0 0 ok` and exited 0."""
    checked = same_output(["verify"], two_log_dirs)
    assert checked.returncode == 1 and "clicks-0" in checked.stdout and "payments-0" in checked.stdout
    for command, args in ((["describe"], ()), (["find", "--offset", "300"], ()), (["clean"], ("--now", "1600000500000"))):
        run = same_output(command, two_log_dirs, *args)
        assert run.returncode in (0, 1) and "clicks-0" in run.stdout + run.stderr, (command, run.stderr)


def test_recover_of_a_log_dir_with_a_server_log_repairs_its_partitions_under_its_own_lock(two_log_dirs):
    """It said `nothing to recover` and took its lock in the parent directory."""
    stray = two_log_dirs["stray"]
    run = kafkacodec("recover", stray)
    assert run.returncode == 0 and "clicks-0/00000000000000000290.log: truncated" in run.stdout, run.stdout
    assert (stray / ".kafkacodec.lock").exists() and not (stray.parent / ".kafkacodec.lock").exists()
    assert kafkacodec("verify", stray).returncode == 0
    assert (stray / "server.log").read_bytes() == SERVER_LOG


def test_the_spark_source_lists_the_partitions_beside_a_server_log(two_log_dirs):
    from kafkacodec.pipeline.files import list_log

    plain, stray = (list_log(str(two_log_dirs[name])) for name in ("plain", "stray"))
    assert [(p.topic, p.partition, len(p.segments)) for p in stray.partitions] == \
        [(p.topic, p.partition, len(p.segments)) for p in plain.partitions]
    assert len(stray.partitions) == len(SAMPLE_PARTITIONS)


def test_what_is_a_partition_directory(tmp_path):
    assert names.is_partition_listing(["00000000000000000000.log", "leader-epoch-checkpoint"], [])
    assert names.is_partition_listing(["00000000000000000007.log.swap"], [])  # every segment in flight
    assert not names.is_partition_listing(["server.log", "controller.log", "meta.properties"], [])
    assert not names.is_partition_listing(["00000000000000000000.log"], ["orders-0"])  # a root, whatever beside
    assert not names.is_partition_listing(["server.log"], ["orders-0." + "ab" * 16 + "-delete"])
    root = tmp_path / "kafka-1"  # named as a partition would be: what it holds decides
    write_sample(root)
    (root / "server.log").write_bytes(SERVER_LOG)
    stray = root / "00000000000000000000.log"
    shutil.copy(root / "clicks-1" / "00000000000000000000.log", stray)
    assert not logdir.is_partition_dir(root) and log_root(root) == root
    found = logdir.at_path(root)
    assert len(found.partitions) == len(SAMPLE_PARTITIONS)
    assert (stray, "a segment file outside any partition directory (Kafka does not read it)") in found.skipped
    copied = tmp_path / "suspect"  # a partition copied under another name is still one
    shutil.copytree(root / "clicks-1", copied)
    assert logdir.is_partition_dir(copied) and log_root(copied) == tmp_path


def test_a_write_interrupted_with_every_partition_aside_is_said_and_finished(tmp_path):
    """A kill of the sink's commit between moving the old partition aside and moving the new one in
    leaves no partition at the root, beside server.log: verify exited 0 and recover looked for the
    journal in the parent. Here the commit's publication is stopped at that point."""
    from kafkacodec.storage.change import journal
    from kafkacodec.storage.change.replace import Publication

    root = tmp_path / "out"
    with PartitionWriter(root / "t-0") as w:
        w.append([{"value": b"old-%d" % i} for i in range(20)])
    (root / "server.log").write_bytes(SERVER_LOG)
    pub = Publication(root, in_place=True, kind="write")
    pub.begin()
    with PartitionWriter(pub.new / "t-0") as w:
        w.append([{"value": b"new-%d" % i} for i in range(30)])
    pub.state.update(phase="publish", partitions=["t-0"])
    journal.record(root, pub.state)
    (root / "t-0").rename(pub.old / "t-0")  # the commit's first rename, then the kill
    checked = kafkacodec("verify", root)
    assert checked.returncode == 1 and "unfinished write" in checked.stderr, checked.stdout + checked.stderr
    assert f"kafkacodec recover {root}" in checked.stderr
    run = kafkacodec("recover", root)
    assert run.returncode == 0 and f"replace {root / 't-0'} by its newly written copy" in run.stdout, run.stderr
    assert records(root / "t-0") == [(i, None, b"new-%d" % i) for i in range(30)]
    assert sorted(p.name for p in root.iterdir()) == [".kafkacodec.lock", "server.log", "t-0"]
    assert not pending(root) and kafkacodec("verify", root).returncode == 0



def test_log_dirs_named_as_partitions_in_a_parent_are_not_taken_for_empty_partitions(tmp_path):
    """`/data` holding `kafka-logs-1` and `kafka-logs-2`, each a log dir: verify said of each
    `0 segments ok`, exit 0, and clean --apply --out wrote each as an empty partition, its
    records nowhere, with exit 0. Each is said to be a log dir of its own, and read when named."""
    data = tmp_path / "data"
    for name in ("kafka-logs-1", "kafka-logs-2"):
        write_sample(data / name)
    (data / "kafka-logs-3").mkdir()  # a broker's log dir before its first partition
    (data / "kafka-logs-3" / "meta.properties").write_text("version=1\nnode.id=3\n")
    found = logdir.at_path(data)
    assert found.partitions == []
    said = {path.name: why for path, why in found.skipped}
    assert said == {name: names.LOG_DIR_INSIDE for name in ("kafka-logs-1", "kafka-logs-2", "kafka-logs-3")}
    run = kafkacodec("verify", data)
    assert "kafka-logs-1" not in run.stdout and f"skipped {data / 'kafka-logs-1'}: a log dir of its own" in run.stderr
    cleaned = kafkacodec("clean", data, "--policy", "compact", "--now", "1600000500000", "--apply", "--out",
                         tmp_path / "out")
    assert cleaned.returncode == 0 and not (tmp_path / "out" / "kafka-logs-1").exists(), cleaned.stdout
    inner = kafkacodec("verify", data / "kafka-logs-1")
    assert inner.returncode == 0 and "payments-0" in inner.stdout and log_root(data / "kafka-logs-1") == \
        data / "kafka-logs-1"


def test_the_spark_source_skips_log_dirs_in_a_parent_and_warns_naming_them(tmp_path, caplog):
    """The Spark source listed `/data`'s `kafka-logs-1` and `kafka-logs-2` as empty partitions,
    read nothing of them without a word, where the library passes them over and says why."""
    import logging

    from kafkacodec.pipeline.files import list_log

    data = tmp_path / "data"
    for name in ("kafka-logs-1", "kafka-logs-2"):
        write_sample(data / name)
    (data / "kafka-logs-3").mkdir()
    (data / "kafka-logs-3" / "meta.properties").write_text("version=1\nnode.id=3\n")
    write_sample(tmp_path / "sample")
    shutil.copytree(tmp_path / "sample" / "clicks-1", data / "clicks-1")  # a partition beside them is read
    with caplog.at_level(logging.WARNING, logger="kafkacodec.pipeline"):
        listing = list_log(str(data))
    library = logdir.at_path(data)
    assert [(p.topic, p.partition, len(p.segments)) for p in listing.partitions] == \
        [(p.topic, p.partition, len(p.segments)) for p in library.partitions]
    assert [(p.topic, p.partition) for p in library.partitions] == [("clicks", 1)]
    assert sorted((os.path.basename(p), why) for p, why in listing.skipped) == \
        sorted((p.name, why) for p, why in library.skipped)
    warned = [r.getMessage() for r in caplog.records if r.name == "kafkacodec.pipeline"]
    for name in ("kafka-logs-1", "kafka-logs-2", "kafka-logs-3"):
        assert any(str(data / name) in w and names.LOG_DIR_INSIDE in w for w in warned), warned


def test_a_log_dir_holding_segments_and_no_partition_is_not_replaced_as_one(tmp_path):
    """A broker's log dir (meta.properties) whose only segment files are strays at its root, beside
    a directory of notes, was taken for a partition: clean --in-place replaced the whole log dir by
    a copy of its files, and the notes directory went with the original, exit 0."""
    root = tmp_path / "logs"
    write_sample(tmp_path / "sample")
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "readme").write_text("kept by the operator")
    shutil.copy(tmp_path / "sample" / "meta.properties", root)
    for f in (tmp_path / "sample" / "clicks-0").iterdir():
        shutil.copy(f, root)
    assert not logdir.is_partition_dir(root) and log_root(root) == root
    found = logdir.at_path(root)
    assert found.partitions == [] and (root / "00000000000000000290.log", "a segment file outside any partition "
                                       "directory (Kafka does not read it)") in found.skipped
    before = tree(root)
    run = kafkacodec("clean", root, "--policy", "compact", "--min-cleanable-dirty-ratio", "0", "--now",
                     "1700000000000", "--apply", "--in-place")
    assert run.returncode == 0, run.stderr
    assert tree(root) == before


def test_clean_in_place_refuses_to_remove_a_directory_kept_in_a_partition(tmp_path):
    """A partition is replaced whole by its cleaned copy, which holds its files: a directory an
    operator kept in it was removed with the original, without a word, exit 0."""
    root = tmp_path / "logs"
    write_sample(root)
    (root / "clicks-0" / "backup").mkdir()
    (root / "clicks-0" / "backup" / "notes").write_text("kept by the operator")
    before = tree(root)
    compact = ["clean", root, "--policy", "compact", "--min-cleanable-dirty-ratio", "0", "--now", "1700000000000",
               "--apply"]
    run = kafkacodec(*compact, "--in-place")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"error: {root / 'clicks-0' / 'backup'}: is a directory in a partition directory" in run.stderr
    assert "nothing was changed" in run.stderr and tree(root) == before and not pending(root)
    copied = kafkacodec(*compact, "--out", tmp_path / "out")  # the original stays whole: a copy may lack it
    assert copied.returncode == 0 and tree(root) == before, copied.stderr
    shutil.rmtree(root / "clicks-0" / "backup")
    assert kafkacodec(*compact, "--in-place").returncode == 0

# -- symbolic links -----------------------------------------------------------------------------
@pytest.fixture
def linked(tmp_path):
    """The sample log dir with clicks-0 on another disk, linked from the log dir (an absolute link)."""
    logs = tmp_path / "logs"
    write_sample(logs)
    (tmp_path / "disk2").mkdir()
    (logs / "clicks-0").rename(tmp_path / "disk2" / "clicks-0")
    (logs / "clicks-0").symlink_to(tmp_path / "disk2" / "clicks-0")
    return logs


def test_a_linked_partition_is_read_through_its_link(linked):
    run = kafkacodec("verify", linked)
    assert run.returncode == 0 and "clicks-0" in run.stdout
    assert [p.path.name for p in logdir.open_log_dir(linked).partitions].count("clicks-0") == 1


def test_a_partition_link_to_nothing_is_said(linked, tmp_path):
    (tmp_path / "disk2" / "clicks-0").rename(tmp_path / "moved")
    run = kafkacodec("verify", linked)
    assert f"skipped {linked / 'clicks-0'}: a symbolic link to {tmp_path / 'disk2' / 'clicks-0'}, which does " \
           "not exist" in run.stderr, run.stderr
    assert "clicks-0" not in run.stdout


def test_a_link_loop_and_a_partition_name_on_a_file_are_said(linked, tmp_path):
    """A link to itself was said to point to something that does not exist; a link to a file
    named as a partition was passed over without a word (files stay unsaid: a broker keeps its
    own at the root, rotated logs named as partitions among them)."""
    (linked / "loop-0").symlink_to("loop-0")
    (linked / "orders-0").symlink_to(linked / "meta.properties")
    (linked / "server.log.2024-05-01-09").write_bytes(SERVER_LOG)
    said = {path.name: why for path, why in logdir.open_log_dir(linked).skipped}
    assert said["loop-0"].startswith("a symbolic link to loop-0, which cannot be followed (Too many levels")
    assert said["orders-0"] == (f"named as a partition directory but a symbolic link to {linked / 'meta.properties'}"
                                ", not a directory (Kafka passes it over: nothing is read)")
    assert sorted(said) == ["loop-0", "orders-0"] and len(logdir.open_log_dir(linked).partitions) == len(SAMPLE_PARTITIONS)
    run = kafkacodec("verify", linked)
    assert run.returncode == 0 and f"skipped {linked / 'orders-0'}: named as a partition" in run.stderr


def test_clean_in_place_refuses_to_replace_a_linked_partition_and_changes_nothing(linked, tmp_path):
    """It published the copy, then failed removing the link's directory ("Cannot call rmtree on a
    symbolic link"), and every later command failed on the journal left."""
    before = tree(tmp_path)
    run = kafkacodec(*CLEAN, linked, "--apply", "--in-place")
    target = tmp_path / "disk2" / "clicks-0"
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert f"error: {linked / 'clicks-0'}: is a symbolic link to {target}" in run.stderr
    assert "nothing was changed" in run.stderr
    assert tree(tmp_path) == before and not pending(linked)
    assert sorted(p.name for p in linked.iterdir() if p.name.startswith(".kafkacodec")) == [".kafkacodec.lock"]
    for args in (["recover", linked], ["verify", linked]):
        assert kafkacodec(*args).returncode == 0
    # where it is, the partition is cleaned in place, and the link reads the cleaned copy
    done = kafkacodec(*CLEAN, target, "--apply", "--in-place")
    assert done.returncode == 0, done.stderr
    assert (linked / "clicks-0").is_symlink() and records(linked / "clicks-0") == records(target)
    assert records(target) != [] and records(target)[0][0] == 290
    assert sorted(p.name for p in target.parent.iterdir()) == [".kafkacodec.lock", "clicks-0"]


def test_a_partition_named_through_a_link_of_another_name_is_cleaned_where_it_is(tmp_path):
    """The copy was published under the link's name beside the directory it points to: a new
    partition there, the link's data unchanged, and clean said it removed what it had not."""
    logs = tmp_path / "logs"
    write_sample(logs)
    (tmp_path / "disk2").mkdir()
    (logs / "clicks-0").rename(tmp_path / "disk2" / "backup")
    (logs / "clicks-0").symlink_to(tmp_path / "disk2" / "backup")
    run = kafkacodec(*CLEAN, logs / "clicks-0", "--apply", "--in-place")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "disk2").iterdir()) == [".kafkacodec.lock", "backup"]
    assert records(logs / "clicks-0")[0][0] == 290  # the first segment is gone, through the link


def test_the_sink_refuses_to_overwrite_a_linked_partition_and_changes_nothing(tmp_path):
    """The sink's commit publishes as clean --in-place does: the same refusal, before anything moved."""
    pytest.importorskip("pyspark")
    import pyarrow as pa

    from kafkacodec.pipeline.sink import KafkaLogWriter

    (tmp_path / "disk2").mkdir()
    with PartitionWriter(tmp_path / "disk2" / "t-0") as w:
        w.append([{"value": b"old-%d" % i} for i in range(10)])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "t-0").symlink_to(tmp_path / "disk2" / "t-0")
    before = tree(tmp_path)

    class Schema:
        def fieldNames(self):
            return ["value", "topic", "partition"]

    writer = KafkaLogWriter({"path": str(tmp_path / "out")}, Schema(), overwrite=True)
    rows = pa.table({"value": [b"new"] * 5, "topic": ["t"] * 5, "partition": pa.array([0] * 5, pa.int32())})
    message = writer.write(iter(rows.to_batches()))
    from kafkacodec.storage.diskio.safeio import FileProblem
    with pytest.raises(FileProblem, match="is a symbolic link to .*nothing was changed"):
        writer.commit([message])
    assert tree(tmp_path) == before and not pending(tmp_path / "out")


def wedged_by_an_older_version(logs, tmp_path, link_to, keep_old=None):
    """The state older versions left after replacing a linked partition: the cleaned copy in place,
    the link moved aside into the staging directory, the journal in phase "publish"."""
    from kafkacodec.storage.change import journal
    from kafkacodec.storage.change.replace import STAGING_NAME

    cleaned = tmp_path / "cleaned"
    assert kafkacodec(*CLEAN, logs, "--apply", "--out", cleaned).returncode == 0
    staging = logs / STAGING_NAME
    for d in ("new", "old", "files"):
        (staging / d).mkdir(parents=True)
    (logs / "clicks-0").rename(staging / "old" / "clicks-0")
    (cleaned / "clicks-0").rename(logs / "clicks-0")
    (staging / "old" / "clicks-0").unlink()
    (staging / "old" / "clicks-0").symlink_to(link_to)
    journal.record(logs, {"kind": "clean", "phase": "publish", "target": ".", "staging": STAGING_NAME,
                          "in_place": True, "keep_old": str(keep_old) if keep_old else None, "started_ms": 0,
                          "partitions": ["clicks-0"], "files": [],
                          "kept_as": {"clicks-0": str(keep_old / "clicks-0")} if keep_old else {}})


@pytest.mark.parametrize("link", ["absolute", "relative"])
def test_a_journal_older_versions_wedged_on_a_link_is_finished(linked, tmp_path, link):
    """An absolute link made every later recover, clean and write fail on removing it; a relative one
    pointed nowhere once moved aside, and was dropped without a word. Only the link goes, and what
    it pointed to is said to be left as it was."""
    target = tmp_path / "disk2" / "clicks-0"
    original = tree(target)
    wedged_by_an_older_version(linked, tmp_path, target if link == "absolute" else "../disk2/clicks-0")
    assert json.loads((linked / ".kafkacodec-journal").read_text())["phase"] == "publish"
    dry = kafkacodec("recover", "--dry-run", linked)
    assert dry.returncode == 0 and f"would remove the symbolic link that was {linked / 'clicks-0'}" in dry.stdout, \
        dry.stdout + dry.stderr
    run = kafkacodec("recover", linked)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"remove the symbolic link that was {linked / 'clicks-0'} (to {target})" in run.stdout
    assert f"{target}, which held the original, is left as it was" in run.stdout
    assert tree(target) == original and not pending(linked)
    assert not (linked / "clicks-0").is_symlink() and records(linked / "clicks-0")[0][0] == 290
    assert kafkacodec("verify", linked).returncode == 0
    assert kafkacodec(*CLEAN, linked, "--apply", "--in-place").returncode == 0  # nothing stands in the way


def test_a_wedged_journal_with_keep_old_keeps_the_link(linked, tmp_path):
    target = tmp_path / "disk2" / "clicks-0"
    (tmp_path / "kept").mkdir()
    wedged_by_an_older_version(linked, tmp_path, target, keep_old=tmp_path / "kept")
    run = kafkacodec("recover", linked)
    assert run.returncode == 0, run.stdout + run.stderr
    assert os.readlink(tmp_path / "kept" / "clicks-0") == str(target) and not pending(linked)

