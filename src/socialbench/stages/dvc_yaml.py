"""dvc.yaml, written from the package layout and params so that DVC and Snakemake see the same jobs.

- Each benchmark's data stages are written by hand in dvc.yaml (its rules file has the matching
  rules); only their code deps are rewritten here.
- The generic stages are generated: one ``<benchmark>_infer_<model>`` stage per model that runs on
  the benchmark (pairs params exclude make no stage), and one ``<benchmark>_score``,
  ``<benchmark>_tables`` and ``<benchmark>_track`` stage per benchmark.
- Code deps are folders, not files: a stage depends on the layer folders its code imports (core/,
  backends/, media/, acquire/, a benchmark's dataset/, eval/ or results/), on single modules elsewhere
  (cli.py, the stage's own module under stages/, results/*.py, a benchmark's top-level modules), and
  an infer stage on the modules and templates of the methods its model runs only. So an edit to the
  viewer, the book or a table renderer reruns no inference, and an edit to one method's template
  reruns only the models that run that method.

The rules file reads this at load (rules/dvc.smk): a stale dvc.yaml is rewritten there (not inside
``dvc repro``, which sets DVC_STAGE), and rules take the same code deps as inputs.
"""

from __future__ import annotations

import ast
import io
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import socialbench
from socialbench.results import layout

PKG = Path(socialbench.__file__).resolve().parent
REPO = PKG.parents[1]
#: Layer folders a stage depends on as a whole.
LAYER_FOLDERS = ("core", "backends", "media", "acquire")
#: A benchmark's folders a stage depends on as a whole.
BENCH_FOLDERS = ("schema", "dataset", "eval", "results")
#: What each generic stage kind runs, besides the root CLI and the benchmark's top-level modules:
#: its stage modules and the benchmark folders it uses (imports inside a benchmark's plug-in class
#: are hooks for every stage, so they are not followed; the folders stand for them).
KIND_ENTRIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "data": (("stages.demo", "stages.prepare", "{b}.cli"), ("dataset",)),
    "infer": (("stages.infer",), ("eval",)),
    "score": (("stages.score",), ("eval",)),
    "tables": (("stages.tables", "stages.prune"), ("eval", "results")),
    "viewer": (("stages.viewer",), ("eval", "results")),
    "track": (("stages.track",), ("eval", "results")),
}
GENERIC_KINDS = ("infer", "score", "tables", "track")


# ---- code deps (pure, over the package's source) -----------------------------------------------


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


_FROM = re.compile(r"^([ \t]*)from[ \t]+(socialbench[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^([ \t]*)import[ \t]+(socialbench[\w.]*)", re.M)


@cache
def _imports(path: Path, module_level_only: bool) -> tuple[str, ...]:
    """The socialbench modules a source file imports (and ``module.name`` for each imported name,
    which may be a submodule). A line scan, not a parse: it runs each time Snakemake reads the
    workflow, and an import line inside a docstring only adds a dep."""
    text = path.read_text("utf-8")
    found: list[str] = []
    for indent, module, names in _FROM.findall(text):
        if module_level_only and indent:
            continue
        found.append(module)
        for name in re.split(r"[\s,()]+", names.split("#", 1)[0]):
            if name and name.isidentifier():
                found.append(f"{module}.{name}")
    found += [module for indent, module in _IMPORT.findall(text) if not (module_level_only and indent)]
    return tuple(found)


@cache
def _closure(entries: tuple[str, ...]) -> frozenset[Path]:
    """Source files reachable from the entry modules by static imports (module level and inside
    functions); a benchmark's plug-in class (``<b>/benchmark.py``) is followed at module level only."""
    seen: set[Path] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        path = module_file(name)
        if path is None or path in seen:
            continue
        seen.add(path)
        parts = path.relative_to(PKG).parts
        shallow = len(parts) == 2 and parts[1] == "benchmark.py"
        # a package's __init__ runs on import of any of its modules
        todo += [".".join(name.split(".")[:i]) for i in range(2, len(name.split(".")))]
        todo += [m for m in _imports(path, shallow) if module_file(m) is not None]
    return frozenset(seen)


def _entry(path: Path, whole: tuple[str, ...] = LAYER_FOLDERS) -> str | None:
    """The dep entry that covers a source file: its layer folder (of ``whole``) or benchmark folder,
    else the file itself; None for an empty package marker."""
    parts = path.relative_to(PKG).parts
    if parts[0] in whole:
        return f"src/socialbench/{parts[0]}"
    if len(parts) >= 3 and parts[0] in benchmark_packages() and parts[1] in BENCH_FOLDERS:
        return f"src/socialbench/{parts[0]}/{parts[1]}"
    if path.name == "__init__.py" and not _has_code(path):
        return None
    return path.relative_to(REPO).as_posix()


@cache
def _has_code(path: Path) -> bool:
    tree = ast.parse(path.read_text("utf-8"))
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in tree.body)


def _top_modules(benchmark: str) -> list[str]:
    """A benchmark's contracts: its top-level modules (not cli.py, which only data stages run)."""
    pkg = PKG / benchmark
    return sorted(f"socialbench.{benchmark}.{p.stem}" for p in pkg.glob("*.py") if p.stem not in ("cli", "__init__"))


def method_of(run: str) -> str:
    """A run is ``<method>`` or ``<method>__<ablation>``: the method module it runs."""
    return run.split("__", 1)[0]


def code_deps(kind: str, benchmark: str, runs: Iterable[str] = ()) -> list[str]:
    """The code deps of a stage of a benchmark: folders and single files, sorted."""
    stage_modules, folders = KIND_ENTRIES[kind]
    entries = ["socialbench.cli"] + [f"socialbench.{m.format(b=benchmark)}" for m in stage_modules]
    entries += _top_modules(benchmark)
    for folder in folders:
        root = PKG / benchmark / folder
        entries += [
            "socialbench." + ".".join(f.relative_to(PKG).with_suffix("").parts)
            for f in sorted(root.rglob("*.py"))
            if "__pycache__" not in f.parts
        ]
    methods = sorted({method_of(r) for r in runs})
    entries += [f"socialbench.{benchmark}.methods.{m}" for m in methods]
    # the stages that render results use most of report/: the folder (an edit to the viewer or the
    # book reruns them, never inference, scoring or data building, which take results/ file by file)
    whole = LAYER_FOLDERS + (("results",) if kind in ("tables", "viewer", "track") else ())
    deps = {e for p in _closure(tuple(entries)) if (e := _entry(p, whole)) is not None}
    deps |= {f"src/socialbench/{benchmark}/{folder}" for folder in folders if (PKG / benchmark / folder).is_dir()}
    if kind == "infer":  # a model's backend is imported by name from params: the providers folder
        deps.add("src/socialbench/backends")
        # so is a retriever, where one of the runs' methods retrieves (core.retrieval): the providers folder
        if PKG / "core" / "retrieval.py" in _closure(tuple(f"socialbench.{benchmark}.methods.{m}" for m in methods)):
            deps.add("src/socialbench/retrievers")
    if (PKG / benchmark / "schema").is_dir():  # its schema, settings and vocabularies: every stage reads them
        deps.add(f"src/socialbench/{benchmark}/schema")
    for m in methods:
        if (PKG / benchmark / "templates" / m).is_dir():
            deps.add(f"src/socialbench/{benchmark}/templates/{m}")
    return sorted(deps)


def code_files(deps: Iterable[str]) -> list[str]:
    """The files behind code deps (folders expanded, bytecode left out): Snakemake rule inputs."""
    return [f for dep in deps for f in _dep_files(dep)]


@cache
def _dep_files(dep: str) -> tuple[str, ...]:
    # cached: the workflow asks for the same folders once per stage (the tree does not change meanwhile)
    path = REPO / dep
    if path.is_dir():
        files = (f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        return tuple(sorted(f.relative_to(REPO).as_posix() for f in files))
    return (dep,) if path.is_file() else ()


# ---- the generic stages (pure: params and the benchmark's declarations in) ---------------------


def infer_stage_name(benchmark: str, model: str) -> str:
    return f"{benchmark}_infer_{model}"


def rule_name(stage: str) -> str:
    """A Snakemake rule name for a DVC stage name (model names may hold '-' or '.')."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in stage)


def generic_stages(config: Mapping[str, Any], benchmark: str, decl: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The generic stages of a benchmark. ``decl`` is what its rules file declares (BENCH[b]['dvc']):
    ``data`` (the instances and dev paths inference reads), ``infer_params`` and ``tables_params``
    (params keys), ``infer_deps`` (a function of a model's runs giving more paths its inference reads,
    e.g. a retriever's corpus folder), and ``plots``/``metrics`` as needed."""
    section = config[benchmark]
    per_model = layout.model_runs(config["models"], benchmark, section["methods"])
    stages: dict[str, dict[str, Any]] = {}
    for model, runs in per_model.items():
        name = infer_stage_name(benchmark, model)
        path = (config["models"][model].get("options") or {}).get("path")
        stages[name] = {
            "cmd": f"snakemake --quiet rules --cores 1 {rule_name(name)}",
            "deps": [
                *decl["data"],
                *([path] if isinstance(path, str) else []),
                *decl.get("infer_deps", lambda runs: [])(runs),
                *code_deps("infer", benchmark, runs),
            ],
            "params": ["seed", f"models.{model}", *decl["infer_params"]],
            "outs": [layout.run_path(k, benchmark, model, r) for k in ("predictions", "traces") for r in runs],
        }
    stages[f"{benchmark}_score"] = {
        "cmd": f"snakemake --quiet rules --cores 1 {benchmark}_score",
        "deps": [*decl["data"][:1], layout.kind_dir("predictions", benchmark), *code_deps("score", benchmark)],
        "outs": [layout.kind_dir("scores", benchmark)],
    }
    stages[f"{benchmark}_tables"] = {
        "cmd": f"snakemake --quiet rules --cores 1 {benchmark}_tables",
        "deps": [
            layout.kind_dir("scores", benchmark),
            *decl["data"][:1],
            layout.kind_dir("predictions", benchmark),
            *code_deps("tables", benchmark),
        ],
        "params": list(decl["tables_params"]),
        "outs": [f"results/tables/{benchmark}"],
        # one file per run: a row each in `dvc metrics show`
        "metrics": [layout.kind_dir("metrics", benchmark)],
    }
    stages[f"{benchmark}_track"] = {
        "cmd": f"snakemake --quiet rules --cores 1 {benchmark}_track",
        "deps": [
            layout.kind_dir("scores", benchmark),
            layout.kind_dir("predictions", benchmark),
            layout.kind_dir("traces", benchmark),
            f"results/tables/{benchmark}",
            *code_deps("track", benchmark),
        ],
        "params": ["mlflow"],
        # cached like every out, so `dvc pull` brings it back and a fresh clone has nothing to track
        "outs": [f"results/mlflow/{benchmark}.json"],
    }
    return stages


def _is_generic(name: str, benchmarks: Iterable[str]) -> bool:
    for b in benchmarks:
        if name in (f"{b}_infer", f"{b}_score", f"{b}_tables", f"{b}_track") or name.startswith(f"{b}_infer_"):
            return True
    return False


def _planned(stages: Mapping[str, Any], config: Mapping[str, Any], decls: Mapping[str, Mapping[str, Any]]):
    """(data stage name -> its new deps, generated stages), from the current stages mapping."""
    benches = benchmark_packages()
    deps: dict[str, list[Any]] = {}
    for name, stage in stages.items():
        if _is_generic(name, benches):
            continue
        benchmark = next((b for b in benches if name.startswith(b + "_")), None)
        if benchmark is None:
            raise ValueError(f"dvc.yaml stage {name}: no benchmark package src/socialbench/<name>/ matches its name")
        body = stage.get("do", stage)  # a foreach stage keeps its definition under `do`
        data = [d for d in body.get("deps") or [] if not str(d).startswith("src/")]
        deps[name] = data + code_deps("data", benchmark)
    generated = {n: s for b, decl in decls.items() for n, s in generic_stages(config, b, decl).items()}
    return deps, generated


def render(text: str, config: Mapping[str, Any], decls: Mapping[str, Mapping[str, Any]]) -> str:
    """dvc.yaml's new text: the hand-written data stages (comments kept) with their code deps
    rewritten, then the generated stages of every benchmark in ``decls``. The same text when it is
    current (checked on a plain parse first: the comment-keeping writer is slow)."""
    import yaml as pyyaml

    current = pyyaml.load(text, Loader=getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader))["stages"]
    deps, generated = _planned(current, config, decls)
    plain = {n: s for n, s in current.items() if n in deps}
    if all(list(s.get("do", s).get("deps") or []) == deps[n] for n, s in plain.items()) and {
        n: s for n, s in current.items() if n not in deps
    } == json.loads(json.dumps(generated)):
        if list(current)[len(plain) :] == list(generated):
            return text

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    ryaml = YAML()
    ryaml.preserve_quotes = True
    ryaml.width = 4096
    ryaml.indent(mapping=2, sequence=4, offset=2)
    doc = ryaml.load(text)
    stages = doc["stages"]
    for name in [n for n in stages if n not in deps]:
        del stages[name]
    for name, stage in stages.items():
        stage.get("do", stage)["deps"] = CommentedSeq(deps[name])
    for name, body in generated.items():
        stages[name] = CommentedMap(body)
    buf = io.StringIO()
    ryaml.dump(doc, buf)
    return buf.getvalue()


# ---- Snakemake's view of the code deps: one stamp file per stage ----------------------------------

STAMP_DIR = ".snakemake/socialbench/code"


@cache
def _file_sha256(path: Path) -> str:
    # cached: one workflow read writes a dozen stamps over mostly the same files
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_code_stamp(path: Path, files: Iterable[str], root: Path) -> None:
    """A stamp standing for code files as one Snakemake input: it lists each file's sha256, and its
    mtime is the newest file's when first written, or now when the list changes (a file edited,
    added or removed), so Snakemake reruns a job exactly when one of its code files would have
    made it. The DAG then checks one input per job instead of dozens of source files."""
    import os

    files = sorted(files)
    text = "".join(f"{_file_sha256(root / f)}  {f}\n" for f in files)
    old = path.read_text("utf-8") if path.is_file() else None
    if old == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)
    if old is None:  # first written: as old as the newest code it stands for
        newest = max(((root / f).stat().st_mtime for f in files), default=0.0)
        os.utime(path, (newest, newest))
