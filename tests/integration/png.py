"""A small PNG reader (stdlib ``zlib`` only) so the browser test can look at the pixels of a
screenshot without an imaging library: 8-bit RGB / RGBA, non-interlaced — what Chromium writes."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from itertools import accumulate

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel (8-bit samples)


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    bpp: int
    rows: list  # one bytes object per row, unfiltered

    def pixel(self, x: int, y: int) -> bytes:
        return self.rows[y][x * self.bpp:x * self.bpp + 3]

    def sample(self, step: int = 4) -> list:
        """RGB of every ``step``-th pixel of every ``step``-th row."""
        return [self.pixel(x, y) for y in range(0, self.height, step) for x in range(0, self.width, step)]


def read_png(data: bytes) -> Image:
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    bpp = CHANNELS[colour]
    return Image(width, height, bpp, unfilter(zlib.decompress(b"".join(idat)), width * bpp, height, bpp))


def unfilter(raw: bytes, stride: int, height: int, bpp: int) -> list:
    """Undo the per-row filters (None, Sub, Up, Average, Paeth) of the PNG specification."""
    low = int.from_bytes(b"\x7f" * stride, "big")
    high = int.from_bytes(b"\x80" * stride, "big")
    prev, rows = bytes(stride), []
    for r in range(height):
        start = r * (stride + 1)
        kind, line = raw[start], raw[start + 1:start + 1 + stride]
        if kind == 0:
            cur = bytes(line)
        elif kind == 2:  # Up: bytewise addition mod 256 of whole rows at once
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            cur = (((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(stride, "big")
        elif kind == 1:  # Sub: a running sum per channel
            out = bytearray(stride)
            for c in range(bpp):
                out[c::bpp] = bytes(accumulate(line[c::bpp], lambda x, y: (x + y) & 255))
            cur = bytes(out)
        elif kind in (3, 4):
            out = bytearray(line)
            for i in range(stride):
                left = out[i - bpp] if i >= bpp else 0
                up = prev[i]
                if kind == 3:
                    out[i] = (out[i] + ((left + up) >> 1)) & 255
                else:
                    upper_left = prev[i - bpp] if i >= bpp else 0
                    p = left + up - upper_left
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                    out[i] = (out[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upper_left)) & 255
            cur = bytes(out)
        else:
            raise ValueError(f"row {r}: unknown filter type {kind}")
        rows.append(cur)
        prev = cur
    return rows
