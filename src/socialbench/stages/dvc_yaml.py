"""dvc.yaml, written from the stage declarations (rules/*.smk) so that DVC and Snakemake see the same jobs.

Code deps are computed: the modules a stage's ``socialbench`` commands import (whole folders for layers
and a benchmark's sub-folders), so editing the viewer reruns no inference and editing one method's
template reruns only the models running it. rules/dvc.smk rewrites a stale dvc.yaml at load."""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import socialbench
from socialbench import cli
from socialbench.core.benchmarks import HOOK_KINDS, Hooks
from socialbench.core.hashing import sha256_file
from socialbench.core.io import write_text_atomic
from socialbench.core.paths import user_cache
from socialbench.core.run_name import RunName

PKG = Path(socialbench.__file__).resolve().parent
REPO = PKG.parents[1]
#: Folders a stage depends on as a whole when its command imports any module of one.
LAYER_FOLDERS = ("core", "backends", "media", "acquire", "retrievers")
BENCH_FOLDERS = ("schema", "dataset", "eval", "results")


# ---- code deps: the modules a stage's commands import, followed statically (ast) ------------------
# A module's imports are those run at import (not in functions, not TYPE_CHECKING), plus its packages'
# __init__. Command modules import in their command bodies and are read function by function (the
# commands the stage runs). A benchmark's stage hooks (core ``Hooks``) are loaded by name: a stage takes
# the hooks module of each kind whose hooks the code it reaches calls as ``.hook(``.


@cache
def benchmark_packages() -> tuple[str, ...]:
    return tuple(sorted(p.name for p in PKG.iterdir() if (p / "benchmark.py").is_file()))


@cache
def module_file(name: str) -> Path | None:
    rel = Path(*name.split(".")[1:])
    for cand in (PKG / rel / "__init__.py", (PKG / rel).with_suffix(".py")):
        if cand.is_file():
            return cand
    return None


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The socialbench modules an import statement names (``module.name`` too: a name may be a submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "socialbench"]
    module = node.module or ""
    if node.level or module.split(".")[0] != "socialbench":
        return []
    return [module, *(f"{module}.{a.name}" for a in node.names)]


def _statement_imports(body: Iterable[ast.stmt]) -> list[str]:
    """The socialbench modules statements import when they run, not inside functions (a class body runs)."""
    found: list[str] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += _imported(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found += _statement_imports(node.orelse)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += _statement_imports(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return found


#: {function or method: (socialbench modules it imports, names it uses, command names it is registered under)}
Functions = dict[str, tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]]


@dataclass(frozen=True)
class Summary:
    """What code deps read of one source file (:func:`summarize`); it depends on the file's bytes only."""

    imports: tuple[str, ...]
    calls: frozenset[str]
    functions: Functions
    has_code: bool


def summarize(source: str) -> Summary:
    tree = ast.parse(source)
    return Summary(
        imports=tuple(_statement_imports(tree.body)),
        calls=frozenset(
            n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        ),
        functions=_functions_of(tree),
        has_code=any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in tree.body),
    )


def _functions_of(tree: ast.Module) -> Functions:
    """Each top-level function and method once (:data:`Functions`)."""
    out: Functions = {}
    top = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    methods = [
        n
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for n in cls.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    top_names, method_names = {n.name for n in top}, {n.name for n in methods}
    for node in top + methods:
        imports: list[str] = []
        # its module's functions by name, methods through self/cls, and every `.name(` call
        names: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                imports += _imported(n)
            elif isinstance(n, ast.Name) and n.id in top_names:
                names.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
                if n.attr in method_names:
                    names.add(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                names.add(n.func.attr)
        commands = []
        for dec in node.decorator_list:  # @app.command("name") / @app.command()
            if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "command":
                arg = dec.args[0] if dec.args else None
                commands.append(arg.value if isinstance(arg, ast.Constant) else node.name.replace("_", "-"))
        old = out.get(node.name, ((), frozenset(), ()))
        out[node.name] = (old[0] + tuple(imports), old[1] | frozenset(names), old[2] + tuple(commands))
    return out


# ---- the summaries' cache: parsing is most of reading the workflow (~1 CPU-s); a summary depends only
# on its file's bytes, so one per-user file keyed by sha256 serves every clone (broken: parsed again).
SUMMARY_VERSION = 1


def summary_cache_file(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/socialbench/code-summaries/`` (else ``~/.cache/...``), per reader and Python version."""
    name = f"v{SUMMARY_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}.json"
    return user_cache(env) / "code-summaries" / name


_summaries: dict[str, Summary] | None = None  # the cache file's summaries, then this process's new ones
_used: set[str] = set()  # the keys this process asked for


def _summary_to_json(summary: Summary) -> dict[str, Any]:
    return {
        "imports": list(summary.imports),
        "calls": sorted(summary.calls),
        "functions": {k: [list(i), sorted(n), list(c)] for k, (i, n, c) in summary.functions.items()},
        "has_code": summary.has_code,
    }


def _summary_from_json(data: dict[str, Any]) -> Summary:
    return Summary(
        imports=tuple(data["imports"]),
        calls=frozenset(data["calls"]),
        functions={k: (tuple(i), frozenset(n), tuple(c)) for k, (i, n, c) in data["functions"].items()},
        has_code=bool(data["has_code"]),
    )


def _cached_summaries() -> dict[str, Summary]:
    global _summaries
    if _summaries is None:
        try:
            raw = json.loads(summary_cache_file().read_text("utf-8"))
            _summaries = {key: _summary_from_json(value) for key, value in raw.items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            _summaries = {}
    return _summaries


@cache
def _summary(path: Path) -> Summary:
    key = _file_sha256(path)
    _used.add(key)
    found = _cached_summaries()
    if key not in found:
        found[key] = summarize(path.read_text("utf-8"))
    return found[key]


def save_summaries() -> None:
    """Write the summaries this process used to the per-user cache when it made new ones."""
    found = _cached_summaries()
    path = summary_cache_file()
    try:
        old = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        old = {}
    if not isinstance(old, dict) or _used <= set(old):
        return
    kept = {k: v for k, v in old.items() if k not in _used}
    kept = dict(list(kept.items())[: len(_used)])
    text = json.dumps({**kept, **{k: _summary_to_json(found[k]) for k in sorted(_used)}}, separators=(",", ":"))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except OSError:
        pass


def summarize_package() -> int:
    """Summarize every package file into the cache (set-up runs it); the number of files."""
    files = sorted(PKG.rglob("*.py"))
    for path in files:
        _summary(path)
    save_summaries()
    return len(files)


def command_entry(words: tuple[str, ...]) -> tuple[str, tuple[str, ...] | None]:
    """The module a ``socialbench <words...>`` command runs, and the command's name in a benchmark's cli.py."""
    if not words:
        raise ValueError("an empty socialbench command")
    found = cli.COMMANDS.get(words[0]) or cli.SUB_APPS.get(words[0])
    if found:
        return found[0], None
    if words[0] in benchmark_packages() and (PKG / words[0] / "cli.py").is_file():
        if len(words) < 2:
            raise ValueError(f"socialbench {words[0]}: no subcommand")
        return f"socialbench.{words[0]}.cli", (words[-1],)
    raise ValueError(f"socialbench {' '.join(words)}: no such command (socialbench.cli)")


_COMMAND = re.compile(r"(?:^|[\s;&|(])socialbench((?:[ \t]+[a-z][\w-]*)+)")


def shell_commands(shell: str) -> list[tuple[str, ...]]:
    """The ``socialbench`` commands a shell line runs, as words up to the first option or placeholder."""
    return [tuple(m.split()) for m in _COMMAND.findall(shell)]


def _selected(path: Path, wanted: set[str] | None) -> tuple[set[str], set[str]]:
    """Imports of the functions reached from ``wanted`` (None: all) in a module read by function, and names used."""
    funcs = _summary(path).functions
    chosen: set[str] = set()
    todo = list(funcs) if wanted is None else [w for w in wanted if w in funcs]
    imports: set[str] = set()
    names: set[str] = set(_summary(path).calls) if wanted is None else set()
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        chosen.add(name)
        imp, used, _ = funcs[name]
        imports |= set(imp)
        names |= used
        todo += [u for u in used if u in funcs and u not in chosen]
    return imports, names


def _walk(entries: Iterable[str], by_function: Mapping[Path, set[str] | None]) -> tuple[frozenset[Path], set[str]]:
    """The source files importing ``entries`` runs (transitively, package __init__ included; ``by_function``
    modules read function by function), and every ``.name(`` they call."""
    seen: set[Path] = set()
    todo = list(entries)
    calls: set[str] = set()
    while todo:
        name = todo.pop()
        path = module_file(name)
        if path is None or path in seen:
            continue
        seen.add(path)
        todo += [".".join(name.split(".")[:i]) for i in range(2, len(name.split(".")))]
        todo += _summary(path).imports
        if path in by_function:
            imported, used = _selected(path, by_function[path])
            todo += imported
            calls |= used
        else:
            calls |= _summary(path).calls
    return frozenset(seen), calls


@cache
def _hook_names(kind: type[Hooks]) -> frozenset[str]:
    """The hooks a kind of stage hooks declares (its public methods, core's and its subclasses')."""
    return frozenset(
        n for c in kind.__mro__ for n, v in vars(c).items() if callable(v) and not n.startswith("_") and c is not object
    )


@cache
def _closure(
    benchmark: str | None, commands: tuple[tuple[str, ...], ...], extra: tuple[str, ...] = ()
) -> frozenset[Path]:
    """Source files a stage's commands reach from the root CLI, with the benchmark's plug-in class and the
    hooks modules of the stage hooks they call; ``extra``: plug-ins params name; ``benchmark`` None: no
    plug-in (the results book)."""
    by_function: dict[Path, set[str] | None] = {PKG / "cli.py": None}
    entries = ["socialbench.cli", *([f"socialbench.{benchmark}.benchmark"] if benchmark is not None else []), *extra]
    for words in commands:
        module, wanted = command_entry(words)
        entries.append(module)
        path = module_file(module)
        assert path is not None
        if wanted is None:
            by_function[path] = None
        else:
            chosen = by_function.setdefault(path, set())
            assert chosen is not None
            chosen |= {f for f, (_, _, cmds) in _summary(path).functions.items() if wanted[-1] in cmds}
    while True:
        seen, calls = _walk(entries, by_function)
        if benchmark is None:
            return seen
        # the hooks modules whose hooks the code reached calls: asking one imports the module whole (its
        # code may call more: again)
        new = [
            module
            for kind in HOOK_KINDS
            if calls & _hook_names(kind) and (module := f"socialbench.{benchmark}.{kind.folder}.hooks") not in entries
        ]
        if not new:
            return seen
        entries += new


def _entry(path: Path) -> str | None:
    """The dep entry covering a file: its layer or benchmark sub-folder, else itself; None for an empty marker."""
    parts = path.relative_to(PKG).parts
    if parts[0] in LAYER_FOLDERS:
        return f"src/socialbench/{parts[0]}"
    if len(parts) >= 3 and parts[0] in benchmark_packages() and parts[1] in BENCH_FOLDERS:
        return f"src/socialbench/{parts[0]}/{parts[1]}"
    if path.name == "__init__.py" and not _summary(path).has_code:
        return None
    return path.relative_to(REPO).as_posix()


@cache
def _backend_closure() -> frozenset[Path]:
    """The source files the backend modules import (backends are loaded by name from params)."""
    return _walk((f"socialbench.backends.{p.stem}" for p in sorted((PKG / "backends").glob("*.py"))), {})[0]


def code_deps(
    benchmark: str | None, commands: Iterable[tuple[str, ...]], runs: Iterable[str] = (), hooks: Iterable[str] = ()
) -> list[str]:
    """A stage's code deps, sorted: what its ``commands`` import, plus, for inference, the plug-ins its
    ``runs`` load by name and the method modules ``hooks`` asks. ``benchmark`` None takes neither."""
    if benchmark is None and (runs or hooks):
        raise ValueError("code deps: runs and method hooks belong to one benchmark's stage")
    commands = tuple(sorted(set(commands)))
    methods = sorted({RunName.parse(r).method for r in runs})
    method_modules = tuple(f"socialbench.{benchmark}.methods.{m}" for m in methods)
    hook_modules = tuple(
        f"socialbench.{benchmark}.methods.{m}" for m in sorted({RunName.parse(r).method for r in hooks})
    )
    deps = {e for p in _closure(benchmark, commands, method_modules + hook_modules) if (e := _entry(p)) is not None}
    if methods:
        # a model's backend, imported by name from params: the backends folder and what it imports (media)
        deps |= {e for p in _backend_closure() if (e := _entry(p)) is not None}
        # a retriever, where one of the runs' methods retrieves (core.retrieval): imported by name too
        if PKG / "core" / "retrieval.py" in _walk(method_modules, {})[0]:
            deps.add("src/socialbench/retrievers")
        deps |= {
            f"src/socialbench/{benchmark}/templates/{m}"
            for m in methods
            if (PKG / benchmark / "templates" / m).is_dir()
        }
    return sorted(deps)


def code_files(deps: Iterable[str]) -> list[str]:
    """The files behind code deps (folders expanded, no bytecode): Snakemake rule inputs."""
    return [f for dep in deps for f in _dep_files(dep)]


@cache
def _dep_files(dep: str) -> tuple[str, ...]:
    # cached: the workflow asks for the same folders once per stage (the tree does not change meanwhile)
    path = REPO / dep
    if path.is_dir():
        files = (f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        return tuple(sorted(f.relative_to(REPO).as_posix() for f in files))
    return (dep,) if path.is_file() else ()


# ---- the stages: one declaration each (`stage` in rules/common.smk), rendered into dvc.yaml (pure) -
# Keys: benchmark (None: the results book), rules, targets (default: the rules), deps, params (a list, or
# {rule: [keys]}), outs (a path or {path: options}), metrics, runs / method_hooks (plug-ins params name),
# wildcards (fixed values), matrix / foreach (DVC templating keyed by the wildcard it stands for),
# comment, dvc (False: not versioned by DVC). Paths and keys use the rules' syntax ({meeting}).

HEADER = """\
# GENERATED from the stage declarations in rules/*.smk by socialbench.stages.dvc_yaml (reading the
# workflow rewrites it: `snakemake -n`); edit the declarations, not this file. Only `plots:` at the
# end is written by hand and kept. DVC versions the data and caches model outputs; each stage wraps
# Snakemake targets (Snakemake owns how a file is built, DVC owns which versions exist); its `desc`
# names the rules it runs. See docs/dvc-and-snakemake.md.
"""


def infer_stage_name(benchmark: str, model: str) -> str:
    return f"{benchmark}_infer_{model}"


def rule_name(stage: str) -> str:
    """A Snakemake rule name for a DVC stage name (model names may hold '-' or '.')."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in stage)


_WILDCARD = re.compile(r"(?<!\$)\{(\w+)\}")


def dvc_template(text: str, decl: Mapping[str, Any]) -> str:
    """A declaration's path or key as dvc.yaml writes it (matrix wildcards ``${item.<name>}``, foreach ``${key}``)."""
    fixed, matrix, foreach = (decl.get(k) or {} for k in ("wildcards", "matrix", "foreach"))

    def resolve(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in fixed:
            return str(fixed[name])
        if name in matrix:
            return f"${{item.{name}}}"
        if name in foreach:
            return "${key}"
        raise ValueError(
            f"stage declaration: {text}: {{{name}}} is no wildcard of the stage (wildcards, matrix or foreach)"
        )

    return _WILDCARD.sub(resolve, text)


def job_template(text: str, decl: Mapping[str, Any], wildcards: Mapping[str, str]) -> str:
    """A declaration's path or key for one job: the stage's wildcards, then the job's."""
    return text.format(**{**(decl.get("wildcards") or {}), **wildcards}) if "{" in text else text


def _dvc_paths(items: Iterable[Any], decl: Mapping[str, Any]) -> list[Any]:
    return [  # a path, or {path: options}
        {dvc_template(k, decl): v for k, v in item.items()} if isinstance(item, Mapping) else dvc_template(item, decl)
        for item in items
    ]


def params_keys(decl: Mapping[str, Any], rule: str | None = None) -> list[str]:
    """The params keys a stage (or one of its rules) reads, in order."""
    params = decl.get("params") or []
    if isinstance(params, Mapping):
        lists = [params.get(r) or [] for r in ([rule] if rule is not None else decl["rules"])]
    else:
        lists = [params]
    return list(dict.fromkeys(k for keys in lists for k in keys))


_ABSENT = object()


def _at(config: Mapping[str, Any], key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def lookup(config: Mapping[str, Any], key: str) -> Any:
    """The value of a dotted params key (None where a level is absent)."""
    value = _at(config, key)
    return None if value is _ABSENT else value


def stage_commands(decl: Mapping[str, Any], shells: Mapping[str, str]) -> tuple[tuple[str, ...], ...]:
    """The socialbench commands a stage's rules run (``shells``: rule -> shell line)."""
    found: list[tuple[str, ...]] = []
    for rule in decl["rules"]:
        if rule not in shells:
            raise ValueError(f"stage declaration: rule {rule} is not defined (rules/*.smk)")
        found += shell_commands(shells[rule])
    if not found:
        raise ValueError(f"stage declaration: rules {', '.join(decl['rules'])} run no socialbench command")
    return tuple(dict.fromkeys(found))


def stage_code_deps(decl: Mapping[str, Any], shells: Mapping[str, str]) -> list[str]:
    return code_deps(
        decl["benchmark"], stage_commands(decl, shells), decl.get("runs") or (), decl.get("method_hooks") or ()
    )


def dvc_stage(decl: Mapping[str, Any], raw_params: Mapping[str, Any], code: list[str]) -> dict[str, Any]:
    """A declaration as a dvc.yaml stage: desc, cmd, deps (data, then code), params, outs, metrics."""
    targets = _dvc_paths(decl.get("targets") or [], decl) or [rule_name(r) for r in decl["rules"]]
    keys = [dvc_template(k, decl) for k in params_keys(decl)]
    body: dict[str, Any] = {
        "desc": "runs " + ", ".join(decl["rules"]),
        "cmd": "snakemake --quiet rules --cores 1 " + " ".join(targets),
        "deps": [*_dvc_paths(decl.get("deps") or [], decl), *code],
        # the keys params.yaml itself holds (DVC reads the file, not the defaults); ${...} is DVC's
        "params": list(dict.fromkeys(k for k in keys if "${" in k or _at(raw_params, k) is not _ABSENT)),
        "outs": _dvc_paths(decl.get("outs") or [], decl),
        "metrics": _dvc_paths(decl.get("metrics") or [], decl),
    }
    body = {k: v for k, v in body.items() if v}
    if decl.get("foreach"):
        ((_, over),) = decl["foreach"].items()
        return {"foreach": over, "do": body}
    if decl.get("matrix"):
        return {"matrix": decl["matrix"], **body}
    return body


_PLAIN = re.compile(r"[A-Za-z0-9_./$][^\n]*")
_SPECIAL = re.compile(r"(?i)true|false|null|yes|no|on|off|~|[-+]?(\d[\d_]*)?\.?\d*(e[-+]?\d+)?")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    plain = (
        _PLAIN.fullmatch(text)
        and not _SPECIAL.fullmatch(text)
        and ": " not in text
        and " #" not in text
        and not text.endswith((":", " "))
    )
    return text if plain else json.dumps(text)


def _emit(key: str, value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, Mapping):
        out.append(f"{pad}{_scalar(key)}:")
        for k, v in value.items():
            _emit(k, v, indent + 2, out)
    elif isinstance(value, list):
        out.append(f"{pad}{_scalar(key)}:")
        for item in value:
            if isinstance(item, Mapping):  # an out with options: {path: {persist: true}}
                ((path, options),) = item.items()
                out.append(f"{pad}  - {_scalar(path)}:")
                for k, v in options.items():
                    _emit(k, v, indent + 6, out)
            else:
                out.append(f"{pad}  - {_scalar(item)}")
    else:
        out.append(f"{pad}{_scalar(key)}: {_scalar(value)}")


def render(old_text: str, stages: Mapping[str, Mapping[str, Any]], comments: Mapping[str, str] | None = None) -> str:
    """dvc.yaml's text: the header, every stage with its comment, then ``old_text``'s hand-written ``plots:``."""
    out = [HEADER.rstrip("\n"), "stages:"]
    for name, body in stages.items():
        for line in ((comments or {}).get(name) or "").splitlines():
            out.append(f"  # {line}".rstrip())
        _emit(name, body, 2, out)
    text = "\n".join(out) + "\n"
    match = re.search(r"^plots:.*\Z", old_text, re.M | re.S)
    return text + (match.group(0) if match else "")


# ---- Snakemake's view of the code deps: one stamp file per stage ----------------------------------

STAMP_DIR = ".snakemake/socialbench/code"


_file_sha256 = cache(sha256_file)  # cached: one workflow read writes a dozen stamps over mostly the same files


def write_code_stamp(path: Path, files: Iterable[str], root: Path) -> None:
    """One Snakemake input standing for code files: each file's sha256; its mtime is the newest file's when
    first written, now when the list changes."""
    files = sorted(files)
    text = "".join(f"{_file_sha256(root / f)}  {f}\n" for f in files)
    old = path.read_text("utf-8") if path.is_file() else None
    if old == text:
        return
    write_text_atomic(path, text)  # renamed into place: Slurm jobs read the workflow at once
    if old is None:  # first written: as old as the newest code it stands for
        newest = max(((root / f).stat().st_mtime for f in files), default=0.0)
        os.utime(path, (newest, newest))
