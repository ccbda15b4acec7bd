"""librdkafka as an independent writer: produce through confluent-kafka to its in-process mock
cluster on 127.0.0.1, then fetch the raw record bytes back with a minimal Fetch v4 request.

The Fetch request is written here by hand (big-endian fields as in Kafka's protocol guide), so
the bytes under test pass through no decoder before ours.
"""
from __future__ import annotations

import socket
import struct

from confluent_kafka import Producer


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def fetch_raw(host: str, port: int, topic: str, partition: int = 0, offset: int = 0,
              max_bytes: int = 16 << 20, timeout: float = 10.0) -> bytes:
    """The `records` bytes of one partition from a Fetch v4 response."""
    body = struct.pack(">iiiib", -1, 100, 1, max_bytes, 0)  # replica, max wait, min bytes, max bytes, isolation
    body += struct.pack(">i", 1) + _string(topic) + struct.pack(">i", 1)
    body += struct.pack(">iqi", partition, offset, max_bytes)
    header = struct.pack(">hhi", 1, 4, 7) + _string("kafkacodec-tests")
    request = header + body
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", _recv(sock, 4))[0]
        resp = _recv(sock, size)
    pos = 4 + 4  # correlation id, throttle time
    (ntopics,) = struct.unpack_from(">i", resp, pos)
    pos += 4
    for _ in range(ntopics):
        (tlen,) = struct.unpack_from(">h", resp, pos)
        pos += 2 + tlen
        (nparts,) = struct.unpack_from(">i", resp, pos)
        pos += 4
        for _ in range(nparts):
            part, err, _hw, _lso = struct.unpack_from(">ihqq", resp, pos)
            pos += 22
            (naborted,) = struct.unpack_from(">i", resp, pos)
            pos += 4 + max(naborted, 0) * 16
            (rlen,) = struct.unpack_from(">i", resp, pos)
            pos += 4
            records = resp[pos:pos + max(rlen, 0)]
            pos += max(rlen, 0)
            if err:
                raise RuntimeError(f"fetch error code {err}")
            if part == partition:
                return bytes(records)
    raise RuntimeError("partition missing from the fetch response")


def _recv(sock, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("connection closed early")
        out += chunk
    return bytes(out)


def produce_and_fetch(messages, topic: str = "t", **config) -> bytes:
    """Produce (key, value, headers, timestamp) tuples through librdkafka; return the stored bytes."""
    conf = {"test.mock.num.brokers": 1, "linger.ms": 50, "batch.num.messages": 100000}
    conf.update(config)
    producer = Producer(conf)
    for key, value, headers, ts in messages:
        kwargs = {"key": key, "value": value, "timestamp": ts, "partition": 0}
        if headers:
            kwargs["headers"] = headers
        producer.produce(topic, **kwargs)
    if producer.flush(15) != 0:
        raise RuntimeError("librdkafka did not deliver every message")
    meta = producer.list_topics(timeout=5)
    broker = next(iter(meta.brokers.values()))
    data = fetch_all(broker.host, broker.port, topic)
    del producer
    return data


def fetch_all(host: str, port: int, topic: str) -> bytes:
    """Every whole v2 batch of the partition: a fetch may stop after one batch, so fetch again
    from the offset after the last batch until nothing new comes."""
    out, offset = bytearray(), 0
    while True:
        chunk = fetch_raw(host, port, topic, offset=offset)
        pos, before = 0, len(out)
        while pos + 61 <= len(chunk):  # the v2 batch header: offset, length ... last offset delta
            base, length = struct.unpack_from(">qi", chunk, pos)
            if pos + 12 + length > len(chunk):
                break
            if base >= offset:
                out += chunk[pos:pos + 12 + length]
                offset = base + struct.unpack_from(">i", chunk, pos + 23)[0] + 1
            pos += 12 + length
        if len(out) == before:
            return bytes(out)
