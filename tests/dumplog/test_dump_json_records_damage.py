"""`dump --json` lists every batch whose framing is intact, as the text listing does: a batch whose
CRC matches but whose records do not read is listed with its header, `recordsValid: false` and
`recordsError` naming the file and byte, the damage is reported on stderr in the text listing's
words, and the batches after it follow (it stopped at the damaged batch, the ones after it not
listed). `write` refuses such a batch given back to it."""
import json
import subprocess
import sys

from tests.support import damage
from kafkacodec import write_batch
from kafkacodec.runtime.limits import LIMITS
from kafkacodec.storage.samples.broker import write_sample
from kafkacodec.storage.segments.scan import scan_file

SMALL_LIMIT = 1 << 20  # as the catalogue's bombs are built; dumped with the same limit


def kc(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kafkacodec", *map(str, args)], capture_output=True, text=True,
                          input=stdin)


def errors(run):
    return [line for line in run.stderr.splitlines() if line.startswith("error: ")]


def varint_at(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint at `pos`: its value and its width."""
    u = width = 0
    while True:
        byte = buf[pos + width]
        u |= (byte & 0x7F) << (7 * width)
        width += 1
        if not byte & 0x80:
            return (u >> 1) ^ -(u & 1), width


def with_record_length_off_by_one(batch: bytes, record: int) -> bytes:
    """The batch with one record's length one more than its fields (same width), compressed again
    with the batch's codec and its CRC recomputed: framing and CRC intact, the records not."""
    section = bytearray(damage.records_section(batch))
    pos = 0
    for _ in range(record):
        length, width = varint_at(section, pos)
        pos += width + length
    length, width = varint_at(section, pos)
    section[pos:pos + width] = damage.varint(length + 1, width)
    return damage.rebuild_v2(batch, records=bytes(section))


def sample_with_damaged_records(tmp_path, which: int):
    write_sample(tmp_path / "logs")
    log = tmp_path / "logs" / "payments-0" / "00000000000000000000.log"
    data = log.read_bytes()
    start, end = damage.batch_spans(data)[which]
    log.write_bytes(data[:start] + with_record_length_off_by_one(data[start:end], 2) + data[end:])
    return log, start


def test_a_batch_whose_records_do_not_read_is_listed_and_the_rest_follow(tmp_path):
    log, bad_at = sample_with_damaged_records(tmp_path, 2)  # an lz4 batch of five records
    positions = [b.position for b in scan_file(log).batches]  # the framing: every batch
    assert len(positions) == 7 and bad_at in positions
    text = kc("dump", "--deep-iteration", log)
    for options in ([], ["--skip-corrupt"]):
        run = kc("dump", "--json", *options, log)
        assert run.returncode == 1, run.stderr
        listed = [json.loads(line) for line in run.stdout.splitlines()]
        assert [b["position"] for b in listed] == positions
        (bad,) = [b for b in listed if not b["recordsValid"]]
        assert bad["position"] == bad_at and bad["crcValid"] is True
        assert (bad["baseOffset"], bad["lastOffset"], bad["count"], bad["compression"]) == (10, 14, 5, "lz4")
        assert bad["recordsError"].startswith(f"{log}: byte ")
        assert f"the records of the batch at byte {bad_at} do not read: " in bad["recordsError"]
        assert errors(run) == [f"error: {bad['recordsError']}"] == errors(text)
        assert all(b["recordsValid"] and "recordsError" not in b and len(b["records"]) == b["count"]
                   for b in listed if b is not bad)
        assert [r["offset"] for b in listed for r in b["records"]] == [*range(10), *range(15, 34)]


def test_a_decoder_still_decodes_the_batches_around_the_damage(tmp_path):
    log, bad_at = sample_with_damaged_records(tmp_path, 6)  # the uncompressed transactional batch
    run = kc("dump", "--json", "--transaction-log-decoder", log)
    assert run.returncode == 1 and len(errors(run)) == 1, run.stderr
    listed = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(listed) == 7 and listed[-1]["position"] == bad_at and not listed[-1]["recordsValid"]
    assert all("decoded" in r for b in listed[:-1] for r in b["records"])


def test_every_kind_of_damage_behind_a_valid_crc_is_listed(tmp_path):
    old = LIMITS.max_decompressed_bytes
    LIMITS.max_decompressed_bytes = SMALL_LIMIT
    try:
        cases = list(damage.damaged_v2_batches()) + list(damage.damaged_legacy_entries())
    finally:
        LIMITS.max_decompressed_bytes = old
    around = write_batch([{"key": b"k", "value": b"v", "timestamp": 10}])
    data = around + b"".join(batch + around for _, batch, _ in cases)
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(data)
    run = kc("--max-decompressed-bytes", SMALL_LIMIT, "dump", "--json", log)
    assert run.returncode == 1
    listed = [json.loads(line) for line in run.stdout.splitlines()]
    assert [b["position"] for b in listed] == [start for start, _ in damage.batch_spans(data)]
    bad = [b for b in listed if not b["recordsValid"]]
    # a legacy wrapper's inner CRC is not checked when CRCs are not (test_damage_valid_crc)
    assert len(bad) == len([c for c in cases if not c[0].endswith("inner_crc")])
    assert errors(run) == [f"error: {b['recordsError']}" for b in bad]
    assert all(b["records"] == [] and b["recordsError"].startswith(f"{log}: byte ") for b in bad)


def test_write_refuses_a_batch_listed_with_records_that_do_not_read(tmp_path):
    log, _ = sample_with_damaged_records(tmp_path, 2)
    listed = kc("dump", "--json", log).stdout
    out = tmp_path / "00000000000000000000.log"
    for options in ([], ["--recompute", "--accept-damaged"]):
        run = kc("write", out, *options, stdin=listed)
        assert run.returncode == 2 and "line 3: recordsValid: false" in run.stderr, run.stderr
        assert not out.exists()
