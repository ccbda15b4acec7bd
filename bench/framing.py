"""Decode v2 batches as each producer frames them (its compressor's block sizes, LZ4 frame
checksums, attribute bits), kafkacodec beside aiokafka's C extension on the same bytes.

kafka-python and aiokafka build their batches in-process; kafkajs through its npm package
(uncompressed and gzip: it needs plugins for the other codecs); librdkafka through
confluent-kafka's in-process mock cluster, fetched back raw.
"""
from __future__ import annotations

import peers
from kafkacodec import read_batches

kafkajs = peers.driver_from_tests("kafkajs")
librdkafka = peers.driver_from_tests("librdkafka")


def split(stream: bytes) -> list[bytes]:
    """A producer's batches laid end to end, one bytes object per batch."""
    return [stream[b.position:b.position + b.size] for b in read_batches(stream)]


def framings(data, codec: str) -> dict[str, list[bytes]]:
    out = {"kafka-python": [peers.kp_encode(b, codec) for b in data],
           "aiokafka": [peers.aio_encode(b, codec) for b in data]}
    if codec in kafkajs.CODECS and kafkajs.available():
        out["kafkajs"] = split(kafkajs.encode_batches(data, codec))
    messages = [(k, v, h, ts) for batch in data for _, ts, k, v, h in batch]
    out["librdkafka"] = split(librdkafka.produce_and_fetch(
        messages, topic=f"bench-{codec}",
        **{"compression.type": codec, "batch.num.messages": len(data[0]), "log_level": 3}))
    return out


def table(corpus, kc_decode, paired, runs: int) -> list[dict]:
    rows = []
    data = corpus(100, 60)
    records = sum(len(b) for b in data)
    for codec in peers.CODECS:
        for producer, blobs in framings(data, codec).items():
            assert kc_decode(blobs) == peers.aio_decode(blobs) == records
            t, measured = paired(lambda: kc_decode(blobs), {"aiokafka": lambda: peers.aio_decode(blobs)}, runs)
            rows.append({"codec": codec, "producer": producer, "batches": len(blobs), "records": records,
                         "kafkacodec_rps": records / t, "aiokafka_rps": records / measured["aiokafka"][0],
                         "ratio": measured["aiokafka"][1]})
    return rows
