"""A tight hand-written pure-Python v2 reader, the reference the generated decoder is measured
against: struct.unpack_from for the header, inlined varints, tuples for records."""
from __future__ import annotations

import struct

_HEADER = struct.Struct(">qiibIhiqqqhii")


def _varint(buf, pos):
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7


def read_records(buf, pos=0):
    """(offset, timestamp, key, value, headers) of every record of the uncompressed batch at pos."""
    (base_offset, length, _epoch, _magic, _crc, attrs, _lod, base_ts, max_ts, _pid, _pe, _seq,
     count) = _HEADER.unpack_from(buf, pos)
    log_append = attrs & 0x08
    pos += 61
    out = []
    append = out.append
    for _ in range(count):
        _length, pos = _varint(buf, pos)
        pos += 1  # attributes
        ts_delta, pos = _varint(buf, pos)
        off_delta, pos = _varint(buf, pos)
        klen, pos = _varint(buf, pos)
        if klen >= 0:
            key = buf[pos:pos + klen]
            pos += klen
        else:
            key = None
        vlen, pos = _varint(buf, pos)
        if vlen >= 0:
            value = buf[pos:pos + vlen]
            pos += vlen
        else:
            value = None
        hcount, pos = _varint(buf, pos)
        headers = []
        for _ in range(hcount):
            hklen, pos = _varint(buf, pos)
            hkey = buf[pos:pos + hklen].decode()
            pos += hklen
            hvlen, pos = _varint(buf, pos)
            if hvlen >= 0:
                hval = buf[pos:pos + hvlen]
                pos += hvlen
            else:
                hval = None
            headers.append((hkey, hval))
        append((base_offset + off_delta, max_ts if log_append else base_ts + ts_delta, key, value, headers))
    return out
