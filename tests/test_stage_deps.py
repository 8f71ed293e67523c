"""Code deps by folder, checked on the demo run: what each stage's command really imports is inside
its declared code deps, and an edit reruns only the jobs that use the edited code, under Snakemake and
under DVC alike (socialbench.stages.dvc_yaml; docs/dvc-and-snakemake.md)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from socialbench.stages import dvc_yaml

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]

NOT_CODE = ("errors.py",)  # exception classes cannot change an output


def run(cmd, cwd, env, check=True):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


#: Where a job's shell command ends and its redirections or the next command begin.
SHELL_END = re.compile(r"\s(?:\d?>>?|&>|;|&&|\|\|?)\s")


def job_commands(work, env) -> dict[tuple[str, ...], str]:
    """{the arguments of a job's `socialbench` command: its rule} for every job of the pipeline, from a
    forced dry run of the finished pipeline."""
    proc = run(["snakemake", "-n", "-p", "--forceall", "--cores", "1"], work, env)
    out = proc.stdout + proc.stderr
    commands, rule = {}, None
    for line in out.splitlines():
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            rule = line.split(" ", 1)[1][:-1]
        elif rule and line.startswith("Shell command: socialbench "):
            command = SHELL_END.split(line.removeprefix("Shell command: socialbench "), 1)[0]
            commands[tuple(shlex.split(command))] = rule
    assert commands, out[-2000:]
    return commands


def expected_deps(rule, params, work=None):
    """The code deps dvc.yaml declares for the DVC stage that runs ``rule``; for a rule whose stage DVC
    does not version (the viewer: ``stage(..., dvc=False)``), the files behind its declared code deps,
    as the code stamp of its Snakemake job lists them (``stages.dvc_yaml.write_code_stamp``)."""
    import yaml

    from socialbench.stages.dvc_yaml import STAMP_DIR

    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    for body in stages.values():
        body = body.get("do", body)
        if rule in body["desc"].removeprefix("runs ").split(", "):
            return [d for d in body["deps"] if str(d).startswith("src/")]
    stamp = Path(work or REPO) / STAMP_DIR / f"{rule}.sha256"
    if stamp.is_file():
        return [line.split("  ", 1)[1] for line in stamp.read_text().splitlines()]
    raise AssertionError(f"no DVC stage runs rule {rule}, and it has no code stamp at {stamp}")


def covered(path: str, deps) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


@pytest.fixture(scope="module")
def imports_per_rule(demo_pipeline):
    """{rule: (the src/ files its jobs' commands imported, its declared code deps)}, from the import
    traces the session's demo build recorded (tests/helpers/import_trace/)."""
    from socialbench.core.config import load_params
    from tests.helpers.pipeline import import_traces

    work, env, _ = demo_pipeline
    commands = job_commands(work, env)
    params = load_params(work / "params.yaml")
    src = work / "src" / "socialbench"
    files: dict[str, set[str]] = {}
    for trace in import_traces(demo_pipeline).glob("*.json"):
        record = json.loads(trace.read_text())
        rule = commands.get(tuple(record["argv"]))
        if rule is None:
            continue  # a command run inside another (none today) or by a test, not a job of the pipeline
        imported = {Path(f) for f in record["files"]}
        files.setdefault(rule, set()).update(
            f"src/socialbench/{f.relative_to(src).as_posix()}" for f in imported if src in f.parents
        )
    assert set(files) == set(commands.values()), "a rule whose jobs left no import trace"
    return {rule: (sorted(f), expected_deps(rule, params, work)) for rule, f in files.items()}


def plugin_class(path: str) -> bool:
    # The registry reads every benchmark's plug-in class when params are validated (its params
    # section's schema, the backends it contributes, its params checks): the class, and the contracts
    # in its schema/ that it imports for its params checks (its stage hooks are not loaded).
    return re.fullmatch(r"src/socialbench/\w+/(benchmark\.py|schema/\w+\.py)", path) is not None


def test_every_stage_command_imports_only_code_inside_its_declared_deps(imports_per_rule):
    missing = {
        rule: [
            f
            for f in files
            if not covered(f, deps) and not f.endswith((*NOT_CODE, "__init__.py")) and not plugin_class(f)
        ]
        for rule, (files, deps) in imports_per_rule.items()
    }
    assert not {r: m for r, m in missing.items() if m}, missing


def test_an_inference_command_imports_no_viewer_book_tables_or_data_building_code(imports_per_rule):
    infer = {r: files for r, (files, _) in imports_per_rule.items() if "_infer_" in r}
    assert infer
    banned = re.compile(r"src/socialbench/(results/(viewer|book|tables|tracking)\.py|\w+/(results|dataset)/)")
    assert not {r: [f for f in files if banned.match(f)] for r, files in infer.items() if any(map(banned.match, files))}


# ---- what an edit reruns, under both tools ---------------------------------------------------------


def dry_run_jobs(work, env) -> dict[str, str]:
    """{rule: reason} of the jobs `snakemake -n` would run."""
    proc = run(["snakemake", "-n", "--cores", "1"], work, env)
    out = proc.stdout + proc.stderr
    jobs, rule = {}, None
    for line in out.splitlines():
        if line.startswith("rule ") and line.endswith(":"):
            rule = line[5:-1]
        elif rule and line.strip().startswith("reason:"):
            jobs.setdefault(rule, line.strip()[len("reason: ") :])
    return jobs


def dvc_changed_stages(work, env) -> set[str]:
    out = run(["dvc", "status", "--json"], work, env).stdout
    return set(json.loads(out or "{}"))


def edit(path: Path) -> None:
    text = path.read_text()
    path.write_text(text + ("\n# an edit\n" if path.suffix == ".py" else "\n"))


#: Report modules: what they make is read by no inference job.
REPORT_MODULES = (
    "src/socialbench/results/viewer.py",
    "src/socialbench/results/book.py",
    "src/socialbench/moca/results/tables.py",
    "src/socialbench/meetingtom/results/tables.py",
)


def test_editing_the_report_modules_reruns_no_inference_under_either_tool(demo_pipeline_copy):
    # All of them edited at once: what an edit reruns is the union of what each one reruns (each tool
    # compares a job's inputs one by one), so none reruns inference alone either; one dry run of each
    # tool instead of four (the test command's time).
    work, env, _ = demo_pipeline_copy
    for module in REPORT_MODULES:
        edit(work / module)
    jobs = dry_run_jobs(work, env)
    assert {"moca_tables", "meetingtom_tables", "moca_viewer", "meetingtom_viewer"} <= set(jobs), jobs
    assert not [j for j in jobs if "_infer_" in j], jobs
    changed = dvc_changed_stages(work, env)
    assert {"moca_tables", "meetingtom_tables"} <= changed, changed
    assert not [s for s in changed if "_infer_" in s]


def test_editing_a_data_building_module_makes_no_inference_stale_by_code(demo_pipeline_copy):
    work, env, _ = demo_pipeline_copy
    edit(work / "src/socialbench/moca/dataset/prepare.py")
    # the jobs whose own code input changed (not those downstream of a job that will run)
    direct = {j for j, reason in dry_run_jobs(work, env).items() if dvc_yaml.STAMP_DIR in reason}
    assert direct and not [j for j in direct if "_infer_" in j], direct
    assert not [s for s in dvc_changed_stages(work, env) if "_infer_" in s]


def test_editing_one_methods_template_reruns_only_the_models_that_run_it(demo_pipeline_copy):
    from socialbench.core.config import load_params
    from socialbench.results.layout import model_runs

    work, env, _ = demo_pipeline_copy
    params = load_params(work / "params.yaml")
    template = sorted((work / "src/socialbench/moca/templates/codar").iterdir())[0]
    edit(template)
    users = {m for m, runs in model_runs(params, "moca", params["moca"]["methods"]).items() if "codar" in runs}
    assert users
    want_rules = {dvc_yaml.rule_name(f"moca_infer_{m}") for m in users}
    assert {j for j in dry_run_jobs(work, env) if "_infer_" in j} == want_rules
    assert {s for s in dvc_changed_stages(work, env) if "_infer_" in s} == {f"moca_infer_{m}" for m in users}
