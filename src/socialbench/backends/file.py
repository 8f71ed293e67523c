"""Recorded answers (e.g. human annotators') replayed as a model: the ``file`` backend.

``options.path`` names a JSON-lines file of prediction records keyed by ``id``. A request is answered
with the JSON object a model would give, each recorded value mapped onto the option it names. What it
cannot answer (another method than ``options.method``, a request without ``choices``, an instance without
a record: ``no_record``) is an error response, never an exception. Its identity holds the file's hash and
this module's code's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from socialbench.core.backend import Backend, Request, Response
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.hashing import sha256_file
from socialbench.core.io import first_bad_line, read_jsonl_lines

_SEP = re.compile(r"[\s_\-]+")
#: The finish reason of a request whose instance the file has no answer for (the recording did not
#: cover it: a benchmark leaves such instances out of scoring or scores them invalid, as it decides).
NO_RECORD = "no_record"


def _norm(value: Any) -> str:
    """Case and separators do not distinguish options (the benchmarks' normalization)."""
    return _SEP.sub(" ", str(value).lower()).strip()


def load_answers(path: str | Path) -> dict[str, dict[str, Any]]:
    """Records by id from a JSON-lines file; a bad line, a bad id or one id twice is a DataError naming it."""
    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    out: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for jl in lines:
        iid = jl.record.get("id")
        if not isinstance(iid, str) or not iid:
            raise DataError(
                str(path),
                f"must be a non-empty string (the instance's id), got {iid!r}",
                record=f"line {jl.line}",
                field="id",
            )
        if iid in out:
            raise DataError(
                str(path),
                f"a second answer for {iid!r} (the first is on line {first[iid]})",
                record=f"line {jl.line}",
                field="id",
            )
        out[iid] = jl.record
        first[iid] = jl.line
    return out


def map_to_option(value: Any, options: list[dict[str, Any]]) -> Any:
    """The option ``value`` names: an option's value, else its text (exactly, then up to case and
    separators when that names one option only). Anything else, null included, comes back as it is."""
    if value is None:
        return None
    for key in ("value", "text"):
        for o in options:
            if value == o.get(key):
                return o["value"]
    for key in ("value", "text"):
        hits = [o["value"] for o in options if o.get(key) is not None and _norm(o[key]) == _norm(value)]
        if len(hits) == 1:
            return hits[0]
    return value


class FileBackend(Backend):
    # reads no media, answers choices only: declared in file.declaration.json
    answers_from_code = True  # no model: the file and this module's code decide its answers (both in the identity)

    def __init__(self, spec, context=None):
        super().__init__(spec, context)
        opts = spec.options or {}
        path = opts.get("path")
        if not isinstance(path, str) or not path:
            raise ConfigError(
                f"models.{spec.name}.options.path: the file backend needs the answers file"
                " (JSON lines, one answer per instance id, in the prediction format)"
            )
        unknown = sorted(set(opts) - {"path", "method"})
        if unknown:
            raise ConfigError(
                f"models.{spec.name}.options: unknown option(s) {unknown} (the file backend takes path, method)"
            )
        self.path = Path(path)
        if self.path.is_dir():
            raise DataError(path, f"is a folder, not a file (models.{spec.name}.options.path takes the answers file)")
        if not self.path.is_file():
            raise DataError(path, f"answers file of models.{spec.name} not found (options.path)")
        self.method = str(opts.get("method", "direct"))
        self._answers = load_answers(self.path)
        self._sha256 = sha256_file(self.path)

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "answers_sha256": self._sha256, "method": self.method}

    def _error(self, message: str) -> Response:
        return Response(text=None, error=f"file backend ({self.path}): {message}", finish_reason="error")

    def answer_without_call(self, request: Request) -> Response | None:
        """The "no record" answer, which the request cache does not store (it is an error), given locally."""
        response = self.complete(request)
        return response if response.finish_reason == NO_RECORD else None

    def complete(self, request: Request) -> Response:
        # request ids are "<instance id>/<method>/<stage>"; instance ids may hold "/"
        parts = request.request_id.rsplit("/", 2)
        if len(parts) != 3:
            return self._error(f"request id {request.request_id!r} is not <instance id>/<method>/<stage>")
        iid, method, stage = parts
        if method != self.method:
            return self._error(
                f"holds final answers of method {self.method!r} (options.method); it cannot answer"
                f" stage {stage!r} of method {method!r}"
            )
        choices = (request.task or {}).get("choices")
        if not isinstance(choices, list) or not choices:
            return self._error(f"stage {stage!r} asks for free text; recorded answers fill choices only")
        record = self._answers.get(iid)
        if record is None:
            # finish_reason says so, so a benchmark can tell "not covered" from a wrong answer
            return Response(
                text=None, error=f"file backend ({self.path}): no answer for instance {iid!r}", finish_reason=NO_RECORD
            )
        missing = [c["field"] for c in choices if c["field"] not in record]
        if missing:
            return self._error(f"the answer for {iid!r} has no field {missing[0]!r}")
        answer = {c["field"]: map_to_option(record[c["field"]], c.get("options") or []) for c in choices}
        return Response(text=json.dumps(answer, ensure_ascii=False), finish_reason="stop")
