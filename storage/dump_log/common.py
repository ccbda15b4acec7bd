"""What every listing of Kafka's kafka-dump-log shares: the options and end-of-run reports, the
failure that ends a run (`Crash`), Java's reading of numbers and paths, and the framing of a
batch as FileLogInputStream reads it."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Callable, Iterator

from kafkacodec.codec.places import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, SIZE_AT
from ..segments.scan import MIN_RECORD_OVERHEAD
from .record_text import utf8

INT32_MAX = 2 ** 31 - 1
MAX_MESSAGE_SIZE = 5 * 1024 * 1024  # --max-message-size's default
Line = tuple[str, str]
Parser = Callable[[object], tuple[str | None, str | None]]  # record -> (key text, payload text)


class Crash(Exception):
    """What ends a run of Kafka's tool with an exception: the message says where and why."""


@dataclass
class Options:
    deep: bool = False
    print_data: bool = False
    skip_metadata: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_bytes: int | str = INT32_MAX  # as given: converted when a file needs it, as Kafka's tool does
    max_message_size: int | str = MAX_MESSAGE_SIZE
    parser: Parser = utf8
    progress: Callable[[int], None] | None = None  # told each listed batch's size


@dataclass
class Reports:
    """What Kafka's tool prints on stderr after all files, per file (by absolute path)."""
    offset_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def lines(self) -> Iterator[str]:
        for path, pairs in self.offset_mismatches.items():
            yield f"Mismatches in :{path}"
            yield from (f"  Index offset: {a}, log offset: {b}" for a, b in reversed(pairs))  # Kafka prepends
        for path, pairs in self.time_mismatches.items():
            yield f"Found timestamp mismatch in :{path}"
            yield from (f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs)
        for path, pairs in self.out_of_order.items():
            yield f"Found out of order timestamp in :{path}"
            yield from (f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs)
        for pairs in self.not_found.values():
            yield "The following indexed offsets are not found in the log."
            yield from (f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs)
        for path, pairs in self.non_consecutive.items():
            yield f"Non-consecutive offsets in {path}"
            yield from (f"  {a} is followed by {b}" for a, b in reversed(pairs))


def java_path(arg: str) -> str:
    """A path as java.io.File prints it: repeated and trailing slashes dropped, nothing else."""
    text = "/".join(p for p in arg.split("/") if p) if "//" in arg or arg.endswith("/") else arg
    return ("/" + text if arg.startswith("/") and not text.startswith("/") else text) or ("/" if arg else "")


def absolute(shown: str) -> str:
    """File.getAbsolutePath: the working directory joined, nothing resolved."""
    return shown if shown.startswith("/") else f"{os.getcwd()}/{shown}"


def java_integer(text: str, bits: int) -> int | None:
    """Integer.parseInt / Long.parseLong: an optional sign and ASCII digits within `bits` bits;
    None where Java would throw."""
    body = text[1:] if text[:1] in "+-" else text
    if not (body.isascii() and body.isdigit()) or not -2 ** (bits - 1) <= int(text) < 2 ** (bits - 1):
        return None
    return int(text)


def int_option(value: int | str, name: str) -> int:
    """An Integer option's value, converted when first used, as Kafka's tool converts it."""
    number = java_integer(str(value), 32)
    if number is None:
        raise Crash(f"--{name}: cannot parse {str(value)!r} as an integer")
    return number


def size_option(size: int, name: str, shown: str) -> int:
    if size < 0:  # found when the file is read, after its header line
        raise Crash(f"{shown}: --{name} {size}: a size cannot be negative")
    return size


def java_long(text: str, what: str) -> int:
    """A number Kafka reads from a file name with Long.parseLong, else a crash naming the text."""
    number = java_integer(text, 64)
    if number is None:
        raise Crash(f"{what}: {text!r} is not a number (Kafka reads it from the file name)")
    return number


def kafka_frame(head: bytes, at: int, pos: int, end: int, shown: str) -> int | None:
    """The size, prefix included, of the batch at file position `pos` (its header at `head[at:]`)
    as FileLogInputStream gives it before `end`: None where that reader stops quietly (17 bytes or
    fewer left, or a batch that does not fit), a Crash on a size below 14."""
    if end - pos <= HEADER_SIZE_UP_TO_MAGIC:
        return None
    size = struct.unpack_from(">i", head, at + SIZE_AT)[0]
    if size < MIN_RECORD_OVERHEAD:
        raise Crash(f"{shown}: byte {pos}: batch size {size} is smaller than the minimum record overhead "
                    f"({MIN_RECORD_OVERHEAD})")
    return None if pos > end - LOG_OVERHEAD - size else LOG_OVERHEAD + size
