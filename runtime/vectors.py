"""Vectorised field readers for the generated `_columns` methods: one call reads the same field of
N instances at once, from positions into a uint8 numpy array.

Positions are int32 arrays for buffers below 2 GiB (int64 above): narrow arrays keep every pass
in cache, which matters more than anything else here; a gather costs several times an arithmetic
pass, so each field is read with as few gathers as possible. Every bound is checked against each
instance's own end, and errors are the scalar readers' errors, naming the first instance that
fails.
"""
from __future__ import annotations

import numpy as np

from .errors import InvalidValueError, LimitExceededError, TruncatedError
from .limits import LIMITS


def position_type(size: int):
    """The dtype of positions into a buffer of `size` bytes: int32 with room to spare above the
    end, so that a position a few fields past it cannot wrap."""
    return np.int32 if size < 2 ** 31 - 2 ** 16 else np.int64


def _first(bad: np.ndarray, pos: np.ndarray) -> int:
    return int(pos[np.flatnonzero(bad)[0]])


def _at(end, index):
    return end[index] if isinstance(end, np.ndarray) else end


def varints(u8, pos, end, max_bytes: int, zigzag: bool, path: str):
    """Base-128 varints at `pos`: (values, positions after them). Values are int32 for varints of
    at most 5 bytes (keeping the low 32 bits, as the scalar reader does), int64 otherwise."""
    if not pos.size:
        return np.zeros(0, np.int32 if max_bytes <= 5 else np.int64), pos.copy()
    if pos.max() >= len(u8) - 1:  # one starts in the last byte (or past it): byte by byte, bounded
        return _long_varints(u8, pos, end, max_bytes, zigzag, path)
    # one- and two-byte varints (values below 16384) from one or two gathers and narrow passes
    b0 = u8.take(pos)  # take: cheaper than fancy indexing for a plain gather
    one = b0 < 0x80
    value = b0.astype(np.int32)
    if all_one := one.all():  # every varint one byte long (small counts and lengths): no second gather
        after = pos + 1
    else:
        b1 = u8.take(pos + 1)
        value &= 0x7F
        value |= (b1.astype(np.int32) << 7) & (one.astype(np.int32) - 1)  # only where b0 continues
        after = pos + 2
        after -= one
    if zigzag:
        value = (value >> 1) ^ -(value & 1)
    if max_bytes > 5:
        value = value.astype(np.int64)
    if not all_one and not (short := one | (b1 < 0x80)).all():  # three bytes or more: rare
        longer = np.flatnonzero(~short)
        value[longer], after[longer] = _long_varints(u8, pos[longer], _at(end, longer), max_bytes, zigzag, path)
    if (bad := after > end).any():
        raise TruncatedError("input ends inside a varint", _first(bad, pos), path)
    return value, after


def _long_varints(u8, pos, end, max_bytes: int, zigzag: bool, path: str):
    """The general case, a byte at a time across the varints still continuing."""
    value = np.zeros(pos.size, np.uint64)
    after = pos.copy()
    more = np.arange(pos.size)
    shift = 0
    while more.size:
        if shift == 7 * max_bytes:
            raise InvalidValueError(f"varint longer than {max_bytes} bytes", int(pos[more[0]]), path)
        at = after[more]
        if (bad := at >= _at(end, more)).any():
            raise TruncatedError("input ends inside a varint", int(pos[more[np.flatnonzero(bad)[0]]]), path)
        bk = u8.take(at)
        value[more] |= (bk & 0x7F).astype(np.uint64) << np.uint64(shift)
        after[more] += 1
        more = more[bk >= 0x80]
        shift += 7
    unsigned = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32) if max_bytes <= 5 else value
    if zigzag:  # on the unsigned value: the shift must not carry the sign
        one = np.ones(1, unsigned.dtype)
        unsigned = (unsigned >> one) ^ (np.zeros(1, unsigned.dtype) - (unsigned & one))
    return unsigned.view(np.int32 if max_bytes <= 5 else np.int64), after


def skip_prefixed(u8, pos, end, max_bytes: int, zigzag: bool, path: str):
    """The positions after instances that start with a varint counting the bytes after it."""
    n, after = varints(u8, pos, end, max_bytes, zigzag, path)
    if pos.size and (bad := (n < 0) | (n > end - after)).any():  # as room left: no overflow
        i = np.flatnonzero(bad)[0]
        raise InvalidValueError(f"size {int(n[i])} does not fit the {int(_at(end, i) - pos[i])} bytes left",
                                int(pos[i]), path)
    after += n
    return after


def fixed(u8, pos, end, width: int, signed: bool, little: bool, path: str):
    """Fixed-width integers at `pos`: (values, positions after them); int32 up to 4 bytes."""
    if pos.size and (bad := pos + width > end).any():
        raise TruncatedError(f"{width}-byte field past the end", _first(bad, pos), path)
    if width == 1:
        return u8.take(pos).astype(np.int8 if signed else np.uint8).astype(np.int32), pos + 1
    value = np.zeros(pos.size, np.uint64)
    for i in range(width):
        shift = 8 * i if little else 8 * (width - 1 - i)
        value |= u8.take(pos + i).astype(np.uint64) << np.uint64(shift)
    if signed and width < 8:
        top = 1 << (8 * width - 1)
        value = (value.astype(np.int64) ^ top) - top
    value = value.astype(np.int64) if width == 8 or (width == 4 and not signed) else value.astype(np.int32)
    return value, pos + width


def slices(pos, size, end, optional: bool, path: str):
    """Byte fields of `size` bytes at `pos`: (sizes, positions after them). With `optional` a
    negative size means the field is absent (it stays negative and takes no bytes)."""
    if optional:
        take = np.maximum(size, 0)
    else:
        take = size
        if pos.size and (bad := size < 0).any():
            raise InvalidValueError(f"negative size {int(size[np.flatnonzero(bad)[0]])}", _first(bad, pos), path)
    # compared as room left, so that a huge size cannot overflow a narrow position
    if pos.size and (bad := take > end - pos).any():
        raise TruncatedError("field extends past the end", _first(bad, pos), path)
    return size, pos + take.astype(pos.dtype)


def check_counts(pos, end, counts, least: int, path: str, at=None) -> None:
    """Counts of items of at least `least` bytes each must be neither negative, nor more than the
    bytes left could hold, nor over LIMITS.max_items: checked before anything is allocated. A bad
    count is reported at `at` (where the counts were read), else where its items would start."""
    if not counts.size:
        return
    at = pos if at is None else at
    if (bad := counts < 0).any():
        raise InvalidValueError("negative count", _first(bad, at), path)
    if (bad := (counts > (end - pos) // max(least, 1)) | (counts > LIMITS.max_items)).any():
        i = np.flatnonzero(bad)[0]
        raise LimitExceededError(f"{int(counts[i])} items, more than {int(_at(end, i) - pos[i])} bytes can hold or "
                                 f"over the limit of {LIMITS.max_items}", int(at[i]), path)


def repeat(read, u8, pos, end, counts, least: int, path: str, at=None):
    """`counts[i]` items of a columnar type, each at least `least` bytes, one after another from
    `pos[i]`: (the items' columns in order, instance by instance; each instance's first item; the
    positions after each instance's last item). Rounds go over the instances that still have items.
    `at`: where the counts were read, to report a bad one."""
    check_counts(pos, end, counts, least, path, at)
    first = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=first[1:])
    total = int(first[-1])
    after = pos.copy()
    active = np.flatnonzero(counts)
    columns: dict = {}
    index = 0
    if active.size == total:  # at most one item each (headers, mostly): no rounds, no scatter
        columns, after[active] = read(u8, after[active], _at(end, active))
        return columns, first, after
    while active.size:
        slot = first[active] + index
        cols, after[active] = read(u8, after[active], _at(end, active))
        for name, values in cols.items():
            if name not in columns:
                columns[name] = np.empty(total, values.dtype)
            columns[name][slot] = values
        index += 1
        active = active[counts[active] > index]
    return columns, first, after


def check_span(start, after, length, path: str) -> None:
    """A length field must equal the bytes read from `start` for every instance."""
    if start.size and (bad := after - start != length).any():
        i = np.flatnonzero(bad)[0]
        raise InvalidValueError(f"says {int(length[i])} bytes follow, but {int(after[i] - start[i])} were read",
                                int(start[i]), path)


# below this many sequences still stepping, a vectorised step (a dozen numpy calls) costs more than
# finishing them one instance at a time
LOCKSTEP_MIN = 64
_PREFIX_TABLES: dict = {}


def _prefix_table(zigzag: bool) -> np.ndarray:
    """For every two leading bytes, the bytes an instance prefixed by a one- or two-byte varint
    length takes (varint included); 0 where the varint is longer, which the lean step then sees."""
    if zigzag not in _PREFIX_TABLES:
        pair = np.arange(1 << 16, dtype=np.int64)
        b0, b1 = pair >> 8, pair & 0xFF
        size = np.where(b0 < 0x80, 1, np.where(b1 < 0x80, 2, 0))
        value = np.where(size == 1, b0, np.where(size == 2, (b0 & 0x7F) | (b1 << 7), 0))
        if zigzag:
            value = (value >> 1) ^ -(value & 1)
        _PREFIX_TABLES[zigzag] = np.where(size == 0, 0, size + value).astype(np.int32)
    return _PREFIX_TABLES[zigzag]


def packed(u8, buf, starts, ends, counts, skip, skip1, prefix, least: int, path: str):
    """Start positions of `counts[i]` instances laid end to end from `starts[i]` to exactly
    `ends[i]`, sequence after sequence. All sequences step together, one vectorised `skip` per
    instance index; the last few long ones finish one instance at a time with `skip1` over
    `buf`. `prefix` = (max_bytes, zigzag) when each instance starts with a varint counting the
    bytes after it: then a leaner step runs first and is checked at the end, the careful one
    taking over wherever that check fails. Each instance takes at least `least` bytes."""
    check_counts(starts, ends, counts, least, path)
    first = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=first[1:])
    out = np.empty(int(first[-1]), starts.dtype)
    order = np.argsort(-counts, kind="stable")  # longest first: the sequences still stepping are a prefix
    count = counts[order]
    state = (starts[order], 0, int(np.count_nonzero(count)))
    if prefix is not None:
        state = _lean_steps(u8, state, count, ends[order], first[:-1][order], out, prefix[1]) or state
    pos, step, stepping = state
    pos = pos.copy()
    end, slot = ends[order], first[:-1][order]
    while stepping >= LOCKSTEP_MIN:
        out[slot[:stepping] + step] = pos[:stepping]
        pos[:stepping] = skip(u8, pos[:stepping], end[:stepping])
        step += 1
        while stepping and count[stepping - 1] <= step:
            stepping -= 1
    for i in range(stepping):
        p, e, s = int(pos[i]), int(end[i]), int(slot[i])
        for k in range(step, int(count[i])):
            out[s + k] = p
            p = skip1(buf, p, e)
        pos[i] = p
    if (bad := pos != end).any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidValueError(f"{int(end[i] - pos[i])} bytes left after the last item", int(pos[i]), path)
    return out


def _lean_steps(u8, state, count, end, slot, out, zigzag: bool):
    """Step while many sequences are left, by table from each instance's two leading bytes and
    without checks; then check that every sequence only moved forward and stayed within its end.
    Returns the state to go on from, or None to start again carefully."""
    pos, step, stepping = state
    pos = pos.copy()
    table = _prefix_table(zigzag)
    lanes = stepping
    steps = int(count[LOCKSTEP_MIN - 1]) if stepping >= LOCKSTEP_MIN else 0
    seen = np.empty((steps, lanes), pos.dtype)
    while stepping >= LOCKSTEP_MIN:
        here = pos[:stepping]
        seen[step, :stepping] = here
        lead = u8.take(here, mode="clip").astype(np.int32) << 8
        lead |= u8.take(here + 1, mode="clip")
        here += table.take(lead)
        step += 1
        while stepping and count[stepping - 1] <= step:
            stepping -= 1
    if not steps:
        return None
    # each instance must end after it starts: the next start, or where the sequence stopped
    taken = np.minimum(count[:lanes], steps)
    after = np.empty_like(seen)
    after[:-1] = seen[1:]
    after[taken - 1, np.arange(lanes)] = pos[:lanes]
    valid = np.arange(steps)[:, None] < taken[None, :]
    if not ((after > seen) | ~valid).all() or (pos[:lanes] > end[:lanes]).any():
        return None
    out[(slot[None, :lanes] + np.arange(steps)[:, None])[valid]] = seen[valid]
    return pos, step, stepping
