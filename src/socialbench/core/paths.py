"""Where a command may write and what it may read, checked before it reads anything.

* :func:`check_io`: no output resolves to one of the command's inputs (a symlink, ``..`` or a hard
  link included), no two outputs to each other, an output is not an existing folder and can be
  created (no file where a folder of its path must be); an input given as a file is not a folder.
* :class:`MediaRoots`: a media path of an instance resolves (symlinks and ``..`` followed) inside
  the repository's data folder or a root allow-listed in params (``media.allowed_roots``).
* :class:`DiskFull`: no space left where a file is written; the writers of :mod:`socialbench.core.io`
  remove their temporary file and raise it, naming the path.

Pure checks on paths; the only I/O is looking at what exists (``stat``, ``resolve``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, SocialbenchError

PathArg = str | Path | None | Sequence[str | Path | None]


class DiskFull(SocialbenchError):
    """No space (or quota) left where a file was being written; nothing was left behind."""

    def __init__(self, path: str | Path, what: str = "nothing was written"):
        self.path = str(path)
        super().__init__(f"{path}: no space left on the device; {what} (free some space and run again)")


def is_disk_full(exc: BaseException) -> bool:
    """An OSError saying the device (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


# ---- inputs and outputs of one command ------------------------------------------------------------
def _named(paths: Mapping[str, PathArg]) -> list[tuple[str, Path]]:
    """(option, path) pairs; an option with several paths gives one pair each, None ones left out."""
    out = []
    for option, value in paths.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        out += [(option, Path(v)) for v in values if v is not None]
    return out


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path (symlinks and ``..`` followed), or,
    when both exist, the same inode (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is not a folder (a file where a folder must be)."""
    for parent in path.parents:  # as given (relative to the working folder when relative)
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_io(inputs: Mapping[str, PathArg], outputs: Mapping[str, PathArg], folders: Sequence[str] = ()) -> None:
    """Refuse, before anything is read, a command whose outputs would overwrite one of its inputs or
    each other, or could not be written. ``inputs`` and ``outputs`` map option names (``--raw``) to
    a path, a list of paths, or None (not given); ``folders`` names the options (of either) whose
    path is a folder (``--out-dir``). ConfigError naming the options and the path."""
    ins, outs = _named(inputs), _named(outputs)
    for option, path in ins:
        if option not in folders and path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a file ({option} takes a file)")
    for j, (option, path) in enumerate(outs):
        for in_option, in_path in ins:
            if _same(path, in_path):
                raise ConfigError(
                    f"{path}: {option} is the same file as {in_option} {in_path}; an output never"
                    " overwrites an input (nothing was read or written)"
                )
        for other_option, other in outs[:j]:
            if _same(path, other):
                what = f"{option} twice" if option == other_option else f"{other_option} and {option}"
                raise ConfigError(
                    f"{path}: {what} name the same file; give each output its own path (nothing was read or written)"
                )
        if option in folders:
            if path.exists() and not path.is_dir():
                raise ConfigError(f"{path}: is a file, but {option} takes a folder")
        elif path.is_dir():
            raise ConfigError(f"{path}: is a folder; {option} takes the path of a file")
        blocker = _blocking_file(path)
        if blocker is not None:
            raise ConfigError(f"{path}: cannot be created: {blocker} is a file, not a folder ({option})")


# ---- media roots ------------------------------------------------------------------------------------
#: Folders under the repository root whose files may be an instance's media by default: the data
#: folder, and DVC's cache (a checkout with ``cache.type: symlink`` links data files into it).
DEFAULT_MEDIA_FOLDERS = ("data", ".dvc/cache")


@dataclass(frozen=True)
class MediaRoots:
    """The folders an instance's media may resolve into: the repository's data folders
    (:data:`DEFAULT_MEDIA_FOLDERS` under ``root``) and ``media.allowed_roots`` from params (absolute,
    or relative to ``root``). Relative media paths are relative to ``root``."""

    root: Path
    allowed: tuple[Path, ...]
    extra: tuple[str, ...] = ()  # media.allowed_roots as written, for messages

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None, root: str | Path = ".") -> MediaRoots:
        root = Path(root).resolve()
        extra = tuple(str(r) for r in ((params or {}).get("media") or {}).get("allowed_roots") or ())
        folders = [root / f for f in DEFAULT_MEDIA_FOLDERS] + [root / Path(r).expanduser() for r in extra]
        return cls(root=root, allowed=tuple(f.resolve() for f in folders), extra=extra)

    def resolve(self, media: str | Path) -> Path:
        """Where a media path leads: relative to ``root``, symlinks and ``..`` followed."""
        p = Path(media)
        return (p if p.is_absolute() else self.root / p).resolve()

    def problem(self, media: str | Path) -> str | None:
        """Why ``media`` may not be read (it resolves outside every allowed folder), or None."""
        target = self.resolve(media)
        if any(target == a or a in target.parents for a in self.allowed):
            return None
        p = Path(media)
        lexical = Path(os.path.normpath(p if p.is_absolute() else self.root / p))
        how = "through a symlink " if any(lexical == a or a in lexical.parents for a in self.allowed) else ""
        allowed = f"{self.root / 'data'}" + (f" or media.allowed_roots ({', '.join(self.extra)})" if self.extra else "")
        return (
            f"{media} leads {how}to {target}, outside the repository's data folder {allowed}; refused so that"
            " no other file is read or sent to a model (add its folder to media.allowed_roots in params to allow it)"
        )
