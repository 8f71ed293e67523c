"""The package's layers (docs/architecture.md, "Layers"): what each folder may import, no import cycles, and
no benchmark knowledge below the benchmarks. Imports are read with ast from every module of src/, at module
level and inside functions alike (a deferred import is still a dependency)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "socialbench"
#: The generic layers; anything else at the top of the package with a benchmark.py is a benchmark.
SHARED = ("core", "backends", "retrievers", "media", "acquire", "results")
ENTRY = ("stages", "cli", "__main__")
#: What each generic layer may import besides itself.
ALLOWED = {
    "core": set(),
    "backends": {"core", "media"},
    "retrievers": {"core"},
    "media": {"core"},
    "acquire": {"core"},
    "results": {"core"},
}
#: Inside a benchmark: the sub-folders each sub-folder must not import (the top-level modules are
#: schema/settings/taxonomy/...; benchmark.py and cli.py compose everything and are exempt).
FORBIDDEN_INSIDE = {
    "dataset": {"eval", "results", "methods"},
    "eval": {"dataset", "results", "methods"},
    "methods": {"dataset", "results"},
    "results": {"dataset", "methods"},
    "top": {"dataset", "eval", "results", "methods"},
}
COMPOSERS = {"benchmark", "cli"}


def benchmarks() -> set[str]:
    return {p.parent.name for p in PACKAGE.glob("*/benchmark.py")}


@cache
def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of src/."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def resolve(name: str) -> str | None:
    """The module an imported name lives in: the longest prefix that is a module of src/."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in modules():
            return candidate
    return None


@cache
def imports(module: str) -> frozenset[str]:
    """The socialbench modules ``module`` imports, anywhere in its file."""
    path = modules()[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] if node.level else [])
            mod = ".".join(p for p in (base, node.module or "") if p)
            names = [f"{mod}.{a.name}" for a in node.names] or [mod]
        for name in names:
            target = resolve(name)
            if target and target.startswith("socialbench") and target != module:
                found.add(target)
    return frozenset(found)


def layer(module: str) -> tuple[str, str | None]:
    """(top-level folder or module under socialbench, sub-folder inside a benchmark or "top")."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__", None
    top = parts[1]
    if top in benchmarks():
        sub = parts[2] if len(parts) > 2 else "top"
        return top, sub if sub in FORBIDDEN_INSIDE or sub in COMPOSERS else "top"
    return top, None


def violation(module: str, target: str) -> str | None:
    """Why ``module`` must not import ``target`` (None when it may)."""
    (src, sub), (dst, dst_sub) = layer(module), layer(target)
    if src in ALLOWED:
        if dst != src and dst not in ALLOWED[src]:
            return f"{src}/ imports only {', '.join(sorted({src, *ALLOWED[src]}))}"
    elif src in ENTRY or src == "__init__":
        if dst in benchmarks():
            return "stages and the CLI reach a benchmark through the registry, not by import"
    elif src in benchmarks():
        if dst in benchmarks() and dst != src:
            return "a benchmark does not import another benchmark"
        if dst in ENTRY:
            return "a benchmark does not import the stages or the CLI"
        if dst == src and sub not in COMPOSERS and dst_sub in FORBIDDEN_INSIDE[sub]:
            return f"inside a benchmark, {sub}/ does not import {dst_sub}/"
    return None


def test_the_package_has_both_kinds_of_layers():
    assert set(SHARED) <= {p.name for p in PACKAGE.iterdir()}
    assert {"moca", "meetingtom"} <= benchmarks()


@pytest.fixture
def fake_src(tmp_path, monkeypatch):
    """A src/ of its own: socialbench/core/{a,b}.py, written by the test."""
    pkg = tmp_path / "socialbench" / "core"
    pkg.mkdir(parents=True)
    (tmp_path / "socialbench" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    monkeypatch.setattr(__import__(__name__, fromlist=["SRC"]), "SRC", tmp_path)
    modules.cache_clear()
    imports.cache_clear()
    yield pkg
    modules.cache_clear()
    imports.cache_clear()


def test_import_reader_sees_imports_inside_functions(fake_src):
    (fake_src / "a.py").write_text("def f():\n    from socialbench.core import b\n")
    (fake_src / "b.py").write_text("")
    assert imports("socialbench.core.a") == {"socialbench.core.b"}


def test_import_reader_resolves_relative_imports(fake_src):
    (fake_src / "a.py").write_text("from .b import f\n")
    (fake_src / "b.py").write_text("def f(): pass\n")
    assert imports("socialbench.core.a") == {"socialbench.core.b"}


def test_a_cycle_through_a_function_level_import_is_found(fake_src):
    (fake_src / "a.py").write_text("from socialbench.core.b import f\n")
    (fake_src / "b.py").write_text("def f():\n    from socialbench.core import a\n")
    assert cycles() == [["socialbench.core.a", "socialbench.core.b"]]


#: The modules that may import the package inside functions: the command modules, in their command
#: bodies (start-up time). Code deps read these function by function and every other module at module
#: level only; a benchmark's stage hooks are modules of their own, loaded by name (socialbench.stages.dvc_yaml).
LAZY = re.compile(r"socialbench/(\w+/)?cli\.py")


def function_level_imports(path: Path) -> list[int]:
    """The lines of ``path``'s imports of the package inside functions."""
    tree = ast.parse(path.read_text("utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted(
        {
            n.lineno
            for f in functions
            for n in ast.walk(f)
            if (isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("socialbench")))
            or (isinstance(n, ast.Import) and any(a.name.startswith("socialbench") for a in n.names))
        }
    )


def test_function_level_imports_are_found(tmp_path):
    (tmp_path / "m.py").write_text("import socialbench\ndef f():\n    x = 1\n    from socialbench.core import io\n")
    assert function_level_imports(tmp_path / "m.py") == [4]


def test_only_command_modules_import_the_package_inside_functions():
    found = [
        f"{rel}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not LAZY.fullmatch(rel := path.relative_to(SRC).as_posix())
        for line in function_level_imports(path)
    ]
    assert not found, f"import these at the top of the module: {found}"


@pytest.mark.parametrize("module", sorted(m for m in modules() if m.startswith("socialbench")))
def test_module_imports_only_what_its_layer_allows(module):
    bad = [f"{target} ({why})" for target in sorted(imports(module)) if (why := violation(module, target))]
    assert not bad, f"{module} imports {'; '.join(bad)}"


def test_layer_rules_reject_a_core_module_importing_report():
    assert violation("socialbench.core.runner", "socialbench.results.stats")
    assert violation("socialbench.moca.dataset.prepare", "socialbench.moca.eval.scoring")
    assert violation("socialbench.cli", "socialbench.moca.benchmark")
    assert violation("socialbench.moca.methods.direct", "socialbench.moca.eval.prompts") is None


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    graph = {m: sorted(imports(m)) for m in modules() if m.startswith("socialbench")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles() == []


#: Benchmark names, and the field names of MoCA's tuple, none of which belongs below the benchmarks.
#: ``label`` and ``target`` are ordinary words there (a mosaic label, a sampling target), so they are
#: caught only where a benchmark would use them: as a quoted key.
KNOWLEDGE = re.compile(
    r"moca|meetingtom|codar|\bami\b|\b(subjects?|mechanisms?|scenarios?|affection|intent|stance|dyad|faith|holis)\b"
    r"|[\"'](label|target)[\"']",
    re.IGNORECASE,
)


def shared_files() -> list[Path]:
    files = []
    for folder in SHARED:
        files += [p for p in sorted((PACKAGE / folder).rglob("*")) if p.suffix in (".py", ".json", ".yaml", ".txt")]
    return files


@pytest.mark.parametrize("path", shared_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_shared_layers_hold_no_benchmark_knowledge(path):
    rel = str(path.relative_to(PACKAGE))
    hits = [
        f"{rel}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if KNOWLEDGE.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_knowledge_pattern_catches_a_field_name_and_spares_plain_words():
    assert KNOWLEDGE.search("per group (e.g. scenario)")
    assert KNOWLEDGE.search('row["label"]')
    assert not KNOWLEDGE.search("the mosaic labels; each target time")
