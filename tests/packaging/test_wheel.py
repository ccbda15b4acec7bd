"""A built wheel installs everything under the kafkacodec namespace and works on its own."""
import subprocess
import sys
import zipfile

from tests.support import ROOT


def test_wheel_installs_one_namespace_and_works(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("kafkacodec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"kafkacodec"}, tops
    assert "kafkacodec/generator/templates/module.py.j2" in names
    assert "kafkacodec/runtime/codecs/lz4_codec.py" in names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    probe = (
        "import kafkacodec, kafkacodec.generated.record_batch as rb, kafkacodec.generator.render as r\n"
        f"assert kafkacodec.__file__.startswith({str(site)!r}), kafkacodec.__file__\n"
        f"assert rb.__file__.startswith({str(site)!r}), rb.__file__\n"
        f"assert r.__file__.startswith({str(site)!r}), r.__file__\n"
        "from kafkacodec import write_batch, read_batches\n"
        "data = write_batch([{'value': b'x', 'timestamp': 1}], compression='lz4')\n"
        "print([r.value for b in read_batches(data) for r in b])\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[b'x']"
    # the compiler in the wheel regenerates the committed code from the schemas
    out = tmp_path / "generated"
    gen = subprocess.run([sys.executable, "-m", "kafkacodec", "generate", "--schemas", str(ROOT / "schemas"),
                          "--out", str(out)], capture_output=True, text=True,
                         env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert gen.returncode == 0, gen.stderr
    for f in (ROOT / "generated").glob("*.py"):
        assert (out / f.name).read_text() == f.read_text(), f.name
