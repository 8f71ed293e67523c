"""Plug-ins imported only when used: the one lookup behind the backend and retriever registries.

A registry maps a name to ``(module, class, extra)``; the module is imported on first use, so one
provider's optional dependency never burdens another, and a failed import names the extra to install.
"""

from __future__ import annotations

import importlib

from socialbench.core.errors import MissingDependency

#: One registry entry: the module to import, the class in it, and the package extra that installs its
#: dependencies (None: nothing beyond socialbench itself).
Entry = tuple[str, str, str | None]


def install_hint(extra: str | None) -> str:
    """How to install what a plug-in needs."""
    return f"pip install 'socialbench[{extra}]'" if extra else "reinstall socialbench"


def load_plugin(kind: str, name: str, entry: Entry) -> type:
    """Import the class of the ``kind`` plug-in ``name`` (``entry``: module, class, extra); a missing
    package is a MissingDependency that says what to install. The caller checks the class and names it."""
    module, cls_name, extra = entry
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"{kind} {name!r} needs a package that is not installed ({exc.name or exc});"
            f" install it with: {install_hint(extra)}"
        ) from exc
    return getattr(mod, cls_name)
