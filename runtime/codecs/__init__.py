"""Compression codecs by Kafka's codec id, and the processors that schemas name in `process:`.

A codec is registered under its id with a bounded `decompress(data, limit, magic)` and a
`compress(data, magic)`. Users may register their own codecs and processors. Every
decompression stops with LimitExceededError as soon as output would pass `limit` bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import CompressionError
from ..limits import LIMITS
from . import gzip_codec, lz4_codec, snappy_codec, zstd_codec


@dataclass(frozen=True)
class Codec:
    id: int
    name: str
    decompress: Callable[[bytes, int, int], bytes]
    compress: Callable[[bytes, int], bytes]


CODECS: dict[int, Codec] = {}
_MADE: dict[tuple, object] = {}  # processors by (name, args): they hold no state between uses
_LISTENERS: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever a codec or a processor is registered: compiled writers keep
    whether the processor they last made leaves bytes as they are."""
    _LISTENERS.append(listener)


def _changed() -> None:
    _MADE.clear()  # processors made before hold the codec they found then
    for listener in _LISTENERS:
        listener()


def register_codec(codec: Codec) -> None:
    CODECS[codec.id] = codec
    _changed()


def codec(codec_id: int) -> Codec:
    try:
        return CODECS[codec_id]
    except KeyError:
        raise CompressionError(f"unknown compression codec id {codec_id}") from None


def _identity_decompress(data, limit, magic):
    return bytes(data)


def _identity_compress(data, magic):
    return bytes(data)


register_codec(Codec(0, "none", _identity_decompress, _identity_compress))
register_codec(Codec(1, "gzip", gzip_codec.decompress, gzip_codec.compress))
register_codec(Codec(2, "snappy", snappy_codec.decompress, snappy_codec.compress))
register_codec(Codec(3, "lz4", lz4_codec.decompress, lz4_codec.compress))
register_codec(Codec(4, "zstd", zstd_codec.decompress, zstd_codec.compress))


class KafkaCompression:
    """The `kafka_compression(codec_id, magic)` processor: Kafka's codecs with their framings."""

    __slots__ = ("codec", "magic", "identity")

    def __init__(self, codec_id: int, magic: int):
        self.codec = codec(int(codec_id))
        self.magic = int(magic)
        self.identity = self.codec.id == 0  # generated code parses in place, no copy

    def decode(self, data, limit: int | None = None) -> bytes:
        if limit is None:
            limit = LIMITS.max_decompressed_bytes
        return self.codec.decompress(data, limit, self.magic)

    def encode(self, data) -> bytes:
        return self.codec.compress(bytes(data), self.magic)


PROCESSORS: dict[str, Callable[..., object]] = {"kafka_compression": KafkaCompression}


def register_processor(name: str, factory: Callable[..., object]) -> None:
    """Make `process: name(args)` in a schema call `factory(*args)` for decode/encode. The
    processor made for given arguments is kept and used again, so it must hold no state."""
    PROCESSORS[name] = factory
    _changed()


def processor(name: str, *args):
    made = _MADE.get((name, args))
    if made is not None:
        return made
    try:
        factory = PROCESSORS[name]
    except KeyError:
        raise CompressionError(f"no processor registered under {name!r}") from None
    made = _MADE[(name, args)] = factory(*args)
    return made
