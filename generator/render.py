"""Render plans with one Jinja2 environment; templates only lay out text."""
from __future__ import annotations

from pathlib import Path

import jinja2

from . import GENERATOR_VERSION
from .plans.imports import import_lines
from .plans.module import ModulePlan

TEMPLATES = Path(__file__).parent / "templates"


def _body(lines: list[str], indent: int) -> str:
    pad = " " * indent
    return "\n".join(pad + line if line else "" for line in lines)


def _docstring(text: str, indent: int = 0, closing: bool = True) -> str:
    text = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    lines = text.splitlines()
    if len(lines) <= 1:
        return text
    body = lines[0] + "\n" + "\n".join(pad + line if line.strip() else "" for line in lines[1:])
    return body + "\n" + pad if closing else body


def _oneline(text: str) -> str:
    return " ".join((text or "").split())


def _hexbytes(data: bytes, limit: int = 16) -> str:
    text = data[:limit].hex(" ")
    return f"`{text}` … ({len(data)} bytes)" if len(data) > limit else f"`{text}`" if data else ""


def _layout(fields, indent: int) -> str:
    """A dict of (offset, width) by field name, on one line when it fits."""
    items = [f'"{name}": ({offset}, {width})' for name, offset, width in fields]
    one = "{" + ", ".join(items) + "}"
    if indent + len("LAYOUT = ") + len(one) <= 110:
        return one
    pad = " " * (indent + 4)
    return "{\n" + "".join(f"{pad}{item},\n" for item in items) + " " * indent + "}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["body"] = _body
    env.filters["docstring"] = _docstring
    env.filters["oneline"] = _oneline
    env.filters["hexbytes"] = _hexbytes
    env.filters["layout"] = _layout
    env.filters["pyrepr"] = repr
    return env


def render_module(plan: ModulePlan, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    text = env.get_template("module.py.j2").render(m=plan, version=GENERATOR_VERSION,
                                                   runtime_imports=import_lines(template_names(plan) | plan.runtime_names).rstrip("\n"))
    return text.rstrip("\n") + "\n"


def template_names(plan: ModulePlan) -> set[str]:
    """The runtime names the template itself writes, by what the plan holds."""
    used = {"_Node"} if plan.classes else set()
    if plan.enums:
        used.add("IntEnum")
    if plan.structs:
        used.add("Struct")
    if plan.compiled:
        used.add("_attach_compiled")
    return used
