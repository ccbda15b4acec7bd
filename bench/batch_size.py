"""Decode of uncompressed v2 batches holding 1, 10 and 100 records (100-byte values), beside
aiokafka's C extension on the same bytes: what each pays per batch, beside what it pays per
record. Producers that send as soon as they can (librdkafka's linger.ms=0, for one) write small
batches."""
from __future__ import annotations

import peers

RECORDS = 20_000
SIZES = (1, 10, 100)


def batches_of(corpus, size: int) -> list[list[tuple]]:
    """The corpus's records cut into batches of `size`, offsets counted from 0 in each."""
    flat = [r for batch in corpus(100, RECORDS // 100) for r in batch]
    return [[(i, ts, k, v, h) for i, (_, ts, k, v, h) in enumerate(flat[at:at + size])]
            for at in range(0, len(flat), size)]


def table(corpus, kc_decode, paired, runs: int) -> list[dict]:
    rows = []
    for size in SIZES:
        blobs = [peers.kp_encode(b, "none") for b in batches_of(corpus, size)]
        assert kc_decode(blobs) == peers.aio_decode(blobs) == RECORDS
        t, measured = paired(lambda: kc_decode(blobs), {"aiokafka": lambda: peers.aio_decode(blobs)}, runs)
        theirs, ratio = measured["aiokafka"]
        rows.append({"records_per_batch": size, "batches": len(blobs), "records": RECORDS,
                     "kafkacodec_us_per_batch": t / len(blobs) * 1e6,
                     "aiokafka_us_per_batch": theirs / len(blobs) * 1e6,
                     "kafkacodec_rps": RECORDS / t, "aiokafka_rps": RECORDS / theirs, "ratio": ratio})
    return rows
