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
    assert "Congratulations, your workflow is in a good condition" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_unknown_params_key_stops_snakemake_naming_it():
    proc = snakemake("-n", "--config", "demo={n_tset: 3}")
    assert proc.returncode != 0
    assert "demo: Additional properties are not allowed ('n_tset' was unexpected)" in proc.stderr


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


# The modules whose logic decides each DVC stage's outputs; what they import (transitively, imports
# inside functions too) must be among the stage's deps, or a change there would rerun nothing.
STAGE_ENTRY_MODULES = {  # the stage's logic and what its `socialbench` command uses around it
    "moca_demo_data": ["socialbench.moca.demo", "socialbench.config"],
    "moca_prepare": ["socialbench.moca.prepare", "socialbench.io"],
    "moca_media": ["socialbench.media.moca", "socialbench.media.cli", "socialbench.config"],
    "moca_infer": ["socialbench.moca.infer", "socialbench.moca.schema", "socialbench.io", "socialbench.config"],
    "moca_score": ["socialbench.moca.scoring", "socialbench.moca.schema", "socialbench.io"],
    "moca_tables": ["socialbench.moca.tables", "socialbench.moca.scoring", "socialbench.io", "socialbench.config"],
    "moca_track": ["socialbench.tracking", "socialbench.moca.scoring", "socialbench.io", "socialbench.config"],
}
# Exception classes and the package marker cannot change an output.
NOT_OUTPUT_DEPS = {"socialbench", "socialbench.errors", "socialbench.media.errors"}


def module_file(name):
    base = REPO / "src" / Path(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


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


@pytest.mark.parametrize("stage", sorted(STAGE_ENTRY_MODULES))
def test_each_dvc_stage_depends_on_the_code_its_outputs_come_from(stage):
    import yaml

    deps = [d for d in yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"][stage]["deps"] if str(d).startswith("src/")]
    covered = lambda f: any(f == REPO / d or (REPO / d).is_dir() and (REPO / d) in f.parents for d in deps)  # noqa: E731
    missing = sorted(str(module_file(m).relative_to(REPO)) for m in import_closure(STAGE_ENTRY_MODULES[stage])
                     if not covered(module_file(m)))  # fmt: skip
    assert not missing, f"dvc.yaml stage {stage} lacks deps on {missing}"
    assert "src/socialbench/cli.py" in deps  # the command the rule runs


def test_a_valid_override_is_refused_because_the_stages_read_params_yaml(tmp_path):
    proc = snakemake("-n", "--config", "seed=5")
    assert proc.returncode != 0
    assert "error: --config: overrides are not supported" in proc.stderr and "edit params.yaml" in proc.stderr
