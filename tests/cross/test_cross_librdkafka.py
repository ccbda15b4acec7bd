"""Batches written by librdkafka (confluent-kafka's in-process mock broker), saved under
tests/fixtures/librdkafka with their provenance, and one live produce/fetch round."""
import json

import pytest

from tests.fixtures.librdkafka.make_fixtures import CASES, messages
from kafkacodec import read_batches
from kafkacodec.generated.record_batch import RecordBatch

from tests.support import TESTS

FIXTURES = TESTS / "fixtures" / "librdkafka"


def decoded(data):
    return [(r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            for b in read_batches(data) for r in b]


def want(with_headers, legacy):
    return [(i, -1 if legacy else ts, k, v, list(h or []) if with_headers else [])
            for i, (k, v, h, ts) in enumerate(messages(with_headers))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_decodes_to_the_produced_messages(name):
    prov = json.loads((FIXTURES / "provenance.json").read_text())["cases"][name]
    data = (FIXTURES / f"{name}.bin").read_bytes()
    assert len(data) == prov["bytes"]
    assert decoded(data) == want(prov["headers"], name.startswith("v0"))
    codec = prov["config"]["compression.type"]
    for b in read_batches(data):
        assert b.crc_valid
        assert b.compression == codec


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n.startswith("v2")])
def test_fixture_reencodes_to_equal_records(name):
    data = (FIXTURES / f"{name}.bin").read_bytes()
    for b in read_batches(data):
        again = RecordBatch.from_bytes(b.entry.to_bytes())
        assert again.records == b.entry.records
        if b.compression == "none":
            assert again.to_bytes() == data[b.position:b.position + b.size]


def test_live_librdkafka_round():
    from tests.support.peers.librdkafka import produce_and_fetch
    data = produce_and_fetch(messages(), **{"compression.type": "zstd", "log_level": 3})
    assert decoded(data) == want(True, False)
