"""The hand-written modules import downward only, through the layers of the house: runtime, generated,
the codec layer, storage (its sub-packages in their own order), pipeline, the command line. Every
import counts, at module level or inside a function (one inside a function only hides the upward
step), and so does an import by name through importlib."""
from tests.packaging.test_import_cycles import hand_written, imports

S = "kafkacodec.storage."
# lowest first; a module sits in the layer of the longest prefix naming it; a layer may import
# its own and those below it
LAYERS = [
    ["kafkacodec.runtime"],
    ["kafkacodec.generated"],
    ["kafkacodec.codec", "kafkacodec"],  # the package itself re-exports the codec layer's facade
    ["kafkacodec.storage", S + "diskio"],
    [S + "layout"],
    [S + "segments", S + "indexes"],
    [S + "state", S + "schemas"],  # what internal topics hold: producers, groups, the schema registry's
    [S + "audit", S + "change", S + "kraft", S + "dump_log", S + "exchange"],
    [S + "samples"],  # writes sample logs through change and kraft
    ["kafkacodec.pipeline"],
    ["kafkacodec.cli", "kafkacodec.__main__"],
]
# outside the order above, and why
UNPLACED = {
    "kafkacodec.generator": "the schema compiler, which the command line runs; it has its own rule",
    "kafkacodec.formatdocs": "format documentation the command line writes from the generator's model",
}
# upward imports known and not yet moved down: (importer, imported) -> why it is still there
KNOWN: dict[tuple[str, str], str] = {}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or (prefix != "kafkacodec" and name.startswith(prefix + "."))


def layer_of(name: str) -> int | None:
    found = [(len(p), i) for i, layer in enumerate(LAYERS) for p in layer if _within(name, p)]
    return max(found)[1] if found else None


def upward(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher layer."""
    out = set()
    for name, targets in graph.items():
        low = layer_of(name)
        for t in targets:
            high = layer_of(t)
            if low is not None and high is not None and high > low:
                out.add((name, t))
    return out


def import_graph() -> dict[str, set[str]]:
    mods = hand_written()
    return {name: imports(name, path, set(mods))[0] for name, path in mods.items()}


def test_every_module_has_a_layer():
    lost = [m for m in hand_written() if layer_of(m) is None and
            not any(_within(m, p) for p in UNPLACED)]
    assert not lost, f"modules in no layer (add their package to LAYERS): {sorted(lost)}"


def test_no_module_imports_a_higher_layer():
    found = upward(import_graph())
    new = sorted(found - set(KNOWN))
    assert not new, "imports up a layer:\n" + "\n".join(f"{a} -> {b}" for a, b in new)
    gone = sorted(set(KNOWN) - found)
    assert not gone, f"no longer imported upward, remove from KNOWN: {gone}"


def test_the_checker_sees_an_upward_import_hidden_in_a_function(tmp_path):
    """The test above can fail: the segments layer importing the change layer inside a function,
    and the codec layer importing storage, are both found; importing downward is not."""
    (tmp_path / "guarded.py").write_text("def f():\n    from ..change.retention import facts_from\n")
    (tmp_path / "topics.py").write_text("def g():\n    from kafkacodec.storage.segments import reader\n")
    (tmp_path / "retention.py").write_text("from ..segments.guarded import f\n")
    known = {S + "segments.guarded", S + "change.retention", "kafkacodec.codec.topics"}
    files = {S + "segments.guarded": "guarded.py", S + "change.retention": "retention.py",
             "kafkacodec.codec.topics": "topics.py"}
    graph = {m: imports(m, tmp_path / f, known)[0] for m, f in files.items()}
    assert upward(graph) == {(S + "segments.guarded", S + "change.retention"),
                             ("kafkacodec.codec.topics", S + "segments")}
