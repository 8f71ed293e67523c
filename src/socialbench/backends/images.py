"""Reading the media of a request (images, frames, video clips, audio), checked against the content
hash in its cache key, and laying a message's parts out as wire-format content blocks.

Every backend that sends pixels or samples goes through here, so what a model sees is exactly what the
cache key names: the bytes are read once, their sha256 is compared with the part's ``sha256``, and an
image larger than the model's ``image_size`` is scaled down deterministically (Pillow, LANCZOS, PNG
out). The scaling side is part of each backend's identity, so changing it is a cache miss, never a
stale hit. Video clips and audio files are sent as they are (no re-encoding).

:func:`content_blocks` is the one layout of a message's parts: text blocks, a ``[view]`` label before
each image or video that names its camera or panel (only when the part has a view, so a request
without views renders as it always did), then the backend's own block for the part.
"""

from __future__ import annotations

import base64
import io
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from socialbench.core.errors import SocialbenchError
from socialbench.core.hashing import sha256_bytes

if TYPE_CHECKING:  # pragma: no cover
    from PIL.Image import Image as PILImage

    from socialbench.core.backend import AudioPart, ImagePart, Message, VideoPart

_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageChanged(SocialbenchError):
    """A media file (image, frame, clip, audio) no longer has the bytes its request (and cache key)
    was built from."""


MediaChanged = ImageChanged


class ImageUnreadable(SocialbenchError, OSError):
    """An image file that Pillow cannot decode (empty, random bytes, truncated, not an image). It is
    an OSError too, as Pillow's own errors are, so backends that record a request's OSError as that
    request's error keep doing so, now with the file named."""


def _unreadable(path: str | Path, exc: Exception, empty: bool = False) -> ImageUnreadable:
    from PIL import UnidentifiedImageError

    if empty:
        why = "the file is empty"
    elif isinstance(exc, UnidentifiedImageError):  # its message names a BytesIO, not the file
        why = "not an image format Pillow can read"
    else:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ImageUnreadable(f"{path}: cannot decode the image ({why})")


def _open(data: bytes, path: str) -> PILImage:
    """Pillow's image over ``data``, headers read; an undecodable file is ImageUnreadable naming ``path``."""
    from PIL import Image

    try:
        return Image.open(io.BytesIO(data))
    except Exception as exc:  # Pillow raises OSError, ValueError, SyntaxError, struct.error, ...
        raise _unreadable(path, exc, empty=not data) from exc


def verify_image_file(path: str | Path) -> None:
    """Check that ``path`` is an image Pillow can open, verify (headers and, for PNG, every chunk's
    checksum) and decode (``verify`` reads no JPEG scan data, so a cut JPEG would pass it and fail
    only when a backend loads it). A JPEG is decoded in draft mode (DCT-scaled to 1/8, which still
    reads all of its scan data), so the check stays cheap. Raises ImageUnreadable naming the file."""
    from PIL import Image

    from socialbench.core.errors import DataError
    from socialbench.core.io import read_file_bytes

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
        raise _unreadable(path, exc, empty=not data) from exc


@dataclass(frozen=True)
class EncodedImage:
    media_type: str
    data: bytes

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


class _FilePart(Protocol):
    path: Any
    sha256: Any


def read_checked(part: _FilePart) -> bytes:
    """The file's bytes (an image, a video clip or an audio file), after checking they hash to
    ``part.sha256``."""
    if not part.path or not part.sha256:
        raise ValueError(f"a {getattr(part, 'kind', 'media')} part without a file (path and sha256) cannot be read")
    from socialbench.core.io import read_file_bytes

    data = read_file_bytes(part.path, "media file")  # a FIFO or device is refused, never opened
    actual = sha256_bytes(data)
    if actual != part.sha256:
        raise ImageChanged(
            f"{part.path}: content hash {actual[:12]}… differs from the request's {part.sha256[:12]}…;"
            " the file changed after the request was built (rebuild the requests)"
        )
    return data


def _scaled(img: PILImage, max_side: int | None) -> PILImage:
    from PIL import Image

    if max_side is None or max(img.size) <= max_side:
        return img
    scale = max_side / max(img.size)
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    return img.resize(size, Image.Resampling.LANCZOS)


def load_pil(part: ImagePart, max_side: int | None = None) -> PILImage:
    """The image as RGB Pillow image, scaled so that its longest side is at most ``max_side``."""
    img = _open(read_checked(part), part.path)
    try:
        img.load()
    except Exception as exc:  # truncated or corrupt pixel data
        raise _unreadable(part.path, exc) from exc
    return _scaled(img.convert("RGB"), max_side)


def encode_for_api(part: ImagePart, max_side: int | None = None) -> EncodedImage:
    """Bytes to send to an API: the original file when it is small enough and in a format every API
    accepts, otherwise a deterministic PNG re-encoding of the (scaled) image."""
    raw = read_checked(part)
    img = _open(raw, part.path)
    fmt = img.format or ""
    if fmt in _MEDIA_TYPES and (max_side is None or max(img.size) <= max_side):
        return EncodedImage(_MEDIA_TYPES[fmt], raw)
    try:
        img.load()
    except Exception as exc:  # truncated or corrupt pixel data
        raise _unreadable(part.path, exc) from exc
    keeps_alpha = img.mode in ("RGBA", "LA") or (img.mode == "P" and "transparency" in img.info)
    mode = "RGBA" if keeps_alpha else "RGB"
    out = io.BytesIO()
    _scaled(img.convert(mode), max_side).save(out, format="PNG", optimize=False)
    return EncodedImage("image/png", out.getvalue())


_VIDEO_TYPES = {
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".mov": "video/quicktime",
    ".webm": "video/webm",
    ".mkv": "video/x-matroska",
    ".avi": "video/x-msvideo",
}


def encode_video(part: VideoPart) -> EncodedImage:
    """A video clip's file as it is (checked against its hash), with its media type from the suffix."""
    data = read_checked(part)
    suffix = Path(str(part.path)).suffix.lower()
    media_type = _VIDEO_TYPES.get(suffix) or mimetypes.guess_type(str(part.path))[0] or "video/mp4"
    return EncodedImage(media_type, data)


def encode_audio(part: AudioPart) -> EncodedImage:
    """An audio file as it is (checked against its hash); its media type from ``part.format``."""
    return EncodedImage(f"audio/{part.format}", read_checked(part))


def view_label(view: str) -> dict[str, Any]:
    """The text block that names the camera or panel of the part after it, e.g. ``[Closeup A]``."""
    return {"type": "text", "text": f"[{view}]"}


Block = dict[str, Any]


def content_blocks(
    message: Message,
    image: Callable[[ImagePart], Block],
    video: Callable[[VideoPart], Block] | None = None,
    audio: Callable[[AudioPart], Block] | None = None,
) -> list[Block]:
    """A message's content as wire-format blocks, in order: ``{"type": "text"}`` for text (empty
    strings dropped); ``image(part)`` for an image; for a video, ``video(part)`` when the backend sends
    native video (``video`` given) and the part has its file, else ``image(frame)`` for each sampled
    frame; ``audio(part)`` for audio. A part with a ``view`` is preceded by the label ``[view]`` (a
    frame's own view is not repeated when it equals its video's). A part the backend cannot render is
    a ValueError (:func:`socialbench.core.backend.check_requests` refuses such requests first)."""
    from socialbench.core.backend import AudioPart, ImagePart, VideoPart

    out: list[Block] = []

    def images(part: ImagePart, outer_view: str | None = None) -> None:
        if part.view is not None and part.view != outer_view:
            out.append(view_label(part.view))
        out.append(image(part))

    for part in message.content:
        if isinstance(part, str):
            if part:
                out.append({"type": "text", "text": part})
        elif isinstance(part, ImagePart):
            images(part)
        elif isinstance(part, VideoPart):
            if video is not None and part.sha256:
                if part.view is not None:
                    out.append(view_label(part.view))
                out.append(video(part))
            elif part.frames:
                if part.view is not None:
                    out.append(view_label(part.view))
                for frame in part.frames:
                    images(frame, part.view)
            else:
                raise ValueError("a video given only as a file cannot be sent to a backend without native video")
        elif isinstance(part, AudioPart):
            if audio is None:
                raise ValueError("an audio part cannot be sent to a backend without audio input")
            out.append(audio(part))
        else:
            raise ValueError(f"unknown content part {type(part).__name__}")
    return out
