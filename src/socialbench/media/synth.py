"""Synthetic videos whose frames carry their own index, and reading that index back.

Each frame shows ``BITS`` black/white cells along its bottom edge, bit ``b`` of its number in cell ``b``,
which survives compression and scaling, so any extracted frame, clip or mosaic panel decodes back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

BITS = 12  # up to 4096 frames


@dataclass(frozen=True)
class Cell:
    x: int
    y: int
    w: int
    h: int


def band_height(height: int) -> int:
    return max(8, height // 6)


def bit_cells(width: int, height: int, bits: int = BITS) -> list[Cell]:
    """The rectangle of each bit, left (bit 0) to right, in a ``width`` x ``height`` frame."""
    if width < 2 * bits:
        raise ValueError(f"a {width}-pixel-wide frame is too narrow for {bits} index cells")
    bh = band_height(height)
    edges = [b * width // bits for b in range(bits + 1)]
    return [Cell(edges[b], height - bh, edges[b + 1] - edges[b], bh) for b in range(bits)]


def draw_index(draw: Any, width: int, height: int, index: int, bits: int = BITS) -> None:
    """Paint ``index`` into the bottom band of a Pillow ``ImageDraw`` of a ``width`` x ``height``
    image (the layout ``generate_indexed_video`` in tests/helpers/media_synth.py renders)."""
    if not 0 <= index < 1 << bits:
        raise ValueError(f"index {index} does not fit in {bits} bits")
    for b, cell in enumerate(bit_cells(width, height, bits)):
        colour = (255, 255, 255) if index >> b & 1 else (0, 0, 0)
        draw.rectangle([cell.x, cell.y, cell.x + cell.w - 1, cell.y + cell.h - 1], fill=colour)


def read_index(image: np.ndarray, bits: int = BITS) -> int:
    """Frame number encoded in an image (H x W gray or H x W x C colour array, uint8)."""
    gray = image.astype(np.float32)
    if gray.ndim == 3:
        gray = gray[..., :3].mean(axis=2)
    h, w = gray.shape
    value = 0
    for b, cell in enumerate(bit_cells(w, h, bits)):
        # Sample the middle half of the cell to stay clear of edges softened by compression.
        y0, y1 = cell.y + cell.h // 4, cell.y + (3 * cell.h) // 4
        x0, x1 = cell.x + cell.w // 4, cell.x + (3 * cell.w) // 4
        if gray[y0 : max(y1, y0 + 1), x0 : max(x1, x0 + 1)].mean() > 128:
            value |= 1 << b
    return value
