"""The viewer's media as MLflow stores them: a few pack files, not one file per image (issue 41).

A pack is the media's bytes one after another; ``index.json`` maps each ``<sha256>.<ext>`` to its pack, offset and
length, for the page's HTTP Range requests (``viewer_page.relink_media``). The same media give the same files."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: A pack's size before the next medium goes to a new one (bytes): 16 MiB, about 600 thumbnails.
PACK_BYTES = 16 * 2**20
#: The most packs one set of media is cut into, whatever its size (the packs grow past PACK_BYTES instead),
#: so a parent run holds at most this many packs, plus the index and the tables, under the 2,000 files asked.
MAX_PACKS = 1000
INDEX_NAME = "index.json"
PACK_SUFFIX = ".pack"
#: The index's format (``format`` key), read by the page's script.
INDEX_FORMAT = 1


def pack_limit(total: int, pack_bytes: int = PACK_BYTES, max_packs: int = MAX_PACKS) -> int:
    """The bytes a pack may hold: ``pack_bytes``, or more when the media would need over ``max_packs``
    packs. Greedy filling makes fewer than ``2 * total / limit + 1`` packs (two consecutive ones hold
    more than the limit together), so ``2 * total / (max_packs - 1)`` keeps them at most ``max_packs``."""
    if pack_bytes < 1 or max_packs < 2:
        raise ValueError(f"pack_bytes must be at least 1 and max_packs at least 2, got {pack_bytes}, {max_packs}")
    return max(pack_bytes, math.ceil(2 * total / (max_packs - 1)))


def plan_packs(
    sizes: Sequence[tuple[str, int]], pack_bytes: int = PACK_BYTES, max_packs: int = MAX_PACKS
) -> list[list[str]]:
    """The media's names cut into packs (pure): sorted, consecutive, each at most :func:`pack_limit` bytes."""
    items = sorted(sizes)
    if len({n for n, _ in items}) != len(items):
        raise ValueError("a medium is named twice")
    limit = pack_limit(sum(s for _, s in items), pack_bytes, max_packs)
    packs: list[list[str]] = []
    size = 0
    for name, n in items:
        if not packs or size + n > limit:
            packs.append([])
            size = 0
        packs[-1].append(name)
        size += n
    return packs


def write_packs(
    media: Mapping[str, str | Path], folder: Path, pack_bytes: int = PACK_BYTES, max_packs: int = MAX_PACKS
) -> dict[str, Any]:
    """Write the media (name to file) into ``folder`` as packs (``<sha256>.pack``) and their index
    (``index.json``: ``{"format", "packs": [names], "media": {name: [pack, offset, length]}}``, sorted
    keys, no spaces). Returns the index. ``folder`` must be empty or new."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        raise ValueError(f"{folder}: the packs' folder must be empty")
    plan = plan_packs([(name, os.path.getsize(path)) for name, path in media.items()], pack_bytes, max_packs)
    index: dict[str, Any] = {"format": INDEX_FORMAT, "packs": [], "media": {}}
    for k, names in enumerate(plan):
        digest = hashlib.sha256()
        tmp = folder / f".pack-{k}"
        offset = 0
        with open(tmp, "wb") as out:
            for name in names:
                data = Path(media[name]).read_bytes()
                out.write(data)
                digest.update(data)
                index["media"][name] = [k, offset, len(data)]
                offset += len(data)
        pack = digest.hexdigest() + PACK_SUFFIX
        os.replace(tmp, folder / pack)
        index["packs"].append(pack)
    (folder / INDEX_NAME).write_text(json.dumps(index, sort_keys=True, separators=(",", ":")) + "\n", "utf-8")
    return index


def read_packed(folder: Path, name: str, index: Mapping[str, Any] | None = None) -> bytes:
    """A medium's bytes read back from the packs in ``folder`` (as the page's Range request gets them)."""
    folder = Path(folder)
    index = index if index is not None else json.loads((folder / INDEX_NAME).read_text("utf-8"))
    k, offset, length = index["media"][name]
    with open(folder / index["packs"][k], "rb") as f:
        f.seek(offset)
        return f.read(length)
