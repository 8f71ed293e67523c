"""The run's closing commit (``socialbench commit``): every DVC stage's outputs recorded in dvc.lock and DVC's
cache by DVC's own code, as ``dvc commit --force --no-relink`` records them. DVC reads a params file once per
params dependency (107 times at demo size) and git's index once per output (152 times); here each is read once
while it is unchanged, which shortens the job that ends every run on one core. The lock comes out the same."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.results.prune import dvc_lock


def _version(path: str | Path) -> tuple[int, int, int] | None:
    """A file's inode, size and mtime, or None when it cannot be read."""
    with contextlib.suppress(OSError):
        return (st := os.stat(path)).st_ino, st.st_size, st.st_mtime_ns
    return None


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Inside: DVC's params-file reader and git-index lookup answer from memory while their file is unchanged, and
    dvc.lock is parsed plainly for its rewrite (DVC writes it: no comments or styles to keep; the same bytes out)."""
    import dvc.dependency.param as param
    import dvc.utils.serialize._yaml as dvc_yaml
    from scmrepo.git.backend.dulwich import DulwichBackend

    originals = (param.read_param_file, DulwichBackend.is_tracked, dvc_yaml.parse_yaml_for_update)
    read_param_file, is_tracked, for_update = originals
    read: dict[tuple[Any, ...], Any] = {}
    indexed: dict[tuple[Any, ...], tuple[bytes, ...]] = {}

    def read_param_file_once(fs: Any, path: str, key_paths: list[str] | None = None, **kwargs: Any) -> Any:
        key = (path, _version(path), tuple(key_paths or ()), repr(sorted(kwargs.items())))
        if getattr(fs, "protocol", None) != "local" or key[1] is None:
            return read_param_file(fs, path, key_paths, **kwargs)
        read[key] = read[key] if key in read else read_param_file(fs, path, key_paths, **kwargs)
        return copy.deepcopy(read[key])  # what DVC gets is its own to change

    def is_tracked_once(self: Any, path: str) -> bool:
        index = self.repo.index_path()
        key = (index, _version(index))
        if key not in indexed:
            indexed.clear()
            indexed[key] = tuple(self.repo.open_index())
        rel = os.path.relpath(path, self.root_dir).replace(os.path.sep, "/").encode()
        return any(p == rel or p.startswith(rel + b"/") for p in indexed[key])

    def parse_lock_plainly(text: str, path: str) -> Any:  # round-trip parsing: most of rewriting dvc.lock
        return dvc_yaml.parse_yaml(text, path) if os.path.basename(path) == "dvc.lock" else for_update(text, path)

    patched = (read_param_file_once, is_tracked_once, parse_lock_plainly)
    param.read_param_file, DulwichBackend.is_tracked, dvc_yaml.parse_yaml_for_update = patched
    try:
        yield
    finally:
        param.read_param_file, DulwichBackend.is_tracked, dvc_yaml.parse_yaml_for_update = originals


def commit_outputs(repo_root: Path) -> int:
    """Commit every stage of the DVC repository ``repo_root`` (forced, workspace files left in place); return how
    many. A repository DVC cannot read or commit is a one-line DataError naming it; dvc.lock is left as it was."""
    dvc_lock(repo_root)
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    try:
        # DVC collects every stage (dvc.yaml's, and .dvc files such as records.dvc) under the working folder
        with contextlib.chdir(repo_root), read_once(), Repo(".") as repo:
            return len(repo.commit(force=True, relink=False))
    except DvcException as exc:  # a missing output, a broken dvc.yaml, ...: DVC's own words, one line
        raise DataError(str(repo_root), f"DVC cannot commit: {exc}") from None
