"""The runtime on its own: varints, checksums, codecs and their limits."""
import struct
import zlib

import pytest
import zstandard

from kafkacodec.runtime import varint
from kafkacodec.runtime.codecs import KafkaCompression, lz4_codec, snappy_codec
from kafkacodec.runtime.crc import crc32, crc32c
from kafkacodec.runtime.errors import CompressionError, InvalidValueError, LimitExceededError, TruncatedError


def zz32(buf):
    return varint.read_zigzag32(buf, 0, len(buf))


def test_zigzag_examples():
    assert zz32(b"\x01") == (-1, 1)
    assert zz32(b"\x00") == (0, 1)
    assert zz32(b"\x02") == (1, 1)
    assert zz32(b"\xfe\xff\xff\xff\x0f") == (2147483647, 5)
    assert zz32(b"\xff\xff\xff\xff\x0f") == (-2147483648, 5)
    out = bytearray()
    varint.write_zigzag64(out, -(2 ** 63))
    assert len(out) == 10 and varint.read_zigzag64(bytes(out), 0, 10) == (-(2 ** 63), 10)


def test_varint_bounds():
    with pytest.raises(InvalidValueError) as e:
        zz32(b"\x80\x80\x80\x80\x80\x01")
    assert e.value.position == 0 and "5 bytes" in str(e.value)
    with pytest.raises(InvalidValueError):
        varint.read_zigzag64(b"\x80" * 10 + b"\x01", 0, 11)
    with pytest.raises(TruncatedError):
        zz32(b"\x80\x80")
    with pytest.raises(ValueError):
        varint.write_zigzag32(bytearray(), 2 ** 31)


def test_fifth_byte_high_bits_are_dropped_as_kafka_does():
    assert varint.read_uvarint(b"\xff\xff\xff\xff\x7f", 0, 5) == (0xFFFFFFFF, 5)


def test_checksums():
    assert crc32c(b"Some String") == 608512271  # Kafka's Crc32CTest constant
    assert crc32(b"hello") == zlib.crc32(b"hello")


def test_lz4_frame_header_matches_the_lz4_library():
    # magic 1/2 hash FLG+BD as the LZ4 frame format says; lz4.frame writes the same descriptor
    import lz4.frame
    reference = lz4.frame.compress(b"x" * 100, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                   content_checksum=False, store_size=False)
    assert lz4_codec.compress(b"x" * 100)[:7] == reference[:7]
    assert lz4_codec.compress(b"x" * 100, magic=0)[:6] == reference[:6]
    assert lz4_codec.compress(b"x" * 100, magic=0)[6] != reference[6]  # magic 0 hashes the magic too


def test_lz4_kafka_headers():
    assert lz4_codec.compress(b"x", magic=1)[:7] == bytes.fromhex("04224d18604082")
    assert lz4_codec.compress(b"x", magic=0)[:7] == bytes.fromhex("04224d1860401a")
    broken = lz4_codec.compress(b"data" * 100, magic=0)
    assert lz4_codec.decompress(broken, 1 << 20, magic=0) == b"data" * 100
    with pytest.raises(CompressionError, match="descriptor"):
        lz4_codec.decompress(broken, 1 << 20, magic=1)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 70_000, 300_000])
def test_codec_round_trip(codec, size):
    data = bytes((i * 7) % 251 for i in range(size))
    k = KafkaCompression(codec, 2)
    assert k.decode(k.encode(data)) == data


def test_snappy_raw_block_and_concatenated_streams():
    import cramjam
    raw = bytes(cramjam.snappy.compress_raw(b"abc" * 10))
    assert snappy_codec.decompress(raw, 1000) == b"abc" * 10
    two = snappy_codec.compress(b"one") + snappy_codec.compress(b"two")
    assert snappy_codec.decompress(two, 1000) == b"onetwo"


def test_gzip_concatenated_members():
    k = KafkaCompression(1, 2)
    assert k.decode(k.encode(b"ab") + k.encode(b"cd")) == b"abcd"


def bomb_inputs():
    big = b"\0" * (80 << 20)
    zstd_no_size = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    zstd_frame = zstd_no_size.compress(big) + zstd_no_size.flush()
    return {1: KafkaCompression(1, 2).encode(big), 2: snappy_codec.compress(big),
            3: lz4_codec.compress(big), 4: zstd_frame}


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_decompression_bombs_stop_at_the_limit(codec):
    data = bomb_inputs()[codec]
    with pytest.raises(LimitExceededError):
        KafkaCompression(codec, 2).decode(data, limit=1 << 20)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_damaged_streams_raise_compression_errors(codec):
    good = KafkaCompression(codec, 2).encode(b"hello world " * 1000)
    for damaged in (good[: len(good) // 2], good[:3], b"\x00" * 20):
        with pytest.raises((CompressionError, LimitExceededError)):
            KafkaCompression(codec, 2).decode(damaged)


def test_snappy_negative_chunk_length():
    data = snappy_codec.XERIAL_HEADER + struct.pack(">i", -5)
    with pytest.raises(CompressionError, match="chunk length"):
        snappy_codec.decompress(data, 1000)


def test_unknown_codec():
    with pytest.raises(CompressionError, match="unknown compression codec id 6"):
        KafkaCompression(6, 2)


def test_lz4_frames_from_other_writers():
    """Frames with a content size, block and content checksums (as the lz4 library writes them)."""
    import lz4.frame
    data = bytes(range(256)) * 1000
    for kw in ({}, {"store_size": True}, {"block_checksum": True, "content_checksum": True},
               {"block_size": lz4.frame.BLOCKSIZE_MAX4MB, "store_size": True}):
        frame = lz4.frame.compress(data, block_linked=False, **kw)
        assert KafkaCompression(3, 2).decode(frame) == data, kw
    corrupt = bytearray(lz4.frame.compress(data, block_linked=False, block_checksum=True))
    corrupt[-12] ^= 1  # inside the last block's data
    with pytest.raises(CompressionError):
        KafkaCompression(3, 2).decode(bytes(corrupt))


def test_zstd_frames_without_content_size_and_concatenated():
    c = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frame = c.compress(b"abc" * 1000) + c.flush()
    other = zstandard.ZstdCompressor().compress(b"xyz")
    assert KafkaCompression(4, 2).decode(frame + other) == b"abc" * 1000 + b"xyz"
    with pytest.raises(CompressionError, match="not valid for magic 1"):
        KafkaCompression(4, 1).decode(frame)


def test_zstd_frames_that_declare_their_size_read_in_one_step_within_the_limit():
    from kafkacodec.runtime.codecs import zstd_codec
    data = bytes(range(256)) * 400
    frame = zstandard.ZstdCompressor().compress(data)
    assert zstandard.frame_content_size(frame) == len(data)
    assert zstd_codec.decompress(frame, len(data)) == data
    with pytest.raises(LimitExceededError):  # a size over the limit is read in steps, and stopped
        zstd_codec.decompress(frame, len(data) - 1)
    # a header that understates the size: never more output than the limit, whatever it says
    lying = bytearray(frame)
    params = zstandard.get_frame_parameters(frame)
    assert params.content_size == len(data)
    at = frame.index(len(data).to_bytes(4, "little"))  # the content size field, little-endian
    lying[at:at + 4] = (100).to_bytes(4, "little")
    with pytest.raises((CompressionError, LimitExceededError)):
        zstd_codec.decompress(bytes(lying), 1000)
    # several frames: all of them, in steps
    assert zstd_codec.decompress(frame + frame, 2 * len(data)) == data + data


def test_the_varint_tables_hold_exactly_the_values_generated_code_looks_up():
    # generated code indexes the tables with any value below TABLE_LIMIT and encodes larger ones
    assert len(varint.SMALL_VARINTS) == len(varint.SMALL_ZIGZAG) == varint.TABLE_LIMIT
    for u in range(varint.TABLE_LIMIT):
        assert varint.read_uvarint(varint.SMALL_VARINTS[u], 0, 2) == (u, len(varint.SMALL_VARINTS[u]))
        assert varint.read_zigzag32(varint.SMALL_VARINTS[u], 0, 2)[0] == varint.SMALL_ZIGZAG[u]
    assert varint.uvarint_size(varint.TABLE_LIMIT - 1) == 2 < varint.uvarint_size(varint.TABLE_LIMIT)
    longest = (1 << 32) - 1, (1 << 64) - 1
    assert [varint.uvarint_size(u) for u in longest] == [varint.MAX_VARINT_BYTES, varint.MAX_VARLONG_BYTES]
