"""The one registry type behind every plug-in kind (backends, retrievers, benchmarks, methods, raw sources,
commands): a :class:`Registry` maps a name to a class (or an instance of its base), registered directly or
as an :data:`Entry` ``(module, class, extra)`` imported on first use, so one provider's optional dependency
never burdens another. *Sources* (callables giving ``{name: Entry}``) are asked on a miss."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Generic, TypeVar

from socialbench.core.errors import ConfigError, MissingDependency

#: A lazy entry: module, class (or attribute), and the extra installing its dependencies (None: none).
Entry = tuple[str, str, str | None]
#: Where more names come from: asked on a miss, giving ``{name: Entry}``.
Source = Callable[[], Mapping[str, Entry]]

T = TypeVar("T")


def install_hint(extra: str | None) -> str:
    """How to install what a plug-in needs."""
    return f"pip install 'socialbench[{extra}]'" if extra else "reinstall socialbench"


def load_plugin(kind: str, name: str, entry: Entry) -> type:
    """Import the class of plug-in ``name``; a missing package is a MissingDependency saying what to install."""
    module, cls_name, extra = entry
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"{kind} {name!r} needs a package that is not installed ({exc.name or exc});"
            f" install it with: {install_hint(extra)}"
        ) from exc
    return getattr(mod, cls_name)


class Registry(Generic[T]):
    """Plug-ins of one ``kind``, each a subclass of ``base``. :meth:`get` returns the class with ``name`` set
    (an object entry as it is); an unknown name is a ConfigError listing the known ones."""

    def __init__(self, kind: str, base: type[T], entries: Mapping[str, Entry] | None = None):
        self.kind = kind
        self.base = base
        self.entries: dict[str, Entry] = dict(entries or {})
        self.classes: dict[str, type[T]] = {}
        self.sources: list[Source] = []

    def add(self, name: str, module: str, cls_name: str, extra: str | None = None) -> None:
        """Register ``name`` lazily, by import path."""
        self.entries[name] = (module, cls_name, extra)

    def add_class(self, name: str, cls: type[T]) -> type[T]:
        """Register a class directly (usable as the body of a decorator)."""
        self.classes[name] = cls
        return cls

    def add_source(self, source: Source) -> None:
        """Ask ``source`` for more names when a name is not registered otherwise."""
        if source not in self.sources:
            self.sources.append(source)

    def contributed(self) -> dict[str, Entry]:
        out: dict[str, Entry] = {}
        for source in self.sources:
            out.update(source())
        return out

    def names(self) -> list[str]:
        return sorted(set(self.entries) | set(self.classes) | set(self.contributed()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.classes or name in self.entries or name in self.contributed())

    def entry(self, name: str) -> Entry | None:
        """The lazy entry of ``name`` (None for a class registered directly, or unknown)."""
        return self.entries[name] if name in self.entries else self.contributed().get(name)

    def options_schema(self, name: str) -> dict | None:
        """Plug-in ``name``'s options schema, or None: a class's ``options_schema``, or ``<module>.options.json``
        read without importing the module (checking params loads no SDK)."""
        if name in self.classes:
            return getattr(self.classes[name], "options_schema", None)
        entry = self.entry(name)
        if entry is None:
            return None
        module, cls_name, _ = entry
        return sidecar_json(module, ".options.json").get(cls_name)

    def unknown(self, name: str) -> ConfigError:
        return ConfigError(f"unknown {self.kind} {name!r}; available: {', '.join(self.names()) or 'none'}")

    def get(self, name: str) -> type[T]:
        if name in self.classes:
            return self.classes[name]
        entry = self.entry(name)
        if entry is None:
            raise self.unknown(name)
        cls = load_plugin(self.kind, name, entry)
        if not isinstance(cls, type) and isinstance(cls, self.base):
            return cls  # type: ignore[return-value]  (a plug-in that is an object: a source, an app)
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            base = f"{self.base.__module__}.{self.base.__qualname__}"
            raise ConfigError(f"{self.kind} {name!r}: {entry[0]}:{entry[1]} is not a {base} subclass")
        cls.name = name  # type: ignore[attr-defined]
        return cls


def sidecar(module: str, suffix: str) -> Path | None:
    """``<module file><suffix>`` beside a module, found without importing it; None if absent."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).with_suffix(suffix)
    return path if path.is_file() else None


@functools.cache  # the files ship with the package: read once per process
def sidecar_json(module: str, suffix: str) -> dict:
    """The JSON object of a module's side file, empty when there is none."""
    path = sidecar(module, suffix)
    return json.loads(path.read_text("utf-8")) if path is not None else {}
