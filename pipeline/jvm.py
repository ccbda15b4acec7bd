"""The JVM reader of kafka-log (pipeline/java, around the Java readers generated from the schemas):
its jar, compiled with javac against the installed pyspark's jars the first time a session needs it
(a second or two) and kept beside the package, or in the user's cache where that is read-only.
No pyspark import until a session is at hand."""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the Java sources: the runtime, the generated readers, the data source (in a wheel, beside each
# package's modules)
SOURCE_ROOTS = ("runtime/java", "generated/java", "pipeline/java")
SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
SOURCE_NAME = "kafka-log-jvm"
CANNOT_DECODE = "the JVM reader cannot decode"  # how it refuses a typed column (AvroColumn.java)


class JvmReaderUnavailable(RuntimeError):
    """The JVM reader cannot be built or loaded here; the message says why."""


def _roots() -> list[Path]:
    base = HERE.parent  # the repository root in an editable install, kafkacodec/ in a wheel: the same folders
    roots = [base / r for r in SOURCE_ROOTS]
    if not all(r.is_dir() for r in roots):
        raise JvmReaderUnavailable(f"the Java sources are not installed beside {HERE}")
    return roots


def _spark_jars() -> Path:
    """The jars of the Spark this process runs: SPARK_HOME's (spark-submit sets it, and imports pyspark
    from a zip inside it), else the pip-installed pyspark's."""
    candidates = [Path(os.environ["SPARK_HOME"]) / "jars"] if os.environ.get("SPARK_HOME") else []
    try:
        import pyspark
        candidates.append(Path(pyspark.__file__).parent / "jars")
    except ImportError:
        pass
    for jars in candidates:
        if any(jars.glob("spark-sql_*.jar")):
            return jars
    raise JvmReaderUnavailable("no Spark jars to compile against (pyspark is not installed, and SPARK_HOME "
                               "has no jars/)" if not candidates else
                               f"no Spark jars in {' or '.join(map(str, candidates))}")


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    found = (str(Path(home) / "bin" / "javac") if home and (Path(home) / "bin" / "javac").exists()
             else shutil.which("javac"))
    if found is None:
        raise JvmReaderUnavailable("no JDK (javac) here: install one, e.g. Debian's openjdk-17-jdk-headless")
    return found


def _sources() -> list[Path]:
    return sorted(p for root in _roots() for p in root.rglob("*.java"))


def _digest(sources: list[Path], jars: Path) -> str:
    h = hashlib.sha256(jars.resolve().as_posix().encode())
    h.update(" ".join(sorted(p.name for p in jars.glob("spark-sql_*.jar"))).encode())  # the Spark it builds for
    for p in sources:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _named() -> tuple[list[Path], Path, str]:
    """The sources, the Spark jars and the jar's name: found and hashed once a process, not at every read."""
    sources, jars = _sources(), _spark_jars()
    return sources, jars, f"kafkacodec-spark-{_digest(sources, jars)}.jar"


def _jar_dirs() -> list[Path]:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafkacodec"
    return [HERE / "jars", cache]


def jar(build: bool = True) -> Path:
    """The reader's jar for these sources and this pyspark, built when missing (`build`); raises
    JvmReaderUnavailable saying why there is none."""
    sources, jars, name = _named()
    for folder in _jar_dirs():
        if (folder / name).exists():
            return folder / name
    if not build:
        raise JvmReaderUnavailable("the JVM reader's jar is not built (kafkacodec.pipeline.jvm.jar() builds it)")
    javac = _javac()
    problems = []
    for folder in _jar_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return _build(javac, sources, jars, folder / name)
        except OSError as err:  # a read-only install: the next folder
            problems.append(f"{folder}: {err.strerror or err}")
    raise JvmReaderUnavailable("nowhere to keep the JVM reader's jar (" + "; ".join(problems) + ")")


def _build(javac: str, sources: list[Path], jars: Path, target: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="kafkacodec-javac-") as tmp:
        classes = Path(tmp) / "classes"
        done = subprocess.run([javac, "--release", "17", "-nowarn", "-cp", str(jars / "*"), "-d", str(classes),
                               *map(str, sources)], capture_output=True, text=True)
        if done.returncode != 0:
            raise JvmReaderUnavailable(f"javac failed on the JVM reader: {done.stderr.strip()[-2000:]}")
        service = next(root / SERVICE for root in _roots() if (root / SERVICE).exists())
        handle, partial_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(handle)
        partial = Path(partial_name)  # one of its own for each builder, processes and threads alike
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            z.write(service, SERVICE)
            for f in sorted(classes.rglob("*.class")):
                z.write(f, f.relative_to(classes).as_posix())
        os.replace(partial, target)  # whole or not at all, whatever runs beside it
    if target.parent == HERE / "jars":  # this install's own folder (the shared cache serves other installs too)
        for stale in target.parent.glob("kafkacodec-spark-*.jar"):  # of earlier sources of this install
            if stale != target:
                stale.unlink(missing_ok=True)
    return target


def configure(builder):
    """A SparkSession builder that loads the JVM reader in every thread of the session it builds
    (spark.jars), where it can be built; the builder as it was otherwise."""
    try:
        path = jar().as_posix()
    except JvmReaderUnavailable:
        return builder
    given = getattr(builder, "_options", {}).get("spark.jars")  # the user's own jars stay
    return builder.config("spark.jars", f"{given},{path}" if given else path)


def attach(spark) -> Path:
    """Make the JVM reader usable from this Python thread of `spark`'s session: its jar built if need
    be, then added with SQL's ADD JAR (which serves the thread that runs it; again is harmless)."""
    path = jar()
    quoted = path.as_posix().replace("\\", "\\\\").replace("'", "\\'")  # a SQL string literal's escapes
    spark.sql(f"ADD JAR '{quoted}'")
    return path


if __name__ == "__main__":  # make install and make test build the jar ahead of the first session
    try:
        print(jar())
    except JvmReaderUnavailable as err:
        print(f"kafkacodec: no JVM reader for Spark: {err}; the Python data source is used")
