"""Content-addressed frame cache, one sidecar manifest per sampled clip (docs/media.md, "Frame cache and manifests").
The key is sha256 over the video's bytes, the sampling, the ffmpeg build and the format. Layout: ``<key[:2]>/<key>/``,
``.locks/``, ``.tmp/``, ``index.json``; entries are written to ``.tmp`` and renamed in under a per-key lock."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from socialbench.core.errors import SocialbenchError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.io import write_text_atomic
from socialbench.core.paths import remove_inside
from socialbench.media.frames import extract_frames
from socialbench.media.probe import check_file, is_still_image, video_timeline
from socialbench.media.run import ffmpeg_version, tool_identity
from socialbench.media.sampling import FrameSampling, seconds, select_indices

log = logging.getLogger(__name__)

CACHE_FORMAT = 2  # 2: frames scaled with swscale's bitexact flag (media.run.SCALE_FLAGS)
MANIFEST = "manifest.json"
INDEX = "index.json"  # conventional name of the index, at the cache root
LOCKS = ".locks"
TMP = ".tmp"


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
    def from_dict(cls, data: dict[str, Any], folder: Path) -> FrameManifest:
        plain = {k: data[k] for k in ("key", "key_parts", "source", "ffmpeg_version")}
        frames = [FrameRecord(**f) for f in data["frames"]]
        return cls(**plain, size=tuple(data["size"]), frames=frames, folder=folder)  # type: ignore[arg-type]

    def paths(self) -> list[Path]:
        return [self.folder / f.file for f in self.frames]

    def records(self, root: str | Path | None = None) -> list[dict[str, Any]]:
        """The frames as instances carry them (path relative to ``root`` when inside, sha256, index, timestamp)."""
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
            # memoised in the user's cache: it holds machine-specific paths (module docstring)
            "ffmpeg_sha256": tool_identity(tool_memo_dir()),
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
        if is_still_image(str(manifest.source.get("format") or ""), manifest.source.get("frame_count")):
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

    def _key(self, video: str | Path, sampling: FrameSampling) -> tuple[dict[str, Any], str]:
        check_file(video)
        parts = self.key_parts(sha256_file(video), sampling)
        return parts, sha256_json(parts)

    def lookup(self, video: str | Path, sampling: FrameSampling) -> FrameManifest | None:
        """The cached frames of ``video`` under ``sampling``, or None; starts no process."""
        return self._load(self._folder(self._key(video, sampling)[1]))

    def frames(self, video: str | Path, sampling: FrameSampling) -> FrameManifest:
        """Sampled frames of ``video``, from the cache or one ffmpeg decoding pass; MediaError for unusable media."""
        parts, key = self._key(video, sampling)
        folder = self._folder(key)
        manifest = self._load(folder)
        if manifest is None:
            lock = self._lock_path(key)
            lock.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(lock)):
                manifest = self._load(folder)  # another process may have finished it meanwhile
                if manifest is None:
                    manifest = self._extract(video, sampling, key, parts, folder)
                    self.misses += 1  # counts extractions that succeeded
                    self.used.add(key)
                    return manifest
        self.hits += 1
        self.used.add(key)
        return manifest

    def _lock_path(self, key: str) -> Path:
        return self.root / LOCKS / f"{key}.lock"

    def keys(self) -> list[str]:
        """The keys of the entry folders under the root (``<key[:2]>/<key>/``), sorted. Files at the
        root (the index) and the bookkeeping folders (``.locks``, ``.tmp``) are not entries."""
        if not self.root.is_dir():
            return []
        return sorted(
            entry.name
            for shard in self.root.iterdir()
            if shard.is_dir() and len(shard.name) == 2 and not shard.name.startswith(".")
            for entry in shard.iterdir()
            if entry.is_dir()
        )

    def prune(self, keep: set[str]) -> int:
        """Remove every entry (and lock) whose key is not in ``keep``, and killed runs' leftovers; returns the count."""
        removed = 0
        for key in self.keys():
            if key not in keep:
                remove_inside(self._folder(key), self.root)  # a linked entry goes as a link, never followed
                remove_inside(self._lock_path(key), self.root, missing_ok=True)
                removed += 1
        for shard in sorted(p for p in self.root.glob("??") if p.is_dir() and not p.name.startswith(".")):
            if not any(shard.iterdir()):
                shard.rmdir()
        self.remove_stale_tmp()
        return removed

    def remove_stale_tmp(self) -> list[str]:
        """Remove what killed runs left in ``.tmp/`` (``<name>.<pid>``) whose process is gone and, for an entry, whose
        key's lock is free at once; return the names removed, sorted."""
        tmp_dir = self.root / TMP
        if not tmp_dir.is_dir():
            return []
        removed = []
        for path in sorted(tmp_dir.iterdir()):
            stem, _, pid = path.name.rpartition(".")
            if not stem or not pid.isdigit() or _pid_alive(int(pid)):
                continue
            lock = self._lock_path(stem)
            # an entry's leftover waits for its key's lock (unless nobody ever locked the key here)
            entry = path.is_dir() and not path.is_symlink() and lock.exists()
            try:
                with FileLock(str(lock), timeout=0) if entry else contextlib.nullcontext():
                    remove_inside(path, tmp_dir, missing_ok=True)
            except Timeout:
                log.info("frame cache: %s is being extracted by another process; leaving %s", stem, path)
                continue
            log.info("frame cache: removed %s, left by a process that is gone", path)
            removed.append(path.name)
        return removed

    def index(self, keys: set[str] | list[str]) -> dict[str, Any]:
        """The index of the entries ``keys`` (each in the cache): ``{"entries": [sorted keys], "format":
        CACHE_FORMAT, "frames": total frame count}``, nothing that depends on timing or the machine."""
        entries = sorted(set(keys))
        frames = 0
        for key in entries:
            path = self._folder(key) / MANIFEST
            try:
                frames += len(json.loads(path.read_text("utf-8"))["frames"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise SocialbenchError(
                    f"{path}: frame cache entry {key} is missing or unreadable ({exc}); cannot index it"
                ) from None
        return {"entries": entries, "format": CACHE_FORMAT, "frames": frames}

    def write_index(self, path: str | Path, keys: set[str] | list[str]) -> dict[str, Any]:
        """Write :meth:`index` of ``keys`` to ``path`` atomically and return it; inside the cache through
        ``.tmp/`` (.dvcignore'd), so a killed write leaves nothing in the versioned folder."""
        index = self.index(keys)
        text = json.dumps(index, sort_keys=True, indent=1) + "\n"
        path = Path(path)
        if not path.resolve().is_relative_to(self.root.resolve()):
            write_text_atomic(path, text)
            return index
        tmp_dir = self.root / TMP
        tmp_dir.mkdir(parents=True, exist_ok=True)
        tmp = tmp_dir / f"{path.name}.{os.getpid()}"
        try:
            tmp.write_text(text, encoding="utf-8", newline="\n")
            path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return index

    def _extract(
        self, video: str | Path, sampling: FrameSampling, key: str, parts: dict[str, Any], folder: Path
    ) -> FrameManifest:
        timeline = video_timeline(video)
        indices = select_indices(sampling, list(timeline.times), timeline.end)
        tmp = self.root / TMP / f"{key}.{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        try:
            extracted = extract_frames(
                timeline, indices, tmp, max_side=sampling.max_side, image_format=sampling.image_format
            )
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
                ffmpeg_version=ffmpeg_version(),
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


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine; True when that cannot be told (no signal 0 on Windows)."""
    if pid <= 0 or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, under another user
        return True
    return True
