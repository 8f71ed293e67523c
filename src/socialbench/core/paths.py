"""Where a command may write and what it may read, checked before it reads anything (the only I/O is
``stat`` and ``resolve``): :func:`check_io` (no output is, holds or lies inside an input, and every output
can be created), :func:`resolve_inside` / :class:`MediaRoots` (paths named in data stay inside their root),
:func:`refuse_special` (FIFOs, devices, sockets, found without opening them), :func:`remove_inside` /
:func:`move_inside` (only inside a root), :class:`DiskFull` (no space left where a file is written)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError, SocialbenchError

PathArg = str | Path | None | Sequence[str | Path | None]


class DiskFull(SocialbenchError):
    """No space (or quota) left where a file was being written; nothing was left behind."""

    def __init__(self, path: str | Path, what: str = "nothing was written"):
        self.path = str(path)
        super().__init__(f"{path}: no space left on the device; {what} (free some space and run again)")


def user_cache(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/socialbench`` (else ``~/.cache/socialbench``): the root of socialbench's per-user caches."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "socialbench"


def is_disk_full(exc: BaseException) -> bool:
    """An OSError saying the device (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


# ---- special files ----------------------------------------------------------------------------------
_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is when it is no regular file or folder, else None."""
    return next((name for test, name in _SPECIAL if test(mode)), None)


def special_file(path: str | Path) -> str | None:
    """What ``path`` is when a FIFO, device or socket, else None (``stat`` only: a FIFO open would hang)."""
    try:
        return special_kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def special_problem(kind: str, what: str = "file") -> str:
    return f"is {kind}, not a {what}; refused before opening it (reading it could wait forever)"


def refuse_special(path: str | Path, what: str = "file") -> None:
    """DataError naming ``path`` when it is a FIFO, device or socket where a ``what`` is expected."""
    kind = special_file(path)
    if kind is not None:
        raise DataError(str(path), special_problem(kind, what))


#: Most entries of an existing output folder looked at for links to an input (frames folders are big).
MAX_WALK = 100_000


def _named(paths: Mapping[str, PathArg]) -> list[tuple[str, Path]]:
    """(option, path) pairs, one per path, None left out."""
    out = []
    for option, value in paths.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        out += [(option, Path(v)) for v in values if v is not None]
    return out


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path, or the same inode (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def within(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it (both as given: resolve them first)."""
    return path == root or root in path.parents


def blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is a file, not a folder: ``path`` cannot be made."""
    for parent in path.parents:  # as given (relative to the working folder when relative)
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


_NOTHING = "(nothing was read or written)"


@dataclass(frozen=True)
class _Input:
    option: str
    path: Path
    real: Path  # symlinks and ``..`` followed
    folder: bool  # a folder the command reads (anything under it is an input)
    inode: tuple[int, int] | None  # (device, inode) of an existing input file, for hard links


def _input(option: str, path: Path, folders: Sequence[str]) -> _Input:
    folder = option in folders or path.is_dir()
    inode = None
    if not folder:
        try:
            st = os.stat(path)
            inode = (st.st_dev, st.st_ino)
        except OSError:
            pass
    return _Input(option, path, path.resolve(), folder, inode)


def _overlap(target: Path, inp: _Input) -> str | None:
    """How an output path meets an input: the same file, inside an input folder, or holding it; else None."""
    if _same(target, inp.path):
        return "is the same file as"
    real = target.resolve()
    if inp.folder and within(real, inp.real):
        return "lies inside"
    if within(inp.real, real):
        return "holds"
    return None


def _linked_input(folder: Path, ins: Sequence[_Input]) -> tuple[Path, _Input] | None:
    """A link in an output folder to (or into) an input, or a hard link to an input file."""
    files = {i.inode: i for i in ins if i.inode is not None}
    seen = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            seen += 1
            if seen > MAX_WALK:
                return None
            entry = Path(dirpath) / name
            if entry.is_symlink():
                real = entry.resolve()
                for inp in ins:
                    if real == inp.real or (inp.folder and within(real, inp.real)) or within(inp.real, real):
                        return entry, inp
            elif name in filenames and files:
                try:
                    st = entry.lstat()
                except OSError:
                    continue
                if st.st_nlink > 1 and (st.st_dev, st.st_ino) in files:
                    return entry, files[(st.st_dev, st.st_ino)]
    return None


#: Why each way an output meets an input (:func:`_overlap`) is refused.
_OVERLAP_WHY = {
    "is the same file as": "; an output never overwrites an input",
    "lies inside": ", a folder the command reads; an output never writes into an input",
    "holds": "; a folder the command writes into never holds one of its inputs",
}


def check_io(
    inputs: Mapping[str, PathArg],
    outputs: Mapping[str, PathArg],
    folders: Sequence[str] = (),
    receives: Mapping[str, Sequence[str | Path]] | None = None,
    root: str | Path | None = None,
) -> None:
    """Refuse, before anything is read, a command that could destroy an input or could not write an output
    (a ConfigError naming option and path). ``inputs``/``outputs``: option -> path, paths or None; ``folders``:
    options taking a folder; ``receives``: for an output folder that also holds inputs, the paths it will
    receive (checked instead of the folder); ``root``: the folder the command owns (outputs may not leave it;
    without it an output may lie anywhere the user can write)."""
    ins, outs = _named(inputs), _named(outputs)
    receives = receives or {}
    for option, path in ins:
        if option not in folders and path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a file ({option} takes a file)")
        kind = special_file(path)
        if kind is not None:
            raise ConfigError(f"{path}: {special_problem(kind)} ({option})")
    checked = [_input(option, path, folders) for option, path in ins]
    for j, (option, path) in enumerate(outs):
        if option in folders:
            if path.exists() and not path.is_dir():
                raise ConfigError(f"{path}: is a file, but {option} takes a folder")
        elif path.is_dir():
            raise ConfigError(f"{path}: is a folder; {option} takes the path of a file")
        kind = special_file(path)
        if kind is not None:  # a FIFO would block the writer (the request cache opens its file in place)
            raise ConfigError(f"{path}: is {kind}, not a file ({option} takes the path of a file) {_NOTHING}")
        # the output itself, then (for a folder given ``receives``) each path it will receive
        targets = [(path, True)] + ([(Path(r), False) for r in receives[option]] if option in receives else [])
        for target, whole in targets:
            for inp in checked:
                if whole and option in receives:  # a folder holding inputs by design: only never one of them
                    how = "is the same file as" if _same(target, inp.path) else None
                else:
                    how = _overlap(target, inp)
                if how is not None:
                    what = option if whole else f"{option} (its {target})"
                    raise ConfigError(f"{target}: {what} {how} {inp.option} {inp.path}{_OVERLAP_WHY[how]} {_NOTHING}")
        for other_option, other in outs[:j]:
            if _same(path, other):
                what = f"{option} twice" if option == other_option else f"{other_option} and {option}"
                raise ConfigError(f"{path}: {what} name the same file; give each output its own path {_NOTHING}")
        if option in folders and option not in receives and path.is_dir():
            linked = _linked_input(path, checked)
            if linked is not None:
                entry, inp = linked
                raise ConfigError(
                    f"{entry}: a link in {option} leads to {inp.option} {inp.path}; writing there would"
                    f" change the input {_NOTHING}"
                )
        blocker = blocking_file(path)
        if blocker is not None:
            raise ConfigError(f"{path}: cannot be created: {blocker} is a file, not a folder ({option})")
        if option not in folders and path.is_symlink():
            raise ConfigError(
                f"{path}: is a symlink (to {Path(os.readlink(path))}); {option} never writes through a link,"
                f" which would change the file it leads to (remove the link, or name the file itself) {_NOTHING}"
            )
        if root is not None:  # the folder the command names as its own: links of its folders followed
            placed = path.parent.resolve() / path.name
            if not within(placed, Path(root).resolve()):
                raise ConfigError(
                    f"{path}: leads to {placed}, outside {root}; {option} writes only inside the folder the"
                    f" command owns {_NOTHING}"
                )


# ---- paths named inside data ------------------------------------------------------------------------
def resolve_inside(
    root: str | Path,
    name: str | Path,
    source: str,
    record: str | None = None,
    field: str | None = None,
    what: str = "path",
) -> Path:
    """The path a name inside data stands for: under ``root``, ``..`` folded, symlinks kept; leaving ``root``,
    empty or NUL is a DataError naming ``source``, record and field. The one resolver of such paths."""
    text = str(name)
    if not text or "\x00" in text:
        raise DataError(source, f"{what} {text!r} is not a path", record=record, field=field)
    root_path = Path(root)
    root_real = root_path.resolve()
    p = Path(text)  # taken as written: data never expands ``~`` or variables
    lexical = Path(os.path.normpath(p if p.is_absolute() else root_real / p))
    real = lexical.resolve() if p.is_absolute() else (root_real / p).resolve()
    inside = any(within(lexical, r) for r in (root_real, Path(os.path.abspath(root_path))))
    if not inside or not within(real, root_real):  # leaving it lexically, or through a symlink
        how = "leads through a symlink" if inside else "leads"
        shown = text if len(text) <= 80 else text[:79] + "…"
        raise DataError(
            source,
            f"{what} {shown} {how} to {real}, outside {root_path}; refused so that no other file is read",
            record=record,
            field=field,
        )
    return lexical if p.is_absolute() else Path(os.path.normpath(root_path / p))


# ---- deleting and archiving ---------------------------------------------------------------------------
def inside_root(path: Path, root: Path, doing: str) -> Path:
    """``path`` with its folder resolved (a link stays a link) when inside ``root``; else a SocialbenchError."""
    root_real = root.resolve()
    placed = path.parent.resolve() / path.name
    if path.name in ("", ".", "..") or not within(placed, root_real) or placed == root_real:
        raise SocialbenchError(f"{path}: leads to {placed}, not inside {root} ({root_real}); nothing was {doing}")
    return placed


def remove_inside(path: str | Path, root: str | Path, missing_ok: bool = False) -> None:
    """Delete a file, folder or link (never followed) only when it lies inside ``root``."""
    placed = inside_root(Path(path), Path(root), "deleted")
    if missing_ok and not placed.is_symlink() and not placed.exists():
        return
    if placed.is_symlink() or not placed.is_dir():
        placed.unlink()
    else:
        shutil.rmtree(placed)  # rmtree removes links inside as links


def move_inside(src: str | Path, dst: str | Path, root: str | Path, dst_root: str | Path) -> None:
    """Move ``src`` (inside ``root``) onto ``dst`` (inside ``dst_root``); onto itself is an error."""
    s = inside_root(Path(src), Path(root), "moved")
    d = inside_root(Path(dst), Path(dst_root), "moved")
    if s == d or within(d, s) or (d.exists() and _same(s, d)):
        raise SocialbenchError(f"{src}: moving it to {dst} would move it onto itself; nothing was moved")
    if d.is_symlink() or (d.exists() and not d.is_dir()):
        d.unlink()
    elif d.is_dir():
        shutil.rmtree(d)
    d.parent.mkdir(parents=True, exist_ok=True)
    os.replace(s, d) if _same_device(s.parent, d.parent) else shutil.move(str(s), str(d))


def _same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


#: Media folders under the repository root: data, and DVC's cache (``cache.type: symlink``).
DEFAULT_MEDIA_FOLDERS = ("data", ".dvc/cache")


@dataclass(frozen=True)
class MediaRoots:
    """Where media may resolve: :data:`DEFAULT_MEDIA_FOLDERS` under ``root`` and params ``media.allowed_roots``."""

    root: Path
    allowed: tuple[Path, ...]
    extra: tuple[str, ...] = ()  # media.allowed_roots as written, for messages

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None, root: str | Path = ".") -> MediaRoots:
        root = Path(root).resolve()
        extra = tuple(str(r) for r in ((params or {}).get("media") or {}).get("allowed_roots") or ())
        folders = [root / f for f in DEFAULT_MEDIA_FOLDERS] + [root / Path(r).expanduser() for r in extra]
        return cls(root=root, allowed=tuple(f.resolve() for f in folders), extra=extra)

    @classmethod
    def only(cls, root: str | Path) -> MediaRoots:
        """Media relative to ``root`` and only under it."""
        root = Path(root).resolve()
        return cls(root=root, allowed=(root,))

    def resolve(self, media: str | Path) -> Path:
        """Where a media path leads, symlinks and ``..`` followed."""
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
        if self.allowed == (self.root,):
            return f"{media} leads {how}to {target}, outside {self.root}; refused so that no other file is read"
        allowed = f"{self.root / 'data'}" + (f" or media.allowed_roots ({', '.join(self.extra)})" if self.extra else "")
        return (
            f"{media} leads {how}to {target}, outside the repository's data folder {allowed}; refused so that"
            " no other file is read or sent to a model (add its folder to media.allowed_roots in params to allow it)"
        )
