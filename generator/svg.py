"""Byte-layout diagrams as plain SVG text: fields as boxes, eight bytes to a row, in the style of
RFC packet diagrams. Deterministic output: integer coordinates, no timestamps or ids."""
from __future__ import annotations

from dataclasses import dataclass

BYTES_PER_ROW = 8
BYTE_W, ROW_H, LEFT, TOP = 64, 34, 56, 40
CHAR_W = 7  # monospace 12px
FILL, COVERED, CHECKSUM = "#e6ebf5", "#cfe8ff", "#ffd9a0"


@dataclass(frozen=True)
class Box:
    label: str
    size: int | None  # bytes; None when it varies
    covered: bool = False  # inside a checksum's coverage
    checksum: bool = False


def _fit(label: str, width: int) -> str:
    room = max(1, (width - 8) // CHAR_W)
    return label if len(label) <= room else label[:max(1, room - 1)] + "…"


def layout_svg(title: str, boxes: list[Box]) -> str:
    parts = []
    row = col = 0
    offset: int | None = 0
    row_starts: list[int | None] = [0]

    def rect(r: int, c: int, n: int, box: Box, text: str) -> None:
        x, y, w = LEFT + c * BYTE_W, TOP + r * ROW_H, n * BYTE_W
        fill = CHECKSUM if box.checksum else COVERED if box.covered else FILL
        parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{ROW_H}" fill="{fill}" stroke="#374151"/>')
        if text:
            parts.append(f'<text x="{x + w // 2}" y="{y + ROW_H // 2 + 4}" text-anchor="middle">'
                         f'{_fit(text, w)}</text>')

    for box in boxes:
        if box.size is None:  # the rest of the row, at least two bytes, then a new row
            if BYTES_PER_ROW - col < 2:
                row, col = row + 1, 0
                row_starts.append(None)
            rect(row, col, BYTES_PER_ROW - col, box, box.label + " …")
            row, col, offset = row + 1, 0, None
            row_starts.append(None)
            continue
        pieces = []  # (row, col, bytes) of each row the box crosses
        left = box.size
        while left > 0:
            n = min(left, BYTES_PER_ROW - col)
            pieces.append((row, col, n))
            left -= n
            col += n
            if offset is not None:
                offset += n
            if col == BYTES_PER_ROW:
                row, col = row + 1, 0
                row_starts.append(offset)
        widest = max(range(len(pieces)), key=lambda i: pieces[i][2])  # the first of the widest
        for i, (r, c, n) in enumerate(pieces):
            rect(r, c, n, box, box.label if i == widest else "")
    rows = row + (1 if col else 0)
    for r in range(rows):
        start = row_starts[r] if r < len(row_starts) else None
        parts.append(f'<text x="{LEFT - 8}" y="{TOP + r * ROW_H + ROW_H // 2 + 4}" text-anchor="end" '
                     f'fill="#6b7280">{"…" if start is None else start}</text>')
    ticks = "".join(f'<text x="{LEFT + i * BYTE_W + BYTE_W // 2}" y="{TOP - 8}" text-anchor="middle" '
                    f'fill="#6b7280">+{i}</text>' for i in range(BYTES_PER_ROW))
    width, height = LEFT + BYTES_PER_ROW * BYTE_W + 8, TOP + rows * ROW_H + 30
    legend = []
    if any(b.covered for b in boxes):
        y = TOP + rows * ROW_H + 12
        legend = [f'<rect x="{LEFT}" y="{y}" width="14" height="14" fill="{COVERED}" stroke="#374151"/>',
                  f'<text x="{LEFT + 20}" y="{y + 11}">covered by the checksum</text>',
                  f'<rect x="{LEFT + 220}" y="{y}" width="14" height="14" fill="{CHECKSUM}" stroke="#374151"/>',
                  f'<text x="{LEFT + 240}" y="{y + 11}">checksum</text>']
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">\n'
            f'<title>{title}: byte layout</title>\n'
            f'<text x="{LEFT}" y="16" font-weight="bold">{title}</text>\n{ticks}\n'
            + "\n".join(parts + legend) + "\n</svg>\n")
