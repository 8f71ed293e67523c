"""Error types that name the file, record and field at fault."""

from __future__ import annotations


class SocialbenchError(Exception):
    """Base class for errors shown to the user without a traceback."""


class ConfigError(SocialbenchError):
    """params.yaml (or another config) is invalid."""


class DataError(SocialbenchError):
    """A data file has a bad record."""

    def __init__(self, path: str, message: str, record: str | None = None, field: str | None = None):
        self.path = str(path)
        self.record = record
        self.field = field
        where = self.path
        if record is not None:
            where += f", record {record}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class MissingDependency(SocialbenchError):
    """An optional dependency of a plug-in is not installed."""
