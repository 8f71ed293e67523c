"""The trace viewer's media: JPEG thumbnails stored once per benchmark as ``media/<sha256>.jpg``,
linked relatively from every run's rows. A source is scaled once per size per process; fixed encoder
settings, no EXIF or ICC, so the same image gives the same bytes."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.io import read_file_bytes, write_bytes_atomic
from socialbench.core.paths import MediaRoots

#: Longest side of a shown image, of a shown video frame (pixels), and frames shown per instance.
THUMB_PX = 256
FRAME_PX = 160
MAX_FRAMES = 8
#: JPEG quality of the thumbnails (fixed: the same image gives the same bytes).
JPEG_QUALITY = 80


def thumbnail(data: bytes, max_px: int) -> tuple[bytes, int, int]:
    """The image as JPEG bytes scaled to fit ``max_px`` (never enlarged), with its size. Transparency
    is flattened on white. Raises ValueError for bytes that are not an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            if im.mode in ("RGBA", "LA", "P"):
                im = im.convert("RGBA")
                bg = Image.new("RGB", im.size, (255, 255, 255))
                bg.paste(im, mask=im.getchannel("A"))
                im = bg
            else:
                im = im.convert("RGB")
            im.thumbnail((max_px, max_px), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            # no EXIF, no ICC, fixed settings: the same image gives the same bytes
            im.save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)
            w, h = im.size
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError) as exc:
        raise ValueError(f"not a readable image ({exc})") from exc
    return buf.getvalue(), w, h


def pick_frames(items: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """At most ``k`` of the frames, evenly spread, first and last kept, in order."""
    n = len(items)
    if n <= k:
        return items
    if k <= 1:
        return items[:k]
    picks = sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
    return [items[i] for i in picks]


class MediaStore:
    """The benchmark's media folder: each thumbnail written once as ``<sha256>.jpg``. Relative media
    paths are read under ``root``; only media that lead (symlinks and ``..`` followed) into ``roots``
    (default: ``root`` itself) are read, any other is refused with the reason."""

    def __init__(self, folder: Path, root: Path = Path("."), roots: MediaRoots | None = None):
        self.folder = Path(folder)
        self.root = Path(root)
        self.roots = roots if roots is not None else MediaRoots.only(self.root)
        #: (path, px) -> (file name, width, height, sha256 of the source) or the problem
        self.done: dict[tuple[str, int], tuple[str, int, int, str] | str] = {}
        #: the file names written or found in the folder (a benchmark's media, shared by its runs)
        self.names: set[str] = set()

    def get(self, path: str, px: int) -> tuple[str, int, int, str] | str:
        """The stored thumbnail of ``path`` at ``px`` (name, width, height, source sha256), or why none."""
        full = Path(path) if Path(path).is_absolute() else self.root / path
        key = (str(full), px)
        if key not in self.done:
            self.done[key] = self._make(path, full, px)
        return self.done[key]

    def _make(self, path: str, full: Path, px: int) -> tuple[str, int, int, str] | str:
        outside = self.roots.problem(path)
        try:
            if outside is not None:
                raise ValueError(f"not shown: {outside.split(';')[0]}")
            data = read_file_bytes(full, "media file")  # a FIFO or device is refused, never opened
            jpeg, w, h = thumbnail(data, px)
        except DataError as exc:
            why = str(exc)[len(exc.path) + 2 :]
            return "file not found" if why.endswith(" not found") else why
        except (OSError, ValueError) as exc:
            return str(exc) if isinstance(exc, ValueError) else f"cannot be read ({exc.strerror or exc})"
        name = hashlib.sha256(jpeg).hexdigest() + ".jpg"
        target = self.folder / name
        if name not in self.names and not target.is_file():
            write_bytes_atomic(target, jpeg)
        self.names.add(name)
        return name, w, h, hashlib.sha256(data).hexdigest()


def embed_media(
    rows: list[dict[str, Any]],
    store: MediaStore,
    href: str,
    thumb_px: int = THUMB_PX,
    frame_px: int = FRAME_PX,
    max_frames: int = MAX_FRAMES,
) -> list[str]:
    """Give every media item of the rows its stored thumbnail (``src`` under ``href``, the media folder
    relative to the page; ``width``, ``height``) or why it has none (``problem``; a frame whose bytes
    changed gets a warning). Returns one line per problem."""
    problems: list[str] = []
    for row in rows:
        media = row.get("media") or []
        frames = [m for m in media if m["kind"] == "frame"]
        shown = pick_frames(frames, max_frames)
        if len(shown) < len(frames):
            row.setdefault("badges", []).append([f"{len(shown)} of {len(frames)} frames shown", "info"])
        row["media"] = media = [m for m in media if m["kind"] != "frame" or any(m is s for s in shown)]
        for m in media:
            if m["kind"] == "video":
                m["problem"] = "video not shown (no sampled frames)"
                continue
            got = store.get(m["path"], frame_px if m["kind"] == "frame" else thumb_px)
            if isinstance(got, str):
                m["problem"] = got
                problems.append(f"{row['id']}: {m['path']}: {got}")
                continue
            name, m["width"], m["height"], digest = got
            m["src"] = href.rstrip("/") + "/" + name if href else name
            if m.get("sha256") and m["sha256"] != digest:
                m["problem"] = "file changed since it was recorded (sha256 differs)"
                problems.append(f"{row['id']}: {m['path']}: {m['problem']}")
    return problems
