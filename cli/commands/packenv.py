"""pack-env: kafkacodec and what it needs at run time, without pyspark, as one archive for the
Python workers of a Spark cluster.

The archive is a directory of site-packages for this interpreter's version and platform
(compiled extensions included), meant for `--archives deps.tar.gz#deps` and
`spark.executorEnv.PYTHONPATH=./deps`, run by a system Python of the same minor version that
every node has. It holds kafkacodec[columnar] (the readers and pyarrow, which Spark's Python
data sources need too) and what they need; pyspark and py4j are left out, as the cluster's Spark
puts its own on the workers' path, and so is pandas, which no read needs on the workers (--with
adds it, or anything else installed). The README's Spark section gives the whole recipe for a
cluster, which docs/recipes/spark-cluster.sh runs.
"""
from __future__ import annotations

import importlib
import io
import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass, field
from importlib import metadata
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path, PurePosixPath

import click

ROOT = "kafkacodec"
EXTRAS = ("columnar",)          # pyarrow, for the columnar reader and for Spark's Python data sources
LEFT_OUT = ("pyspark", "py4j")  # brought by the cluster's Spark
MANIFEST = "kafkacodec-env.json"
# Not needed to run: sources of compiled modules, C headers, byte code (written again where it runs),
# the packages' own test suites, .pth files (not read from PYTHONPATH)
DROPPED_SUFFIXES = (".pyc", ".pyx", ".pxd", ".pxi", ".c", ".cc", ".cpp", ".h", ".hpp", ".pth")
DROPPED_DIRS = ("__pycache__", "tests")
# What the interpreters are asked, each answer on a line of its own after ANSWER: an interpreter
# (or a wrapper script standing for one) may print other lines before or after it.
ANSWER = "kafkacodec-pack-env-answer: "
VERSION = f"import sys; print({ANSWER!r} + '%d.%d.%d' % sys.version_info[:3])"
# what the workers import first: the decoding of every read, and the compiled kernels when shipped
PROBE = f"""
import json, sys
import kafkacodec.pipeline.decode, pyarrow, numpy
from kafkacodec.runtime import compiled, kernels
print({ANSWER!r} + json.dumps({{"python": "%d.%d.%d" % sys.version_info[:3], "kernels": kernels.compiled is not None,
                                "compiled_readers": len(compiled.compiled_types())}}))
"""
VERSION_SECONDS, PROBE_SECONDS = 60, 300  # an interpreter that has not answered by then never will


class PackProblem(click.ClickException):
    def show(self, file=None) -> None:
        click.echo(f"error: {self.message}", err=True)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(text: str):
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pip's own copy, present wherever pip is
        from pip._vendor.packaging.requirements import Requirement
    return Requirement(text)


def distributions(roots=((ROOT, EXTRAS),), left_out=LEFT_OUT) -> list[metadata.Distribution]:
    """The installed distributions the (name, extras) roots need at run time, the roots first,
    without `left_out` and what only they need."""
    found: dict[str, metadata.Distribution] = {}
    walked: dict[str, set[str]] = {}
    todo = [(name, set(extras), None) for name, extras in roots]
    while todo:
        name, wanted, needed_by = todo.pop(0)
        key = canonical(name)
        if key in left_out or (key in found and wanted <= walked[key]):
            continue
        try:
            dist = found.get(key) or metadata.distribution(name)
        except metadata.PackageNotFoundError:
            why = f"which {needed_by} needs" if needed_by else "named to be packed"
            raise PackProblem(f"{name}, {why}, is not installed in {sys.executable}") from None
        found[key] = dist
        walked.setdefault(key, set()).update(wanted)
        for text in dist.requires or []:
            req = _requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted | {""}):
                todo.append((req.name, set(req.extras), dist.metadata["Name"]))
    return list(found.values())


def _dropped(relative: PurePosixPath) -> bool:
    return (relative.suffix in DROPPED_SUFFIXES or any(p in DROPPED_DIRS for p in relative.parts[1:-1])
            or relative.parts[0] in DROPPED_DIRS)


def _is_extension(name: str) -> bool:
    return any(name.endswith(s) for s in EXTENSION_SUFFIXES)


def _editable_source(dist: metadata.Distribution) -> Path | None:
    """The source tree of an editable install (pip install -e), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    info = json.loads(text)
    if not info.get("dir_info", {}).get("editable") or not info.get("url", "").startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse
    return Path(unquote(urlparse(info["url"]).path))


@dataclass
class Contents:
    files: dict[str, Path] = field(default_factory=dict)  # name in the archive -> file here
    stale: list[str] = field(default_factory=list)        # compiled modules built from other source: left out

    def add(self, name: str, source: Path) -> None:
        relative = PurePosixPath(name)
        if not _dropped(relative):
            self.files[str(relative)] = source


def add_installed(contents: Contents, dist: metadata.Distribution) -> None:
    """The files a wheel installed (its RECORD), but scripts and what `_dropped` names."""
    if dist.files is None:
        raise PackProblem(f"{dist.metadata['Name']} has no list of its files (RECORD): reinstall it with pip")
    for f in dist.files:
        if f.parts[0] == ".." or f.name.startswith("__editable__"):
            continue
        path = Path(dist.locate_file(f))
        if path.is_file():
            contents.add(f.as_posix(), path)


def _built_from_source_beside(name: str) -> bool:
    """Whether the compiled module `name` was built from the .pyx beside it, which
    it names by hash: one that was not would be used where no .pyx is beside it, as in the archive."""
    from kafkacodec.runtime.compiled import sha256_beside  # the loader's own rule of freshness

    want = sha256_beside(name)
    if want is None:
        return True
    try:
        module = importlib.import_module(name)
    except ImportError:
        return False
    return getattr(module, "SOURCE_SHA256", None) == want


def add_editable(contents: Contents, dist: metadata.Distribution, source: Path) -> None:
    """An editable install's modules, found as its pyproject.toml maps packages to directories:
    each package's .py files, its compiled modules when built from the source beside them, and
    its package data; then the distribution's metadata."""
    config = tomllib.loads((source / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = config.get("package-dir", {})
    data = config.get("package-data", {})
    for package in config["packages"]:
        parent = max((p for p in dirs if package == p or package.startswith(p + ".")), key=len, default=None)
        rest = package[len(parent):].lstrip(".").split(".") if parent is not None else package.split(".")
        where = source.joinpath(dirs.get(parent, ""), *[r for r in rest if r])
        into = package.replace(".", "/")
        for path in sorted(where.iterdir()):
            if path.suffix == ".py":
                contents.add(f"{into}/{path.name}", path)
            elif _is_extension(path.name):
                name = f"{package}.{path.name.split('.')[0]}"
                if _built_from_source_beside(name):
                    contents.add(f"{into}/{path.name}", path)
                else:
                    contents.stale.append(name)
        for pattern in data.get(package, []):
            for path in sorted(where.glob(pattern)):
                if path.is_file():
                    contents.add(f"{into}/{path.relative_to(where).as_posix()}", path)
    for f in dist.files or []:
        if f.parts[0].endswith(".dist-info") and f.name not in ("RECORD", "direct_url.json", "REQUESTED"):
            contents.add(f.as_posix(), Path(dist.locate_file(f)))


def collect(dists: list[metadata.Distribution]) -> Contents:
    contents = Contents()
    for dist in dists:
        source = _editable_source(dist)
        if source is None:
            add_installed(contents, dist)
        elif canonical(dist.metadata["Name"]) == ROOT:
            add_editable(contents, dist, source)
        else:
            raise PackProblem(f"{dist.metadata['Name']} is installed from its source tree (pip install -e {source}): "
                              "install it from a wheel to pack it")
    return contents


def manifest(dists: list[metadata.Distribution]) -> dict:
    return {"python": "%d.%d" % sys.version_info[:2], "implementation": sys.implementation.name,
            "platform": sysconfig.get_platform(), "soabi": sysconfig.get_config_var("SOABI"),
            "packed_with": sys.executable, "left_out": list(LEFT_OUT),
            "distributions": {d.metadata["Name"]: d.version for d in dists}}


def write_archive(out: Path, contents: Contents, info: dict) -> None:
    """A .tar.gz of the files at its root (what --archives unpacks into the directory named after
    `#`), written beside OUT and renamed into place."""
    def plain(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        return member

    part = out.with_name(out.name + ".part")
    try:
        with tarfile.open(part, "w:gz", compresslevel=6) as tar:
            for name in sorted(contents.files):
                tar.add(contents.files[name], arcname=name, recursive=False, filter=plain)
            body = json.dumps(info, indent=1, sort_keys=True).encode() + b"\n"
            member = plain(tarfile.TarInfo(MANIFEST))
            member.size, member.mtime, member.mode = len(body), int(os.path.getmtime(part)), 0o644
            tar.addfile(member, io.BytesIO(body))
        os.replace(part, out)
    finally:
        if part.exists():
            part.unlink()


def _ask(python: str, code: str, seconds: float, what: str, **options) -> str:
    """What `python -c code` printed after ANSWER; a PackProblem when it does not run, does not
    answer within `seconds` (it is killed), or prints no answer."""
    try:
        run = subprocess.run([python, "-c", code], capture_output=True, text=True, errors="replace",
                             timeout=seconds, stdin=subprocess.DEVNULL, **options)
    except subprocess.TimeoutExpired:
        raise PackProblem(f"{python} did not answer within {seconds:g} seconds when {what}; it was stopped") from None
    except OSError as err:
        raise PackProblem(f"{python} does not run: {err.strerror or err}") from None
    answers = [line[len(ANSWER):] for line in run.stdout.splitlines() if line.startswith(ANSWER)]
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise PackProblem(f"{python} failed when {what} (exit status {run.returncode}): {last}")
    if len(answers) != 1:
        shown = run.stdout.strip()[-300:] or "(nothing)"
        raise PackProblem(f"{python} gave no answer when {what}; it printed: {shown}")
    return answers[0]


def version_of(python: str) -> str:
    version = _ask(python, VERSION, VERSION_SECONDS, "asked its version")
    if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version):
        raise PackProblem(f"{python} answered {version[:80]!r} when asked its version")
    return version


def probe(python: str, archive: Path) -> dict:
    """Unpack the archive and import kafkacodec from it with `python`, as a worker would."""
    with tempfile.TemporaryDirectory(prefix="kafkacodec-pack-") as tmp:
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
                tar.extractall(tmp, filter="data")
            else:
                tar.extractall(tmp)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": tmp, "PYTHONNOUSERSITE": "1"}
        answer = _ask(python, PROBE, PROBE_SECONDS, f"importing kafkacodec from {archive}", env=env, cwd=tmp)
    try:
        got = json.loads(answer)
        return {"python": str(got["python"]), "kernels": bool(got["kernels"])}
    except (ValueError, KeyError, TypeError):
        raise PackProblem(f"{python} answered {answer[:80]!r} when importing kafkacodec from {archive}") from None


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


@click.command("pack-env")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--python", "python", default=None, metavar="PATH",
              help="The interpreter every node runs the workers with, at the same path everywhere "
                   "(default: /usr/bin/python3.X, X this Python's minor version). Checked when it is on this machine.")
@click.option("--with", "also", multiple=True, metavar="NAME",
              help="Pack this installed distribution too, with what it needs (e.g. pandas, for pandas UDFs).")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def pack_env(out: Path, python: str | None, also: tuple[str, ...], force: bool) -> None:
    """Pack kafkacodec and its run-time dependencies as installed here (kafkacodec[columnar],
    compiled extensions included; not pyspark, py4j or pandas) into OUT.tar.gz, for Spark's
    executors: --archives OUT.tar.gz#deps with spark.executorEnv.PYTHONPATH=./deps and
    spark.pyspark.python set to a Python of this minor version that every node has (the
    README's recipe for a cluster, which docs/recipes/spark-cluster.sh runs)."""
    if out.exists() and not force:
        raise PackProblem(f"{out} exists; pass --force to replace it")
    python = python or "/usr/bin/python%d.%d" % sys.version_info[:2]
    dists = distributions(((ROOT, EXTRAS),) + tuple((name, ()) for name in also))
    contents = collect(dists)
    info = manifest(dists)
    present = os.path.exists(python)
    if present:  # an interpreter that cannot serve is said before the archive is written
        version = version_of(python)
        if version.rsplit(".", 1)[0] != info["python"]:
            raise PackProblem(f"{python} is Python {version}, but {out} would hold modules for {info['python']} (and "
                              f"Spark wants the driver's minor version on the workers): name a Python {info['python']} "
                              "with --python")
    write_archive(out, contents, info)
    size = out.stat().st_size
    names = ", ".join(f"{d.metadata['Name']} {d.version}" for d in dists)
    click.echo(f"wrote {out} ({_mib(size)}, {len(contents.files)} files) for {info['implementation']} "
               f"{info['python']} on {info['platform']}: {names}; not pyspark or py4j, which the cluster's Spark "
               "brings")
    for module in contents.stale:
        click.echo(f"warning: {module} is built from other source than the one beside it: left out, so the "
                   "workers read in pure Python (rebuild it: pip install -e . again)", err=True)
    if not present:
        click.echo(f"not checked: {python} is not on this machine; every node needs a Python {info['python']} there "
                   "(or name it with --python)")
    else:
        got = probe(python, out)
        compiled = ("with the compiled kernels" if got["kernels"] else "in pure Python (no compiled kernels)")
        click.echo(f"checked: {python} (Python {got['python']}) imports kafkacodec from it, {compiled}")
    click.echo(f"run the workers with: --archives {out}#deps --conf spark.executorEnv.PYTHONPATH=./deps "
               f"--conf spark.pyspark.python={python}")
