"""Drive a run: load every schema, run the passes, plan and render, collecting all problems."""
from __future__ import annotations

from pathlib import Path

from . import GENERATOR_VERSION
from .build import Builder
from .passes import run as run_passes
from .compiled.module import CythonPlanner, source_sha256
from .ir import IR
from .java.emitter import JavaEmitter
from .plans.module import ModulePlanner
from .problems import CompileFailed, Problems
from .program import Program
from .render import environment, render_module
from .source import load


def load_program(schema_dir: Path, problems: Problems) -> Program:
    schemas = {}
    for path in sorted(schema_dir.glob("*.ksy")):
        # "schemas/x.ksy" wherever the checkout is, so output never depends on its location
        name = f"{schema_dir.name}/{path.name}"
        data = path.read_bytes()
        tree = load(data.decode("utf-8", errors="replace"), name, problems)
        if tree is None:
            continue
        schema = Builder(name, problems).schema(tree, data)
        if schema is None:
            continue
        if schema.id != path.stem:
            problems.add(schema.id_loc or schema.loc,
                         f"meta/id {schema.id!r} must match the file name {path.stem!r} (imports find files by id)")
        if schema.id in schemas:
            problems.add(schema.loc, f"schema id {schema.id!r} is defined twice")
            continue
        schemas[schema.id] = schema
    for schema in schemas.values():
        for imp in schema.imports:
            if imp not in schemas:
                problems.add(schema.imports_loc or schema.loc,
                             f"imported schema {imp!r} has no file {imp}.ksy beside this schema")
    return Program(schemas)


def compile_dir(schema_dir: Path) -> dict[str, str]:
    """Return {relative output path: text} for every schema, or raise CompileFailed."""
    return compile_program(schema_dir)[1]


def compile_program(schema_dir: Path) -> tuple[Program, dict[str, str]]:
    """The checked program (for the docs) and the code outputs, or raise CompileFailed."""
    problems = Problems()
    program = load_program(schema_dir, problems)
    run_passes(program, problems)  # on every schema that loaded, so one run reports everything
    outputs: dict[str, str] = {}
    if not problems:
        env = environment()
        ir = IR(program)  # each type's facts, made once and shared by every module and backend
        modules = []
        for sid, schema in sorted(program.schemas.items()):
            if schema.root.intrinsic:
                continue  # implemented by the runtime; nothing to generate
            planner = ModulePlanner(program, schema, problems, ir)
            plan = planner.plan()
            compiled = CythonPlanner(planner, schema).module()
            if compiled is not None:  # the Python module uses it only if built from this text
                outputs[f"_c_{sid}.pyx"] = compiled
                plan.compiled = (f"_c_{sid}", source_sha256(compiled))
            outputs[f"{sid}.py"] = render_module(plan, env)
            java = JavaEmitter(program, ir, schema, problems)
            java_source = java.source()
            if java_source is not None:  # (read by the JVM reader for Spark)
                outputs[java.path()] = java_source
            modules.append((sid, plan.root_class, plan.title))
        outputs["__init__.py"] = env.get_template("package.py.j2").render(
            modules=modules, version=GENERATOR_VERSION).rstrip("\n") + "\n"
    if problems:
        raise CompileFailed(problems.sorted())
    return program, outputs
