"""Text for a terminal. Names and values read from Kafka's files (topic names in metadata
records, configs, hosts, keys) may hold characters that a terminal acts on instead of showing: a
carriage return or an escape sequence rewrites what is on the screen, a newline forges a line of
output, a bidirectional override reorders it. In text output they are written as Python writes
escapes (`\\r`, `\\x1b`, `\\u202e`), and a backslash as `\\\\`, so that no two texts look the
same. JSON output needs none of this: json.dumps, ASCII by default, escapes them (DEL and every
character past ASCII included) itself.

`dump-log` alone prints them raw: its output is Kafka's kafka-dump-log's byte for byte."""
from __future__ import annotations

import re

import click

SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# control characters (C0, DEL, C1), line and paragraph separators, the format characters that
# reorder or hide text (bidi marks, overrides and isolates, zero-width ones, tags), lone
# surrogates (bytes that were not UTF-8), and the backslash that starts an escape
_ACTED_ON = re.compile(r"[\\\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
                       r"\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]")


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in SHORT:
        return SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str) -> str:
    """`text` with every character a terminal would act on written as an escape."""
    return _ACTED_ON.sub(_escape, text) if _ACTED_ON.search(text) else text


_ACTED_ON_ONLY = re.compile(_ACTED_ON.pattern.replace("\\\\", "", 1))


def shown_quoted(text: str) -> str:
    """As shown(), its backslashes left alone: for text whose values are quoted as JSON already
    (escapes of their own, which doubled would read as other values)."""
    return _ACTED_ON_ONLY.sub(_escape, text)


def say(text: str, err: bool = False) -> None:
    """A line of text output whose names or data come from files, escaped (a line is one line:
    a newline in it is a name's, not ours)."""
    click.echo(shown(text), err=err)


def cell(text: str) -> str:
    """A name for a cell of a rich table: escaped, and its square brackets not read as markup."""
    from rich.markup import escape

    return escape(shown(text))
