"""Extract a downloaded zip or tar(.gz/.bz2/.xz) archive safely and atomically: an unsafe member refuses the WHOLE
archive (:class:`UnsafeArchive`) before anything is written; bombs are refused by :class:`ArchiveLimits`; a failure
leaves ``dest`` absent (or as it was)."""

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

_COPY_CHUNK = 1 << 20
_TAR_BLOCK = 512
_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafeArchive(DataError):
    """An archive member that must not be extracted; nothing was written."""

    def __init__(self, archive: str, member: str, reason: str):
        self.member = member
        super().__init__(archive, f"member {member!r} {reason}; refusing the whole archive, nothing was extracted")


class ArchiveTooLarge(UnsafeArchive):
    """An archive that would extract beyond :class:`ArchiveLimits` (a decompression bomb)."""


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds on what one archive may extract to (params ``acquire.archive``). ``max_ratio`` (extracted
    over archive bytes) applies beyond ``ratio_floor`` bytes; real sources are about 20:1 (XML) or 1:1."""

    max_bytes: int = 200 * 1024**3
    max_ratio: float = 200.0
    max_members: int = 200_000
    ratio_floor: int = 16 * 1024**2

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_ratio < 1 or self.max_members < 1 or self.ratio_floor < 0:
            raise SocialbenchError(
                "archive limits: max_bytes, max_ratio and max_members must be >= 1, ratio_floor >= 0"
            )

    @classmethod
    def from_params(cls, params: dict | None) -> ArchiveLimits:
        """The limits params ``acquire.archive`` sets (absent keys keep their defaults)."""
        section = ((params or {}).get("acquire") or {}).get("archive") or {}
        return cls(**{k: v for k, v in section.items() if k in cls.__dataclass_fields__})

    def exceeded(self, extracted: int, archive_size: int) -> str | None:
        """Why ``extracted`` bytes from an archive of ``archive_size`` bytes is too much, or None."""
        if extracted > self.max_bytes:
            return f"extracts to more than {self.max_bytes} bytes (acquire.archive.max_bytes)"
        if extracted > self.ratio_floor and extracted > self.max_ratio * max(archive_size, 1):
            return (
                f"extracts to more than {self.max_ratio:g} times the archive's {archive_size} bytes"
                " (acquire.archive.max_ratio): a decompression bomb?"
            )
        return None


@dataclass(frozen=True)
class Member:
    """A checked member: its normalised relative path parts and whether it is a folder."""

    name: str  # as stored in the archive
    parts: tuple[str, ...]
    is_dir: bool
    size: int = 0  # as declared by the archive (checked against the bytes read while extracting)

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


Entry = tuple[str, str | None, bool, int]  # name, why its type is unsafe (or None), is_dir, declared size


def _check(archive: Path, entries: list[Entry], limits: ArchiveLimits) -> list[Member]:
    """Members from (name, type-reason, is_dir, size) entries; raises UnsafeArchive on the first bad one."""
    if len(entries) > limits.max_members:
        raise ArchiveTooLarge(
            str(archive),
            entries[limits.max_members][0],
            f"is member {limits.max_members + 1}, beyond acquire.archive.max_members ({limits.max_members})",
        )
    root = os.path.normpath(os.path.abspath("/__dest__"))
    size = archive.stat().st_size
    declared = 0
    members: list[Member] = []
    files: dict[tuple[str, ...], str] = {}
    dirs: dict[tuple[str, ...], str] = {}
    for name, type_reason, is_dir, member_size in entries:
        reason = _path_reason(name) or type_reason
        parts = tuple(p for p in re.split(r"[/\\]", name) if p not in ("", "."))
        target = os.path.normpath(os.path.join(root, *parts))
        if reason is None and not parts and not is_dir:
            reason = "names no file"
        if reason is None and not (target == root or target.startswith(root + os.sep)):
            reason = "resolves outside the destination"
        if reason is None and not is_dir and parts in files:
            reason = f"is in the archive twice (as {files[parts]!r} before): which one is meant?"
        if reason is not None:
            raise UnsafeArchive(str(archive), name, reason)
        declared += 0 if is_dir else member_size
        too_much = limits.exceeded(declared, size)
        if too_much is not None:
            raise ArchiveTooLarge(str(archive), name, f"makes the archive one that {too_much}")
        members.append(Member(name, parts, is_dir, 0 if is_dir else member_size))
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


def _zip_entries(zf: zipfile.ZipFile) -> list[Entry]:
    return [(i.filename, _zip_reason(i), i.is_dir(), i.file_size) for i in zf.infolist()]


def _tar_entries(archive: Path, tf: tarfile.TarFile) -> list[Entry]:
    infos = tf.getmembers()
    # tarfile stops quietly where the data ends; a whole archive's end block was read by the last header read
    if tf.fileobj.tell() - tf.offset != _TAR_BLOCK:
        last = infos[-1].name if infos else "(none)"
        raise UnsafeArchive(
            str(archive), last, "is the last one read, and the tar ends without its end-of-archive block (cut short?)"
        )
    return [(m.name, _tar_reason(m), m.isdir(), m.size) for m in infos]


def check_archive(archive: str | os.PathLike[str], limits: ArchiveLimits | None = None) -> list[Member]:
    """The archive's members, checked (see the module docstring); writes nothing."""
    archive = Path(archive)
    kind = _kind(archive)
    try:
        with contextlib.closing(_streams(archive, kind, limits or ArchiveLimits())) as streams:
            return [member for member, _ in streams]
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(str(archive), f"unreadable archive: {exc}") from None


def _copy(src: IO[bytes], dst: IO[bytes], budget: Callable[[int], None]) -> None:
    """Copy in chunks, telling ``budget`` each chunk's size before writing it (it raises to stop)."""
    while chunk := src.read(_COPY_CHUNK):
        budget(len(chunk))
        dst.write(chunk)


def _streams(
    archive: Path, kind: str, limits: ArchiveLimits
) -> Iterator[tuple[Member, Callable[[], IO[bytes]] | None]]:
    """Each checked member with a function opening its content (None for a folder)."""
    if kind == "zip":
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            members = _check(archive, _zip_entries(zf), limits)
            for info, member in zip(infos, members):
                yield member, (None if member.is_dir else (lambda info=info: zf.open(info)))
        return
    with tarfile.open(archive, "r:*") as tf:
        infos = tf.getmembers()
        members = _check(archive, _tar_entries(archive, tf), limits)
        for info, member in zip(infos, members):
            yield member, (None if member.is_dir else (lambda info=info: tf.extractfile(info)))


def extract(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    replace: bool = False,
    limits: ArchiveLimits | None = None,
) -> Path:
    """Extract ``archive`` into the folder ``dest`` (an existing one is swapped out only with ``replace``)."""
    archive = Path(archive)
    dest = Path(dest)
    limits = limits or ArchiveLimits()
    kind = _kind(archive)
    if dest.exists() and not replace:
        raise SocialbenchError(f"{dest}: already exists; not extracting {archive} over it (replace=True swaps it)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{dest.name}.extract-*"):  # left by an interrupted extraction
        log.info("removing %s, left by an interrupted extraction", stale)
        shutil.rmtree(stale, ignore_errors=True)
    for stale in dest.parent.glob(f".{dest.name}.old-*"):
        shutil.rmtree(stale, ignore_errors=True)
    check_archive(archive, limits)  # everything checked before anything is created

    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.extract-", dir=dest.parent))
    archive_size = archive.stat().st_size
    current = None
    count = 0
    written = 0

    def budget(n: int) -> None:
        nonlocal written
        written += n
        too_much = limits.exceeded(written, archive_size)
        if too_much is not None:
            raise ArchiveTooLarge(str(archive), current or "", f"makes the archive one that {too_much}")

    try:
        with contextlib.closing(_streams(archive, kind, limits)) as streams:
            for member, opener in streams:
                current = member.name
                target = tmp.joinpath(*member.parts)
                if opener is None:
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with opener() as src, open(target, "wb") as dst:
                    _copy(src, dst, budget)
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
