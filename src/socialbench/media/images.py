"""Image files: whether a file is an image the models can be shown, and the one error that names an
undecodable one. Data stages check their images here, and the backends decode the images they send
with the same rule (``socialbench.backends.images``), so a data stage depends on no model backend."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.io import read_file_bytes


class ImageUnreadable(SocialbenchError, OSError):
    """An image file that Pillow cannot decode; an OSError too, as Pillow's own errors are, so backends
    record it as the request's error as before, now with the file named."""


def unreadable(path: str | Path, exc: Exception, empty: bool = False) -> ImageUnreadable:
    """The error for an image at ``path`` that Pillow failed on with ``exc`` (``empty``: it has no bytes)."""
    if empty:
        why = "the file is empty"
    elif isinstance(exc, UnidentifiedImageError):  # its message names a BytesIO, not the file
        why = "not an image format Pillow can read"
    else:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ImageUnreadable(f"{path}: cannot decode the image ({why})")


def open_image(data: bytes, path: str | Path) -> Image.Image:
    """Pillow's image over ``data``, headers read; an undecodable file is ImageUnreadable naming ``path``."""
    try:
        return Image.open(io.BytesIO(data))
    except Exception as exc:  # Pillow raises OSError, ValueError, SyntaxError, struct.error, ...
        raise unreadable(path, exc, empty=not data) from exc


def verify_image_file(path: str | Path) -> None:
    """Check that ``path`` is an image Pillow can open, verify and decode (``verify`` reads no JPEG scan
    data, so a cut JPEG would pass it; a JPEG is decoded in draft mode, cheap but reading all scan data).
    Raises ImageUnreadable naming the file."""
    try:
        data = read_file_bytes(path, "image")  # a FIFO or device is refused, never opened
    except DataError as exc:
        raise ImageUnreadable(str(exc)) from None
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
        with Image.open(io.BytesIO(data)) as img:  # verify() leaves the image unusable: reopen
            img.draft(img.mode, (1, 1))  # JPEG only (no-op for other formats): smallest DCT scale
            img.load()
    except Exception as exc:  # any failure to identify, verify or decode means the model could not see it
        raise unreadable(path, exc, empty=not data) from exc
