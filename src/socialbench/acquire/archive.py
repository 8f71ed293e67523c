"""Extract a downloaded zip or tar(.gz/.bz2/.xz) archive safely and atomically.

Every member is checked before anything is written: an absolute path, a ``..`` component (``/`` or
``\\`` separated), a symbolic or hard link, a device file or FIFO, an encrypted zip member, a member
that would resolve outside the destination, or a file that another member needs as a folder refuses
the WHOLE archive with a :class:`UnsafeArchive` naming the archive and the member. Only regular files
and folders are ever created (the files' contents are streamed by this module, not by ``extractall``).

The archive is extracted into a hidden temporary sibling of ``dest``
(``.<name>.extract-XXXX``) that is renamed into place only once every member is written, so an
interrupted or failed extraction leaves ``dest`` absent (or, with ``replace=True``, as it was).
Leftovers of a killed extraction are removed by the next ``extract`` to the same ``dest``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from socialbench.core.errors import DataError, SocialbenchError

log = logging.getLogger(__name__)

__all__ = ["Member", "UnsafeArchive", "check_archive", "extract"]

_COPY_CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafeArchive(DataError):
    """An archive member that must not be extracted; nothing was written."""

    def __init__(self, archive: str, member: str, reason: str):
        self.member = member
        self.reason = reason
        super().__init__(archive, f"member {member!r} {reason}; refusing the whole archive, nothing was extracted")


@dataclass(frozen=True)
class Member:
    """A checked member: its normalised relative path parts and whether it is a folder."""

    name: str  # as stored in the archive
    parts: tuple[str, ...]
    is_dir: bool

    @property
    def relpath(self) -> str:
        return "/".join(self.parts)


def _path_reason(name: str) -> str | None:
    """Why a member name is unsafe, or None."""
    if name == "":
        return "has an empty name"
    if "\x00" in name:
        return "has a NUL byte in its name"
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "is an absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "has a '..' component"
    return None


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in re.split(r"[/\\]", name) if p not in ("", "."))


def _inside(root: str, parts: tuple[str, ...]) -> bool:
    target = os.path.normpath(os.path.join(root, *parts))
    return target == root or target.startswith(root + os.sep)


def _zip_reason(info: zipfile.ZipInfo) -> str | None:
    mode = (info.external_attr >> 16) & 0xFFFF
    kind = stat.S_IFMT(mode)
    if kind and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        if stat.S_ISLNK(mode):
            return "is a symbolic link"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            return "is a device file"
        if stat.S_ISFIFO(mode):
            return "is a FIFO"
        return "is not a regular file or folder"
    if info.flag_bits & 0x1:
        return "is encrypted"
    return None


def _tar_reason(info: tarfile.TarInfo) -> str | None:
    if info.isreg() or info.isdir():
        return None
    if info.issym():
        return f"is a symbolic link (to {info.linkname!r})"
    if info.islnk():
        return f"is a hard link (to {info.linkname!r})"
    if info.ischr() or info.isblk():
        return "is a device file"
    if info.isfifo():
        return "is a FIFO"
    return "is not a regular file or folder"


def _kind(archive: Path) -> str:
    if not archive.is_file():
        raise DataError(str(archive), "archive does not exist" if not archive.exists() else "archive is not a file")
    if zipfile.is_zipfile(archive):
        return "zip"
    try:
        if tarfile.is_tarfile(archive):
            return "tar"
    except (tarfile.TarError, OSError, EOFError) as exc:  # a truncated compressed stream
        raise DataError(str(archive), f"unreadable archive: {exc}") from None
    raise DataError(str(archive), "not a zip or tar(.gz/.bz2/.xz) archive")


def _check(archive: Path, entries: list[tuple[str, str | None, bool]]) -> list[Member]:
    """Members from (name, type-reason, is_dir) triples; raises UnsafeArchive on the first bad one."""
    root = os.path.normpath(os.path.abspath("/__dest__"))
    members: list[Member] = []
    files: dict[tuple[str, ...], str] = {}
    dirs: dict[tuple[str, ...], str] = {}
    for name, type_reason, is_dir in entries:
        reason = _path_reason(name) or type_reason
        parts = _parts(name)
        if reason is None and not parts and not is_dir:
            reason = "names no file"
        if reason is None and not _inside(root, parts):
            reason = "resolves outside the destination"
        if reason is not None:
            raise UnsafeArchive(str(archive), name, reason)
        members.append(Member(name, parts, is_dir))
        if is_dir:
            if parts:
                dirs.setdefault(parts, name)
        else:
            files[parts] = name
        for i in range(1, len(parts)):
            dirs.setdefault(parts[:i], name)
    for parts, name in files.items():
        if parts in dirs:
            raise UnsafeArchive(str(archive), name, f"is a file but member {dirs[parts]!r} needs it as a folder")
    return members


def _zip_entries(zf: zipfile.ZipFile) -> list[tuple[str, str | None, bool]]:
    return [(i.filename, _zip_reason(i), i.is_dir()) for i in zf.infolist()]


def _tar_entries(tf: tarfile.TarFile) -> list[tuple[str, str | None, bool]]:
    return [(m.name, _tar_reason(m), m.isdir()) for m in tf.getmembers()]


def check_archive(archive: str | os.PathLike[str]) -> list[Member]:
    """The archive's members, checked (see the module docstring); writes nothing."""
    archive = Path(archive)
    kind = _kind(archive)
    try:
        if kind == "zip":
            with zipfile.ZipFile(archive) as zf:
                return _check(archive, _zip_entries(zf))
        with tarfile.open(archive, "r:*") as tf:
            return _check(archive, _tar_entries(tf))
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(str(archive), f"unreadable archive: {exc}") from None


def _copy(src: IO[bytes], dst: IO[bytes]) -> None:
    shutil.copyfileobj(src, dst, _COPY_CHUNK)


def _streams(archive: Path, kind: str) -> Iterator[tuple[Member, Callable[[], IO[bytes]] | None]]:
    """Each checked member with a function opening its content (None for a folder)."""
    if kind == "zip":
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            members = _check(archive, _zip_entries(zf))
            for info, member in zip(infos, members):
                yield member, (None if member.is_dir else (lambda info=info: zf.open(info)))
        return
    with tarfile.open(archive, "r:*") as tf:
        infos = tf.getmembers()
        members = _check(archive, _tar_entries(tf))
        for info, member in zip(infos, members):
            yield member, (None if member.is_dir else (lambda info=info: tf.extractfile(info)))


def _prune_leftovers(dest: Path) -> None:
    for stale in dest.parent.glob(f".{dest.name}.extract-*"):
        log.info("removing %s, left by an interrupted extraction", stale)
        shutil.rmtree(stale, ignore_errors=True)
    for stale in dest.parent.glob(f".{dest.name}.old-*"):
        shutil.rmtree(stale, ignore_errors=True)


def extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str], *, replace: bool = False) -> Path:
    """Extract ``archive`` (zip, tar, tar.gz, tar.bz2, tar.xz) into the folder ``dest`` and return it.

    ``dest`` must not exist unless ``replace=True`` (then the old folder is swapped out only after the
    new one is complete). Raises :class:`UnsafeArchive` for an unsafe member (nothing written) and
    :class:`~socialbench.core.errors.DataError` for an unreadable archive or a failed extraction (``dest``
    left as it was)."""
    archive = Path(archive)
    dest = Path(dest)
    kind = _kind(archive)
    if dest.exists() and not replace:
        raise SocialbenchError(f"{dest}: already exists; not extracting {archive} over it (replace=True swaps it)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    _prune_leftovers(dest)

    # Check everything before creating anything.
    check_archive(archive)

    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.extract-", dir=dest.parent))
    current = None
    count = 0
    try:
        with contextlib.closing(_streams(archive, kind)) as streams:
            for member, opener in streams:
                current = member.name
                target = tmp.joinpath(*member.parts)
                if opener is None:
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with opener() as src, open(target, "wb") as dst:
                    _copy(src, dst)
                count += 1
        current = None
        if dest.exists():
            if not replace:
                raise SocialbenchError(f"{dest}: appeared during the extraction of {archive}; left as it is")
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            os.replace(dest, old / dest.name)
            os.rename(tmp, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, dest)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, (SocialbenchError, KeyboardInterrupt, SystemExit)) or not isinstance(exc, Exception):
            raise
        where = f" at member {current!r}" if current is not None else ""
        raise DataError(str(archive), f"extraction failed{where}: {exc}; nothing was left at {dest}") from exc
    log.info("extracted %d files from %s into %s", count, archive, dest)
    return dest
