import numpy as np
import pytest

from socialbench.media.synth import BITS, bit_cells, read_index


def paint(index: int, width: int = 160, height: int = 120) -> np.ndarray:
    img = np.full((height, width, 3), 90, np.uint8)
    for b, cell in enumerate(bit_cells(width, height)):
        img[cell.y : cell.y + cell.h, cell.x : cell.x + cell.w] = 255 if index >> b & 1 else 0
    return img


@pytest.mark.parametrize("index", [0, 1, 2, 13, 511, 1499, 2**BITS - 1])
def test_painted_index_reads_back(index):
    assert read_index(paint(index)) == index


def test_index_survives_noise_and_a_gray_image():
    rng = np.random.default_rng(0)
    noisy = np.clip(paint(1234).astype(int) + rng.integers(-40, 40, (120, 160, 3)), 0, 255).astype(np.uint8)
    assert read_index(noisy) == 1234
    assert read_index(paint(77)[..., 0]) == 77


def test_a_frame_too_narrow_for_the_cells_is_an_error():
    with pytest.raises(ValueError, match="too narrow"):
        bit_cells(16, 16)


@pytest.mark.parametrize("index", [0, 5, 29, 4095])
def test_pillow_painted_index_reads_back(index):
    from PIL import Image, ImageDraw

    from socialbench.media.synth import draw_index

    img = Image.new("RGB", (160, 120), (200, 30, 30))
    draw_index(ImageDraw.Draw(img), 160, 120, index)
    assert read_index(np.asarray(img)) == index


def test_pillow_painting_rejects_an_index_beyond_the_bits():
    from PIL import Image, ImageDraw

    from socialbench.media.synth import draw_index

    with pytest.raises(ValueError, match="does not fit"):
        draw_index(ImageDraw.Draw(Image.new("RGB", (160, 120))), 160, 120, 2**BITS)
