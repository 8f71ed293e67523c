"""Content-addressed frame cache with one sidecar manifest per sampled clip.

The key is sha256 over: the video's bytes (sha256), the sampling (mode, count or exact fps,
longest side, image format), the ffmpeg build (sha256 of the executable) and the cache format
version. Same key, same frames: a rerun or a second model reads them back without starting any
process; a changed byte or a changed parameter gives a new key and new frames. The file name is
deliberately not part of the key (the same bytes under another name are the same video).

Layout under the cache root (``data/interim/frames/`` in the pipeline)::

    <key[:2]>/<key>/manifest.json       what was sampled, from what, and how
    <key[:2]>/<key>/<index:06d>.png     one file per frame, named by its index in the source
    .locks/, .tmp/                      per-key locks and entries being written (.dvcignore'd)

The memo of the ffmpeg executable's hash (by path, size and mtime) is machine-specific, so it lives
in the user's cache (:func:`tool_memo_dir`), not here.

Entries are written to a temporary folder and renamed into place, under a per-key file lock, so
concurrent jobs and killed runs never leave a half-written entry behind.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from socialbench.hashing import sha256_file, sha256_json
from socialbench.media import av
from socialbench.media.sampling import FrameSampling, seconds, select_indices

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class FrameRecord:
    index: int  # frame number in the source video, display order, from 0
    timestamp: float  # seconds after the video start, as decoded (rounded to the microsecond)
    file: str  # file name inside the entry folder
    sha256: str


@dataclass
class FrameManifest:
    """The sidecar of one sampled clip: every frame's index and timestamp, and their provenance."""

    key: str
    key_parts: dict[str, Any]
    source: dict[str, Any]  # sha256, frame_count, duration, fps, width, height, rotation, format
    size: tuple[int, int]  # width, height of the frames
    ffmpeg_version: str
    frames: list[FrameRecord]
    folder: Path = field(default=Path("."), compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("folder")
        d["size"] = list(self.size)
        d["format_version"] = CACHE_FORMAT
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any], folder: Path) -> "FrameManifest":
        return cls(
            key=data["key"],
            key_parts=data["key_parts"],
            source=data["source"],
            size=tuple(data["size"]),  # type: ignore[arg-type]
            ffmpeg_version=data["ffmpeg_version"],
            frames=[FrameRecord(**f) for f in data["frames"]],
            folder=folder,
        )

    def paths(self) -> list[Path]:
        return [self.folder / f.file for f in self.frames]

    def records(self, root: str | Path | None = None) -> list[dict[str, Any]]:
        """The frames as instances carry them: path (relative to ``root`` when inside it), sha256,
        index, timestamp; in temporal order."""
        out = []
        for f in self.frames:
            path = self.folder / f.file
            if root is not None:
                try:
                    path = path.resolve().relative_to(Path(root).resolve())
                except ValueError:
                    path = path.resolve()
            out.append({"path": path.as_posix(), "sha256": f.sha256, "index": f.index, "timestamp": f.timestamp})
        return out


def tool_memo_dir() -> Path:
    """Per-machine memo of executable hashes: $SOCIALBENCH_TOOL_MEMO_DIR, else ~/.cache/socialbench."""
    env = os.environ.get("SOCIALBENCH_TOOL_MEMO_DIR")
    return Path(env) if env else Path.home() / ".cache" / "socialbench"


class FrameCache:
    def __init__(self, root: str | Path, *, verify: bool = True):
        self.root = Path(root)
        self.verify = verify
        self.hits = 0
        self.misses = 0
        self.used: set[str] = set()  # keys served by this instance (hits and extractions)

    def key_parts(self, video_sha256: str, sampling: FrameSampling) -> dict[str, Any]:
        return {
            "format": CACHE_FORMAT,
            "video_sha256": video_sha256,
            "sampling": sampling.key(),
            # The memo of the ffmpeg hash holds machine-specific paths and mtimes: it lives in the
            # user's cache, not in the (DVC-versioned) frame cache.
            "ffmpeg_sha256": av.tool_identity(tool_memo_dir()),
        }

    def _folder(self, key: str) -> Path:
        return self.root / key[:2] / key

    def _load(self, folder: Path) -> FrameManifest | None:
        path = folder / MANIFEST
        if not path.is_file():
            return None
        try:
            manifest = FrameManifest.from_dict(json.loads(path.read_text("utf-8")), folder)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("frame cache: unreadable manifest %s (%s); extracting again", path, exc)
            return None
        if av.is_still_image(str(manifest.source.get("format") or ""), manifest.source.get("frame_count")):
            # Written before still images were refused: not a video's frames. Extracting again
            # reports the file (no_video_stream).
            log.warning("frame cache: %s holds the frame of a still image, not a video; ignoring it", path)
            return None
        for f in manifest.frames:
            p = folder / f.file
            if not p.is_file() or (self.verify and sha256_file(p) != f.sha256):
                log.warning("frame cache: %s is missing or changed; extracting again", p)
                return None
        return manifest

    def lookup(self, video: str | Path, sampling: FrameSampling) -> FrameManifest | None:
        """The cached frames of ``video`` under ``sampling``, or None; starts no process."""
        av.check_file(video)
        key = sha256_json(self.key_parts(sha256_file(video), sampling))
        return self._load(self._folder(key))

    def frames(self, video: str | Path, sampling: FrameSampling) -> FrameManifest:
        """Sampled frames of ``video``: from the cache, else from one ffmpeg decoding pass.
        Raises :class:`~socialbench.media.errors.MediaError` for unusable media."""
        av.check_file(video)
        parts = self.key_parts(sha256_file(video), sampling)
        key = sha256_json(parts)
        folder = self._folder(key)
        found = self._load(folder)
        if found is not None:
            self.hits += 1
            self.used.add(key)
            return found
        lock_dir = self.root / ".locks"
        lock_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock_dir / f"{key}.lock")):
            found = self._load(folder)  # another process may have finished it meanwhile
            if found is not None:
                self.hits += 1
                self.used.add(key)
                return found
            manifest = self._extract(video, sampling, key, parts, folder)
            self.misses += 1  # counts extractions that succeeded
            self.used.add(key)
            return manifest

    def prune(self, keep: set[str]) -> int:
        """Remove every entry (and its lock file) whose key is not in ``keep``; return how many.
        The pipeline prunes to the entries its processed instances name, so the versioned frame
        folder holds exactly those frames, whatever earlier runs left behind."""
        removed = 0
        for shard in sorted(p for p in self.root.glob("??") if p.is_dir()):
            for entry in sorted(p for p in shard.iterdir() if p.is_dir()):
                if entry.name not in keep:
                    shutil.rmtree(entry)
                    (self.root / ".locks" / f"{entry.name}.lock").unlink(missing_ok=True)
                    removed += 1
            if not any(shard.iterdir()):
                shard.rmdir()
        return removed

    def _extract(self, video: str | Path, sampling: FrameSampling, key: str, parts: dict[str, Any], folder: Path) -> FrameManifest:
        timeline = av.video_timeline(video)
        indices = select_indices(sampling, list(timeline.times), timeline.end)
        tmp = self.root / ".tmp" / f"{key}.{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        try:
            extracted = av.extract_frames(timeline, indices, tmp, max_side=sampling.max_side, image_format=sampling.image_format)
            from PIL import Image

            with Image.open(extracted[0].file) as im:
                size = im.size
            info = timeline.info
            manifest = FrameManifest(
                key=key,
                key_parts=parts,
                source={
                    "sha256": parts["video_sha256"],
                    "format": info.format_name,
                    "frame_count": timeline.frame_count,
                    "duration": seconds(timeline.end),
                    "fps": info.fps and str(info.fps),
                    "width": info.video.width if info.video else None,
                    "height": info.video.height if info.video else None,
                    "rotation": info.rotation,
                },
                size=size,
                ffmpeg_version=av.ffmpeg_version(),
                frames=[
                    FrameRecord(index=f.index, timestamp=seconds(f.time), file=f.file.name, sha256=sha256_file(f.file))
                    for f in extracted
                ],
                folder=folder,
            )
            (tmp / MANIFEST).write_text(json.dumps(manifest.to_dict(), sort_keys=True, indent=1) + "\n", "utf-8")
            folder.parent.mkdir(parents=True, exist_ok=True)
            if folder.exists():  # a stale or damaged entry: replace it
                shutil.rmtree(folder)
            os.replace(tmp, folder)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return manifest

