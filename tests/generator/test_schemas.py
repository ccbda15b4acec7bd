"""The schemas document themselves: every type, field, instance and enum value has a doc, and
every schema points at the Kafka source it describes."""
import pytest
import yaml

from tests.support import ROOT

SCHEMAS = sorted((ROOT / "schemas").glob("*.ksy"))


def walk_types(node, path):
    yield path, node
    for name, sub in (node.get("types") or {}).items():
        yield from walk_types(sub, f"{path}/types/{name}")


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.stem)
def test_every_element_is_documented(path):
    spec = yaml.safe_load(path.read_text())
    assert spec.get("doc") and spec.get("doc-ref", "").startswith("https://github.com/apache/kafka/")
    missing = []
    for where, t in walk_types(spec, ""):
        if where and not t.get("doc"):
            missing.append(where)
        for i, attr in enumerate(t.get("seq") or []):
            if not attr.get("doc"):
                missing.append(f"{where}/seq/{i}")
        for name, inst in (t.get("instances") or {}).items():
            if not inst.get("doc"):
                missing.append(f"{where}/instances/{name}")
    for name, values in (spec.get("enums") or {}).items():
        for key, value in values.items():
            if not (isinstance(value, dict) and value.get("doc")):
                missing.append(f"/enums/{name}/{key}")
    assert not missing, missing
