"""A test double written as its own module in a temporary folder, so a test can change its code (a new
version of how it answers) and load it again, as a checkout does between two runs."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path
from types import ModuleType

from socialbench.core.backend import behaviour_sha256

MODULE = "versioned_double"

SOURCE = '''"""A test double answering {answer!r} to every request."""

from socialbench.core.backend import Backend, Response


class VersionedDouble(Backend):
    name = "versioned_double"
    answers_from_code = True

    def __init__(self, spec, context=None):
        super().__init__(spec, context)
        self.calls = []

    def complete(self, request):
        self.calls.append(request.request_id)
        return Response(text={answer!r}, finish_reason="stop")
'''


def load_double(monkeypatch, folder: Path, answer: str, module: str = MODULE) -> ModuleType:
    """The module of a double answering ``answer`` to every request, written to ``folder/<module>.py`` and
    imported, or imported again over the version loaded before (as the next process would: its bytecode
    and the memoised hash of its code are dropped). ``monkeypatch`` undoes the import path and the module
    at the end of the test."""
    monkeypatch.syspath_prepend(str(folder))
    (folder / f"{module}.py").write_text(SOURCE.format(answer=answer), encoding="utf-8")
    shutil.rmtree(folder / "__pycache__", ignore_errors=True)  # a rewrite within a second: no stale bytecode
    importlib.invalidate_caches()
    behaviour_sha256.cache_clear()
    if module in sys.modules:
        return importlib.reload(sys.modules[module])
    monkeypatch.setitem(sys.modules, module, None)  # records it absent: the undo removes it again
    del sys.modules[module]
    return importlib.import_module(module)
