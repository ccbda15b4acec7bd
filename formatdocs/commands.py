"""The command reference page, written from the `kafkacodec` command's own definitions (its
click commands' help and options), so that it cannot drift from what the command accepts."""
from __future__ import annotations

import inspect

import click


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _options(command: click.Command) -> list[tuple[str, str]]:
    rows = []
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names = ", ".join(f"`{o}`" for o in param.opts + param.secondary_opts)
            value = "" if param.is_flag else f" {param.make_metavar(click.Context(command))}"
            rows.append((names + value, param.help or ""))
    return rows


def commands_markdown(main: click.Group, extra_options: dict[str, list[tuple[str, str]]]) -> str:
    """Markdown: the group's options, then a section per command (usage, help, options).
    `extra_options`: the options of commands that parse their own (dump-log)."""
    ctx = click.Context(main, info_name="kafkacodec")
    out = ["# Command reference", "",
           "Every command of `kafkacodec`, as `kafkacodec COMMAND --help` describes it. Options before the "
           "command name apply to all of them:", "", "| option | meaning |", "|---|---|"]
    out += [f"| {_cell(name)} | {_cell(text)} |" for name, text in _options(main)]
    for name in sorted(main.commands):
        command = main.commands[name]
        sub = click.Context(command, info_name=name, parent=ctx)
        usage = " ".join(command.collect_usage_pieces(sub))
        out += ["", f"## `kafkacodec {name}`", "", f"`kafkacodec {name} {usage}`", "",
                inspect.cleandoc(command.help or ""), ""]
        rows = extra_options.get(name) or _options(command)
        if rows:
            out += ["| option | meaning |", "|---|---|"]
            out += [f"| {_cell(option)} | {_cell(text)} |" for option, text in rows]
    return "\n".join(out) + "\n"
