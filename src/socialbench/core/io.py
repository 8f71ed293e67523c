"""File I/O shared by every stage: strict readers for JSON (lines) and YAML, and atomic writes (no half or
temporary file survives a kill or a full disk; sorted keys, so equal content gives equal bytes). Strict: NaN,
overlong numbers, duplicate keys, nesting deeper than :data:`MAX_DEPTH` and lone surrogates are refused; in YAML
also aliases, non-plain tags, dates, sets and non-string keys. Each problem names file, line or record, and field."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.paths import DiskFull, is_disk_full, refuse_special, special_kind, special_problem
from socialbench.core.secrets import redact_text

#: Deepest nesting a record or config may have (real ones use 3-4 levels).
MAX_DEPTH = 64
MESSAGE_LIMIT = 600
_QUOTE_LIMIT = 60
#: Python refuses longer integers (sys.get_int_max_str_digits); we name it.
_INT_DIGITS = 4300


def brief(text: Any, limit: int = _QUOTE_LIMIT) -> str:
    """A value or name shortened for a message: one line, at most ``limit`` characters."""
    s = text if isinstance(text, str) else repr(text)
    s = " ".join(s.split()) if ("\n" in s or "\r" in s) else s
    return s if len(s) <= limit else s[: limit - 1] + "…"


def one_line(message: Any, limit: int = MESSAGE_LIMIT) -> str:
    """An error message as one line of at most ``limit`` characters, URLs redacted (core.secrets)."""
    text = "; ".join(part.strip() for part in redact_text(str(message)).splitlines() if part.strip())
    return text if len(text) <= limit else text[: limit - 40].rstrip() + f"… ({len(text) - limit + 40} more characters)"


# ---- writing --------------------------------------------------------------------------------------
def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write through a temporary file renamed into place: on failure ``path`` keeps its content (full: DiskFull)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # os.open with 0o666 (less the umask), as open() would: the file gets the usual permissions.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if is_disk_full(exc):
            raise DiskFull(path) from exc
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")


def jsonl_text(records: Iterable[Any]) -> str:
    return "".join(json.dumps(rec, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n" for rec in records)


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    write_text_atomic(path, jsonl_text(records))


# ---- reading bytes -----------------------------------------------------------------------------
def open_for_reading(path: str | Path, what: str = "file") -> BinaryIO:
    """``path`` opened for reading bytes, refusing a folder, FIFO, device or socket (again after a non-blocking
    open); missing or unreadable is a DataError naming it. Every data file reader opens it here."""
    path = Path(path)
    if path.is_dir():
        raise DataError(str(path), f"is a folder, not a {what}")
    refuse_special(path, what)
    try:
        # O_NONBLOCK: a FIFO put in place after the check opens at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise DataError(str(path), f"{what} not found" if what != "file" else "file not found") from exc
    except OSError as exc:
        raise DataError(str(path), f"cannot read it: {exc.strerror or exc}") from exc
    kind = special_kind(os.fstat(fd).st_mode)
    if kind is not None or stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise DataError(str(path), special_problem(kind, what) if kind else f"is a folder, not a {what}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_file_bytes(path: str | Path, what: str = "file") -> bytes:
    """A file's bytes; anything unreadable is a DataError naming it."""
    with open_for_reading(path, what) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise DataError(str(path), f"cannot read it: {exc.strerror or exc}") from exc


def read_file_text(path: str | Path, what: str = "file") -> str:
    """A file's UTF-8 text (:func:`read_file_bytes`); not UTF-8 is a DataError."""
    return decode_utf8(read_file_bytes(path, what), str(path))


def decode_utf8(data: bytes, source: str) -> str:
    """UTF-8 text of ``data``; else a DataError naming the first bad byte, its offset and line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        where = f"offset {exc.start}" + (f", line {line}" if line > 1 else "")
        raise DataError(source, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at {where})") from exc


# ---- strict JSON --------------------------------------------------------------------------------
class _Bad:
    """A parsed value we refuse; found with its field path after parsing."""

    def __init__(self, problem: str):
        self.problem = problem


class _DupDict(dict):
    """An object that had a key twice (the last value kept, as json does)."""

    duplicate: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    dup = None
    for k, v in pairs:
        if k in d and dup is None:
            dup = k
        d[k] = v
    if dup is None:
        return d
    out = _DupDict(d)
    out.duplicate = dup
    return out


def _constant(name: str) -> _Bad:
    return _Bad(f"{name} is not a number JSON allows (write null, or a finite number)")


def _float(text: str) -> float | _Bad:
    value = float(text)
    return value if math.isfinite(value) else _Bad(f"{brief(text, 30)} is too large to be a finite number")


def _int(text: str) -> int | _Bad:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= _INT_DIGITS else _Bad(f"a number with {digits} digits (more than {_INT_DIGITS})")


_SURROGATE = re.compile(r"\\[uU][dD][89abAB]|\\[uU][dD][c-fC-F]")
_LONE = re.compile(r"[\ud800-\udfff]")


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    name = brief(str(key), 40)
    return f"{parent}.{name}" if parent else name


def _first_problem(obj: Any, check_strings: bool) -> tuple[str, str | None] | None:
    """(problem, field path) of the first refused value in document order, or None."""
    stack: list[tuple[Any, str, int]] = [(obj, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, _Bad):
            return node.problem, path or None
        if isinstance(node, (dict, list)) and depth >= MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels", path or None
        if isinstance(node, dict):
            if isinstance(node, _DupDict):
                return ("duplicate key (a second value would silently replace the first)", _path(path, node.duplicate))
            for k, v in reversed(list(node.items())):
                if check_strings and _LONE.search(k):
                    return "a key holds a lone surrogate (\\ud800-\\udfff), which is no character", _path(path, k)
                stack.append((v, _path(path, k), depth + 1))
        elif isinstance(node, list):
            stack.extend((node[i], _path(path, i), depth + 1) for i in reversed(range(len(node))))
        elif check_strings and isinstance(node, str) and _LONE.search(node):
            return "a lone surrogate (\\ud800-\\udfff), which is no character", path or None
    return None


@dataclass(frozen=True)
class Parsed:
    """The value of one JSON text, or why it holds none (``problem``, at ``field`` when known)."""

    value: Any = None
    problem: str | None = None
    field: str | None = None
    line: int | None = None  # where in the text a JSONDecodeError happened (whole-file JSON)
    column: int | None = None
    decode_msg: str | None = None  # the JSON decoder's own message


def parse_json(text: str) -> Parsed:
    """Strict JSON (see the module docstring), the problem naming the field."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        return Parsed(problem=f"not valid JSON ({exc.msg})", line=exc.lineno, column=exc.colno, decode_msg=exc.msg)
    except RecursionError:
        return Parsed(problem=f"nested deeper than {MAX_DEPTH} levels")
    found = _first_problem(value, check_strings=bool(_SURROGATE.search(text)))
    if found is not None:
        return Parsed(problem=found[0], field=brief(found[1], 80) if found[1] else None)
    return Parsed(value=value)


def loads_strict(text: str, source: str, record: str | None = None) -> Any:
    """A JSON text's value; a refused one is a DataError naming ``source``, ``record`` and field."""
    p = parse_json(text)
    if p.problem is not None:
        where = f" (line {p.line}, column {p.column})" if p.line is not None and record is None else ""
        raise DataError(source, one_line(p.problem + where, MESSAGE_LIMIT), record=record, field=p.field)
    return p.value


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSON-lines file (numbered from 1): its object, or why it holds none."""

    line: int
    raw: str
    record: dict[str, Any] | None
    problem: str | None = None
    field: str | None = None


def read_jsonl_lines(path: str | Path) -> list[JsonLine]:
    """Every non-blank line, parsed strictly, a bad one with its ``problem``; unreadable: a DataError."""
    path = Path(path)
    out = []
    # Lines end at "\n" only: str.splitlines() would also split at U+2028, U+2029 and U+0085, which
    # JSON strings written with ensure_ascii=False carry as they are (social-media text does).
    for n, line in enumerate(read_file_text(path).split("\n"), 1):
        if not line.strip():
            continue
        p = parse_json(line)
        if p.problem is not None:
            problem = f"line {n} is {p.problem}" if p.problem.startswith("not valid JSON") else f"line {n}: {p.problem}"
            out.append(JsonLine(n, line, None, one_line(problem), p.field))
        elif not isinstance(p.value, dict):
            out.append(JsonLine(n, line, None, f"line {n} is not a JSON object"))
        else:
            out.append(JsonLine(n, line, p.value))
    return out


def first_bad_line(path: str | Path, lines: list[JsonLine]) -> None:
    """Raise DataError for the first line that holds no JSON object, if any."""
    for jl in lines:
        if jl.problem is not None:
            raise DataError(str(path), jl.problem, record=f"line {jl.line}", field=jl.field)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """JSON lines; a bad line is a DataError naming file and line."""
    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    return [jl.record for jl in lines if jl.record is not None]


def is_number(v: Any) -> bool:
    """A finite int or float, not a bool (what every metric, statistic and timestamp must be)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def parse_json_object(data: bytes, source: str, what: str) -> dict[str, Any]:
    """The JSON object in a file's bytes (strict; score and stats files); else a DataError naming ``source``."""
    p = parse_json(decode_utf8(data, source))
    if p.decode_msg is not None:
        raise DataError(source, f"not valid JSON: {p.decode_msg} (line {p.line}, column {p.column}); truncated?")
    if p.problem is not None:
        raise DataError(source, p.problem, field=p.field)
    if not isinstance(p.value, dict):
        raise DataError(source, f"must be a JSON object {what}, got {type(p.value).__name__}")
    return p.value


# ---- strict YAML --------------------------------------------------------------------------------
class _YamlProblem(Exception):
    def __init__(self, mark: Any, problem: str):
        super().__init__(problem)
        self.mark = mark
        self.problem = problem


_NOT_PLAIN = {
    "tag:yaml.org,2002:timestamp": "a date or time, which is no JSON value; quote it to keep it as text",
    "tag:yaml.org,2002:binary": "binary data (!!binary), which is no JSON value",
    "tag:yaml.org,2002:set": "a set (!!set), which is no JSON value; write a list",
    "tag:yaml.org,2002:omap": "an ordered map (!!omap), which is no JSON value; write a mapping",
    "tag:yaml.org,2002:pairs": "pairs (!!pairs), which is no JSON value; write a mapping",
}


_KEY_KINDS = ((bool, "a boolean"), (type(None), "null"), ((int, float), "a number"))


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, also refusing what the module docstring lists."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _YamlProblem(
                event.start_mark,
                f"the alias *{brief(event.anchor, 30)} is not allowed (aliases can"
                " expand a small file into a huge one; write the value out)",
            )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _YamlProblem(self.peek_event().start_mark, f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    shown = brief(key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key), 40)
                    kind = next((name for t, name in _KEY_KINDS if isinstance(key, t)), f"a {type(key).__name__}")
                    raise _YamlProblem(key_node.start_mark, f"the key {shown} is read as {kind}, not a name; quote it")
                if key in seen:
                    raise _YamlProblem(
                        key_node.start_mark,
                        f"duplicate key {brief(key, 40)!r} (first at line"
                        f" {seen[key] + 1}); a second value would silently replace the first",
                    )
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node: Any) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _YamlProblem(
                node.start_mark, f"{brief(node.value, 30)} is not a finite number (NaN and infinity are no JSON values)"
            )
        return value

    def construct_undefined(self, node: Any) -> Any:
        raise _YamlProblem(node.start_mark, f"the tag {brief(node.tag, 60)} is not allowed (plain YAML values only)")


def _refuse(why: str):
    def construct(loader: StrictLoader, node: Any) -> Any:
        raise _YamlProblem(node.start_mark, why)

    return construct


StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
StrictLoader.add_constructor(None, StrictLoader.construct_undefined)
for _tag, _why in _NOT_PLAIN.items():
    StrictLoader.add_constructor(_tag, _refuse(_why))


def _yaml_error(source: str, problem: str, error: type[Exception]) -> Exception:
    message = one_line(problem, MESSAGE_LIMIT - len(source) - 2)
    return error(source, message) if issubclass(error, DataError) else error(f"{source}: {message}")


def load_yaml(data: bytes | str, source: str, *, error: type[Exception] = ConfigError) -> Any:
    """One YAML document strictly (empty: None); a problem raises ``error`` (ConfigError for params,
    DataError for data) as ``<source>: not valid YAML: line 3, column 1: <problem>``."""
    if isinstance(data, bytes):
        try:
            text = decode_utf8(data, source)
        except DataError as exc:
            raise _yaml_error(source, str(exc).split(": ", 1)[1], error) from None
    else:
        text = data
    loader = None
    try:
        loader = StrictLoader(text)  # checks that every character is printable
        return loader.get_single_data()
    except _YamlProblem as exc:
        m = exc.mark
        raise _yaml_error(source, f"line {m.line + 1}, column {m.column + 1}: {exc.problem}", error) from None
    except yaml.MarkedYAMLError as exc:
        m = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "cannot parse"
        what = what.replace("could not determine a constructor for the tag", "the tag is not allowed:")
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        where = f"line {m.line + 1}, column {m.column + 1}: " if m is not None else ""
        raise _yaml_error(source, f"not valid YAML: {where}{what}{context}", error) from None
    except yaml.reader.ReaderError as exc:
        line, col = text.count("\n", 0, exc.position) + 1, exc.position - text.rfind("\n", 0, exc.position)
        problem = f"line {line}, column {col}: the character #x{exc.character:04x} is not allowed in YAML"
        raise _yaml_error(source, f"not valid YAML: {problem}", error) from None
    except yaml.YAMLError as exc:
        raise _yaml_error(source, f"not valid YAML: {exc}", error) from None
    except RecursionError:
        raise _yaml_error(source, f"nested deeper than {MAX_DEPTH} levels", error) from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_file(path: str | Path, *, error: type[Exception] = ConfigError, what: str = "file") -> Any:
    """:func:`load_yaml` of a file; unreadable is ``error`` naming it."""
    try:
        data = read_file_bytes(path, what)
    except DataError as exc:
        if issubclass(error, DataError):
            raise
        raise error(str(exc)) from None
    return load_yaml(data, str(path), error=error)
