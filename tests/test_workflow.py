"""The Snakemake workflow itself: lint-clean, and params validated at load."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def snakemake(*args):
    return subprocess.run(["snakemake", *args], cwd=REPO, env=ENV, capture_output=True, text=True)


@pytest.mark.slow
def test_snakemake_lint_is_clean():
    proc = snakemake("--lint")
    assert "Congratulations, your workflow is in a good condition" in proc.stdout + proc.stderr, (
        proc.stdout + proc.stderr
    )


@pytest.mark.slow
def test_unknown_params_key_stops_snakemake_naming_it():
    proc = snakemake("-n", "--config", "moca={demo: {n_tset: 3}}")
    assert proc.returncode != 0
    assert "moca.demo: Additional properties are not allowed ('n_tset' was unexpected)" in proc.stderr


@pytest.mark.slow
def test_bad_params_value_stops_snakemake_naming_it():
    proc = snakemake("-n", "--config", "seed=-1")
    assert proc.returncode != 0 and "seed: -1 is less than the minimum of 0" in proc.stderr


@pytest.mark.slow
def test_a_bad_configfile_is_named_in_the_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: -1\n")
    proc = snakemake("-n", "--configfile", str(bad))
    assert proc.returncode != 0
    assert f"error: params.yaml + --configfile {bad} is invalid:" in proc.stderr, proc.stderr
    assert f"seed: -1 is less than the minimum of 0 (set in --configfile {bad})" in proc.stderr


# The import-closure checks start from the packages, not a hand-kept list of modules: a stage runs
# the `socialbench` command (socialbench.cli, whose closure is the core it uses) with its
# benchmark's package (every module of it; of the methods, only the stage's own).
# Exception classes and the package marker cannot change an output.
NOT_OUTPUT_DEPS = {
    "socialbench",
    "socialbench.core.errors",
    "socialbench.media.errors",
    # the results book reads stage outputs and writes none (rules/book.smk; not a DVC stage)
    "socialbench.report.book",
    "socialbench.stages.book",
}
SRC = REPO / "src"


def module_file(name):
    base = SRC / Path(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def module_name(path):
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def benchmark_packages():
    return sorted(p.name for p in (SRC / "socialbench").iterdir() if (p / "benchmark.py").is_file())


def package_modules(folder, skip=()):
    return sorted(
        module_name(f)
        for f in folder.rglob("*.py")
        if "__pycache__" not in f.parts and not any(s in f.relative_to(folder).parts for s in skip)
    )


def core_modules():
    benches = {SRC / "socialbench" / b for b in benchmark_packages()}
    return [m for m in package_modules(SRC / "socialbench") if not any(b in module_file(m).parents for b in benches)]


def import_closure(entries):
    import ast

    seen, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        if name in seen or not module_file(name).is_file():
            continue
        seen.add(name)
        for node in ast.walk(ast.parse(module_file(name).read_text())):
            found = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("socialbench"):
                found = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names if a.name.startswith("socialbench")]
            todo += [m for m in found if module_file(m).is_file()]
    return seen - NOT_OUTPUT_DEPS


def dvc_stages():
    import yaml

    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


def stage_body(stage):
    spec = dvc_stages()[stage]
    return spec.get("do", spec)  # a foreach stage keeps its definition under `do`


def stage_entries(stage):
    """The stage's entry modules: the core and its benchmark's package; an infer stage's methods
    and templates only for the one method it runs (here: every method, one at a time)."""
    bench = stage.split("_", 1)[0]
    pkg = SRC / "socialbench" / bench
    base = ["socialbench.cli"] + package_modules(pkg, skip=("methods", "templates")) + [f"socialbench.{bench}.methods"]
    if stage.endswith("_infer"):
        return {
            m: base + [f"socialbench.{bench}.methods.{m}"]
            for m in package_modules(pkg / "methods")
            and [f.stem for f in (pkg / "methods").glob("*.py") if not f.stem.startswith("_")]
        }
    return {None: base}


def covered(deps, path):
    return any(path == REPO / d or (REPO / d).is_dir() and (REPO / d) in path.parents for d in deps)


@pytest.mark.parametrize("stage", sorted(dvc_stages()))
def test_each_dvc_stage_depends_on_the_code_its_outputs_come_from(stage):
    raw = [str(d) for d in stage_body(stage)["deps"] if str(d).startswith("src/")]
    for method, entries in stage_entries(stage).items():
        deps = [d.replace("${item.method}", method) if method else d for d in raw]
        missing = sorted(
            str(module_file(m).relative_to(REPO)) for m in import_closure(entries) if not covered(deps, module_file(m))
        )
        assert not missing, f"dvc.yaml stage {stage} ({method or 'all'}) lacks deps on {missing}"


@pytest.mark.parametrize("stage", sorted(dvc_stages()))
def test_a_dvc_stage_depends_on_no_other_benchmark_nor_on_other_methods(stage):
    bench = stage.split("_", 1)[0]
    deps = [str(d) for d in stage_body(stage)["deps"] if str(d).startswith("src/")]
    others = [b for b in benchmark_packages() if b != bench]
    assert not [d for d in deps if any(d.startswith(f"src/socialbench/{o}") for o in others)]
    # A benchmark whose runs are variants of a method (MeetingToM's <method>__<ablation>) takes its whole
    # methods/ and templates/ folders (scripts/dvc_code_deps.py); any other takes its own method's only.
    from socialbench.core.benchmarks import get_benchmark_class

    whole = (
        {f"src/socialbench/{bench}/methods", f"src/socialbench/{bench}/templates"}
        if get_benchmark_class(bench).run_variants
        else set()
    )
    assert not [
        d
        for d in deps
        if d.rstrip("/")
        in {f"src/socialbench/{bench}", f"src/socialbench/{bench}/methods", f"src/socialbench/{bench}/templates"}
        - whole
    ]


def test_the_core_imports_no_benchmark():
    benches = {f"socialbench.{b}" for b in benchmark_packages()}
    leaks = sorted(m for m in import_closure(core_modules()) if any(m == b or m.startswith(b + ".") for b in benches))
    assert not leaks, f"core modules import benchmark code: {leaks}"


def test_a_valid_override_is_refused_because_the_stages_read_params_yaml(tmp_path):
    proc = snakemake("-n", "--config", "seed=5")
    assert proc.returncode != 0
    assert "error: --config: overrides are not supported" in proc.stderr and "edit params.yaml" in proc.stderr


def test_dvc_yaml_code_deps_are_what_the_generator_writes():
    # scripts/dvc_code_deps.py writes every stage's code deps from the package layout; a new module
    # must reach dvc.yaml (and so Snakemake's rule inputs) by rerunning it.
    proc = subprocess.run(
        [sys.executable, "scripts/dvc_code_deps.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
