"""verify and offsets missing between batches: records lost where nothing shows the topic is
compacted, passed over where something does (or --compacted says so), never blamed on damage."""
import shutil
import subprocess
import sys

from kafkacodec.storage.layout import logdir
from kafkacodec.storage.segments.scan import scan_file
from kafkacodec.storage.audit.verify import verify_partition
from kafkacodec.storage.change.writer import PartitionWriter


def kc(*args):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True)


def gap_lines(run) -> list[str]:
    return [line for line in run.stderr.splitlines() if " missing before the batch at position " in line]


def test_a_segment_gone_from_the_middle_is_records_lost(sample, tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    assert kc("verify", logs).returncode == 0  # the sample: v0/v1 wrappers, transactions, no gap
    part = logs / "payments-0"
    middle = sorted(part.glob("*.log"))[1]
    batches = scan_file(middle).batches
    first, last = batches[0].entry.base_offset, batches[-1].last_offset
    for f in part.glob(middle.stem + ".*"):
        f.unlink()
    run = kc("verify", logs)
    assert run.returncode == 1
    after = sorted(part.glob("*.log"))[1]
    assert gap_lines(run) == [f"{after.with_suffix('')}: log: offsets {first}..{last} ({last - first + 1}) are missing "
                              "before the batch at position 0: records lost, unless payments is compacted, which "
                              "nothing in the log dir shows (`verify --compacted 'payments'` passes over its gaps)"]
    assert kc("verify", logs, "--quick").returncode == 1 and gap_lines(kc("verify", logs, "--quick"))
    assert kc("verify", logs, "--compacted", "pay.*").returncode == 0
    assert kc("verify", logs, "--compacted", "pay").returncode == 1  # whole names, as --topic
    (logs / "cleaner-offset-checkpoint").write_text("0\n1\npayments 0 30\n")  # the cleaner has been here
    assert kc("verify", logs).returncode == 0


def test_a_batch_cut_from_a_segment_is_a_gap_where_the_next_one_starts(tmp_path):
    part = tmp_path / "orders-0"
    with PartitionWriter(part) as w:
        for i in range(8):
            w.append([{"key": b"k%d" % i, "value": b"v", "timestamp": 1000 + i} for _ in range(3)])
    log = part / "00000000000000000000.log"
    batches = scan_file(log).batches
    data = log.read_bytes()
    cut = batches[3]
    log.write_bytes(data[:cut.position] + data[cut.position + cut.size:])
    for f in part.glob("*index"):
        f.unlink()  # the indexes would only repeat that the bytes moved
    run = kc("verify", part)
    assert run.returncode == 1
    (line,) = gap_lines(run)
    assert f"offsets 9..11 (3) are missing before the batch at position {cut.position}:" in line


def test_compaction_leaves_gaps_that_are_not_problems(tmp_path):
    logs = tmp_path / "logs"
    with PartitionWriter(logs / "t-0", segment_bytes=600) as w:
        for i, key in enumerate([b"a"] * 6 + [b"b"] * 7 + [b"c"] * 7):
            w.append([{"key": key, "value": b"v%d" % i, "timestamp": 1000 + i}])
    clean = kc("clean", logs, "--policy", "compact", "--min-cleanable-dirty-ratio", "0", "--apply", "--out",
               tmp_path / "out")
    assert clean.returncode == 0, clean.stderr
    reports = verify_partition(logdir.open_partition(tmp_path / "out" / "t-0"))
    assert sum(len(r.gaps) for r in reports) >= 2  # the cleaner's gaps are there
    run = kc("verify", tmp_path / "out")
    assert run.returncode == 0 and not gap_lines(run), run.stderr
    forced = verify_partition(logdir.open_partition(tmp_path / "out" / "t-0"), offset_gaps=True)
    assert sum("missing before the batch" in p for r in forced for p in r.problems) == sum(len(r.gaps) for r in reports)


def test_records_in_damaged_bytes_are_not_also_a_gap(tmp_path):
    part = tmp_path / "orders-0"
    with PartitionWriter(part, segment_bytes=700) as w:
        for i in range(20):
            w.append([{"key": b"k", "value": b"v" * 20, "timestamp": 1000 + i} for _ in range(2)])
    logs = sorted(part.glob("*.log"))
    assert len(logs) >= 3
    for log, which in ((logs[0], 2), (logs[1], -1)):  # one in the middle of a segment, one at a segment's end
        batches = scan_file(log).batches
        data = bytearray(log.read_bytes())
        data[batches[which].position + 20] ^= 0xFF  # its CRC fails
        log.write_bytes(bytes(data))
    for args in ([], ["--skip-corrupt"]):
        run = kc("verify", part, *args)
        assert run.returncode == 1 and ("damaged" in run.stderr or "invalid from byte" in run.stderr)
        assert not gap_lines(run), (args, run.stderr)


def test_offsets_recover_cut_are_said_not_blamed(sample, tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    part = logs / "payments-0"
    middle = sorted(part.glob("*.log"))[1]
    last = scan_file(middle).batches[-1]
    middle.write_bytes(middle.read_bytes()[:-7])  # a torn tail: the last batch goes
    assert kc("recover", logs).returncode == 0
    (kept,) = part.glob(middle.name + ".corrupt-*")
    run = kc("verify", logs)
    assert run.returncode == 0 and not gap_lines(run), run.stderr
    after = sorted(part.glob("*.log"))[2]
    assert f"{after}: offsets {last.entry.base_offset}..{last.last_offset} are not in the log: `recover` cut them " \
           f"from {middle.name} (kept in {kept.name})" in run.stderr.splitlines()
