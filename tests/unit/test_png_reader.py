"""The browser test's PNG reader decodes every PNG filter type exactly (property: encoding
random pixels with each filter and reading them back gives the same pixels)."""

from __future__ import annotations

import struct
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.integration.png import read_png


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _filtered(row: bytes, prev: bytes, kind: int, bpp: int) -> bytes:
    out = bytearray()
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        predictor = [0, a, b, (a + b) >> 1, _paeth(a, b, c)][kind]
        out.append((x - predictor) & 255)
    return bytes(out)


def _encode(width: int, rows: list, kinds: list, bpp: int) -> bytes:
    raw, prev = bytearray(), bytes(width * bpp)
    for row, kind in zip(rows, kinds):
        raw += bytes([kind]) + _filtered(row, prev, kind, bpp)
        prev = row

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, len(rows), 8, {3: 2, 4: 6}[bpp], 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")


@st.composite
def images(draw):
    bpp = draw(st.sampled_from([3, 4]))
    width, height = draw(st.integers(1, 9)), draw(st.integers(1, 6))
    rows = [draw(st.binary(min_size=width * bpp, max_size=width * bpp)) for _ in range(height)]
    kinds = [draw(st.integers(0, 4)) for _ in range(height)]
    return bpp, width, rows, kinds


@settings(max_examples=150, deadline=None)
@given(images())
def test_reading_back_any_filtered_png_gives_its_pixels(image):
    bpp, width, rows, kinds = image
    decoded = read_png(_encode(width, rows, kinds, bpp))
    assert (decoded.width, decoded.height, decoded.bpp) == (width, len(rows), bpp)
    assert decoded.rows == rows
