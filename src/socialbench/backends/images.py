"""Reading a request's media, checked against the content hash in its key, and laying a message's parts out as
wire-format blocks (:func:`content_blocks`). Images are scaled down (LANCZOS, PNG) only for a backend's
:class:`ImageLimits` or a params ``image_size``; video and audio go as they are."""

from __future__ import annotations

import base64
import io
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from socialbench.core.backend import AudioPart, ImagePart, VideoPart
from socialbench.core.errors import SocialbenchError
from socialbench.core.hashing import sha256_bytes
from socialbench.core.io import read_file_bytes
from socialbench.media.images import ImageUnreadable, open_image, unreadable

if TYPE_CHECKING:  # pragma: no cover
    from PIL.Image import Image as PILImage

    from socialbench.core.backend import Message, Request

_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageChanged(SocialbenchError):
    """A media file no longer has the bytes its request (and cache key) was built from."""


@dataclass(frozen=True)
class EncodedImage:
    media_type: str
    data: bytes
    #: (width, height) in pixels of the image as sent; None for a video or audio file.
    size: tuple[int, int] | None = None

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


def read_checked(part: ImagePart | VideoPart | AudioPart) -> bytes:
    """The media file's bytes, after checking they hash to ``part.sha256``."""
    if not part.path or not part.sha256:
        raise ValueError(f"a {getattr(part, 'kind', 'media')} part without a file (path and sha256) cannot be read")
    data = read_file_bytes(part.path, "media file")  # a FIFO or device is refused, never opened
    actual = sha256_bytes(data)
    if actual != part.sha256:
        raise ImageChanged(
            f"{part.path}: content hash {actual[:12]}… differs from the request's {part.sha256[:12]}…;"
            " the file changed after the request was built (rebuild the requests)"
        )
    return data


@dataclass(frozen=True)
class ImageLimits:
    """A backend's documented limits on one image (docs/backends.md): ``max_side`` pixels on the longest
    side (``many_max_side`` above ``many_images`` images a request), ``max_base64_bytes``. None: no limit."""

    max_side: int | None = None
    many_images: int | None = None
    many_max_side: int | None = None
    max_base64_bytes: int | None = None

    def side(self, n_images: int) -> int | None:
        """The largest side an image may have in a request of ``n_images`` images (None: any)."""
        many = self.many_images is not None and n_images > self.many_images
        return _smallest(self.max_side, self.many_max_side if many else None)

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


NO_LIMITS = ImageLimits()


def fitted_size(size: tuple[int, int], max_side: int | None) -> tuple[int, int]:
    """``size`` (width, height) scaled so that its longest side is at most ``max_side`` (never up; pure)."""
    width, height = size
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _smallest(*sides: int | None) -> int | None:
    return min((s for s in sides if s is not None), default=None)


def _scaled(img: PILImage, max_side: int | None) -> PILImage:
    from PIL import Image

    size = fitted_size(img.size, max_side)
    if size == img.size:
        return img
    return img.resize(size, Image.Resampling.LANCZOS)


def _loaded(img: PILImage, path: Any) -> PILImage:
    try:
        img.load()
    except Exception as exc:  # truncated or corrupt pixel data
        raise unreadable(path, exc) from exc
    return img


def load_pil(part: ImagePart, max_side: int | None = None) -> PILImage:
    """The image as RGB Pillow image, scaled so that its longest side is at most ``max_side``."""
    img = _loaded(open_image(read_checked(part), part.path), part.path)
    return _scaled(img.convert("RGB"), max_side)


def _base64_len(n_bytes: int) -> int:
    return 4 * ((n_bytes + 2) // 3)


#: Scaling steps an image over a byte limit gets at most (each by the square root of the overshoot).
_MAX_SHRINKS = 8


def encode_for_api(
    part: ImagePart, max_side: int | None = None, limits: ImageLimits = NO_LIMITS, n_images: int = 1
) -> EncodedImage:
    """Bytes to send to an API, and the size sent: the original file when every API takes its format and it
    is within ``max_side`` and ``limits``; else a deterministic PNG re-encoding scaled to fit them."""
    raw = read_checked(part)
    img = open_image(raw, part.path)
    fmt = img.format or ""
    side = _smallest(max_side, limits.side(n_images))
    most = limits.max_base64_bytes
    if (
        fmt in _MEDIA_TYPES
        and fitted_size(img.size, side) == img.size
        and (most is None or _base64_len(len(raw)) <= most)
    ):
        return EncodedImage(_MEDIA_TYPES[fmt], raw, img.size)
    img = _loaded(img, part.path)
    keeps_alpha = img.mode in ("RGBA", "LA") or (img.mode == "P" and "transparency" in img.info)
    img = img.convert("RGBA" if keeps_alpha else "RGB")
    for _ in range(_MAX_SHRINKS + 1):
        scaled = _scaled(img, side)
        out = io.BytesIO()
        scaled.save(out, format="PNG", optimize=False)
        data = out.getvalue()
        if most is None or _base64_len(len(data)) <= most:
            return EncodedImage("image/png", data, scaled.size)
        side = max(1, int(max(scaled.size) * (most / _base64_len(len(data))) ** 0.5 * 0.95))
    raise ImageUnreadable(
        f"{part.path}: cannot be brought under the backend's limit of {most} base64 bytes by scaling it down"
    )


def sent_image_parts(request: Request, native_video: bool = False) -> list[ImagePart]:
    """The images a request sends, in order, as :func:`content_blocks` lays them out."""
    out: list[ImagePart] = []

    def image(part: ImagePart) -> Block:
        out.append(part)
        return {}

    for message in request.messages:
        content_blocks(message, image, video=(lambda _p: {}) if native_video else None, audio=lambda _p: {})
    return out


def images_sent(request: Request, size: Callable[[ImagePart, int], tuple[int, int]], native_video: bool = False):
    """The [width, height] of every image the request sends, as ``size(part, n_images)`` gives it, or None."""
    parts = sent_image_parts(request, native_video)
    return [list(size(p, len(parts))) for p in parts] or None


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


Block = dict[str, Any]


def content_blocks(
    message: Message,
    image: Callable[[ImagePart], Block],
    video: Callable[[VideoPart], Block] | None = None,
    audio: Callable[[AudioPart], Block] | None = None,
) -> list[Block]:
    """A message's content as wire-format blocks, in order: text (empty dropped); ``image(part)``; a video as
    ``video(part)`` when given and the file is there, else ``image(frame)`` per frame; ``audio(part)``. A ``view`` adds
    a ``[view]`` label first. A part the backend cannot render is a ValueError."""
    out: list[Block] = []

    def label(view: str | None, outer_view: str | None = None) -> None:
        if view is not None and view != outer_view:
            out.append({"type": "text", "text": f"[{view}]"})  # the camera or panel of the part after it

    for part in message.content:
        if isinstance(part, str):
            if part:
                out.append({"type": "text", "text": part})
        elif isinstance(part, ImagePart):
            label(part.view)
            out.append(image(part))
        elif isinstance(part, VideoPart):
            if video is not None and part.sha256:
                label(part.view)
                out.append(video(part))
            elif part.frames:
                label(part.view)
                for frame in part.frames:
                    label(frame.view, part.view)
                    out.append(image(frame))
            else:
                raise ValueError("a video given only as a file cannot be sent to a backend without native video")
        elif isinstance(part, AudioPart):
            if audio is None:
                raise ValueError("an audio part cannot be sent to a backend without audio input")
            out.append(audio(part))
        else:
            raise ValueError(f"unknown content part {type(part).__name__}")
    return out
