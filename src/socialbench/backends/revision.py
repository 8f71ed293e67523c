"""What an unpinned model is: shared by the ``hf`` and ``vllm`` backends (cache key, MLflow's
``model_revision``, and the revision the load or ``vllm serve`` then uses). Imports
huggingface_hub only when called, so the vllm backend does not pull in torch."""

from __future__ import annotations

import os
from pathlib import Path

from socialbench.core.hashing import folder_fingerprint


def hub_offline() -> bool:
    """Whether the hub may not be asked: HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE (or no huggingface_hub)."""
    try:
        import huggingface_hub.constants
    except ImportError:
        return True
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        return True
    return any(
        os.environ.get(v, "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def resolve_revision(model_id: str, offline: bool) -> str | None:
    """A local folder's fingerprint, or the commit of a hub id: the one its local cache holds, else
    (online) the one the hub names now. None when neither is known (or huggingface_hub is absent)."""
    folder = Path(model_id).expanduser()
    if folder.is_dir():
        return folder_fingerprint(folder)
    try:
        import huggingface_hub
    except ImportError:
        return None
    try:
        cached = huggingface_hub.try_to_load_from_cache(model_id, "config.json")
    except (ValueError, OSError):  # not a valid hub id (a path that does not exist): the load names it
        return None
    if isinstance(cached, str):
        parts = Path(cached).parts
        if "snapshots" in parts:
            return parts[parts.index("snapshots") + 1]
    if offline:
        return None
    try:
        return huggingface_hub.HfApi().model_info(model_id).sha
    except Exception:  # noqa: BLE001 - no network, unknown id, rate limit: the load reports it
        return None
