"""dvc.yaml from the stage declarations: computed code deps, per-rule params, the writer
(socialbench.stages.dvc_yaml)."""

import ast

import pytest
import yaml

from socialbench.stages import dvc_yaml


def test_shell_commands_are_the_socialbench_words_before_the_first_option():
    shell = "socialbench prune-outputs --benchmark {params.benchmark} > {log} && socialbench meetingtom annotate import"
    assert dvc_yaml.shell_commands(shell) == [("prune-outputs",), ("meetingtom", "annotate", "import")]


def test_a_benchmark_command_follows_only_the_command_function_it_runs():
    frames = dvc_yaml.code_deps("moca", [("moca", "frames")])
    acquire = dvc_yaml.code_deps("moca", [("moca", "acquire")])
    assert "src/socialbench/media" in frames and "src/socialbench/acquire" not in frames
    assert "src/socialbench/acquire" in acquire


def test_inference_code_deps_hold_its_methods_and_no_results_rendering():
    deps = dvc_yaml.code_deps("moca", [("infer",)], ["direct"])
    assert "src/socialbench/moca/methods/direct.py" in deps and "src/socialbench/moca/templates/direct" in deps
    assert "src/socialbench/backends" in deps  # a model's backend, loaded by name from params
    assert "src/socialbench/media" in deps  # what the backends import: how an image is decoded and sent
    assert not [d for d in deps if d.startswith(("src/socialbench/moca/results", "src/socialbench/results/tables"))]


@pytest.mark.parametrize(
    ("benchmark", "command"),
    [
        ("moca", ("prepare",)),
        ("moca", ("moca", "preprocess")),
        ("moca", ("moca", "unimodal")),
        ("meetingtom", ("meetingtom", "extract")),
        ("meetingtom", ("meetingtom", "clips")),
        ("meetingtom", ("meetingtom", "instances")),
    ],
)
def test_a_data_stage_depends_on_no_model_backend(benchmark, command):
    # image verification lives with media (media/images.py): editing a backend reruns no data preparation
    deps = dvc_yaml.code_deps(benchmark, [command])
    assert not [d for d in deps if d.startswith("src/socialbench/backends")], deps


def test_the_import_reader_takes_what_importing_runs_and_no_function_body():
    source = """
from typing import TYPE_CHECKING
import socialbench.core.io
from socialbench.core import hashing
if TYPE_CHECKING:
    from socialbench.core.backend import Request
try:
    from socialbench.media.images import open_image
except ImportError:
    pass
class C:
    from socialbench.core.errors import DataError
def f():
    from socialbench.backends.images import encode_for_api
"""
    found = dvc_yaml._statement_imports(ast.parse(source).body)
    assert found == [
        "socialbench.core.io",
        "socialbench.core",
        "socialbench.core.hashing",
        "socialbench.media.images",
        "socialbench.media.images.open_image",
        "socialbench.core.errors",
        "socialbench.core.errors.DataError",
    ]


def test_one_walker_follows_a_backend_to_what_it_imports():
    files = {p.relative_to(dvc_yaml.PKG).as_posix() for p in dvc_yaml._backend_closure()}
    assert {"backends/anthropic_backend.py", "backends/images.py", "media/images.py"} <= files
    assert not [f for f in files if f.startswith(("moca/", "meetingtom/", "stages/"))]


def test_a_stage_hooks_module_is_followed_only_where_the_stage_calls_one_of_its_hooks():
    # stages/tables.py calls the results hooks (tables), whose module imports the benchmark's results/
    assert "src/socialbench/moca/results" in dvc_yaml.code_deps("moca", [("tables",)])
    assert "src/socialbench/moca/results" not in dvc_yaml.code_deps("moca", [("score",)])


def _files(benchmark: str, command: tuple[str, ...]) -> set[str]:
    return {p.relative_to(dvc_yaml.PKG).as_posix() for p in dvc_yaml._closure(benchmark, (command,))}


def test_each_stage_takes_the_hooks_modules_of_the_hooks_it_calls():
    assert {"moca/eval/hooks.py", "moca/schema/hooks.py"} <= _files("moca", ("score",))
    assert {"moca/results/hooks.py", "moca/dataset/hooks.py"}.isdisjoint(_files("moca", ("score",)))
    assert "moca/dataset/hooks.py" in _files("moca", ("prepare",))
    assert "moca/eval/hooks.py" not in _files("moca", ("prepare",))
    assert "meetingtom/dataset/hooks.py" in _files("meetingtom", ("demo",))


@pytest.mark.parametrize(
    ("benchmark", "command"),
    [("moca", ("prepare",)), ("moca", ("moca", "frames")), ("meetingtom", ("meetingtom", "extract"))],
)
def test_a_data_stage_depends_on_no_scoring_code(benchmark, command):
    # the plug-in class imports no eval/ module, and no hook body in core calls a scoring hook: editing
    # the scorer reruns no data preparation
    assert f"src/socialbench/{benchmark}/eval" not in dvc_yaml.code_deps(benchmark, [command])


def test_the_books_code_deps_are_what_its_command_imports_and_no_benchmarks_code():
    # the book (a stage of no one benchmark: benchmark None) reads every benchmark's tables folder
    deps = dvc_yaml.code_deps(None, [("book",)])
    own = ("stages/book.py", "results/book.py", "results/tracking.py")
    assert {f"src/socialbench/{f}" for f in own} <= set(deps)
    assert "src/socialbench/core" in deps  # its command imports core: an edit there rebuilds the book
    assert not [d for d in deps if d.startswith(tuple(f"src/socialbench/{b}/" for b in dvc_yaml.benchmark_packages()))]
    assert "src/socialbench/results/tables.py" not in deps


def test_a_stage_of_no_benchmark_takes_no_runs():
    with pytest.raises(ValueError, match="one benchmark's stage"):
        dvc_yaml.code_deps(None, [("book",)], ["direct"])


def test_each_rule_of_a_stage_takes_only_its_own_params_keys_and_the_stage_all():
    decl = {"rules": ["a", "b"], "params": {"a": ["x", "y"], "b": ["y", "z"], "c": ["w"]}}
    assert dvc_yaml.params_keys(decl, "a") == ["x", "y"]
    assert dvc_yaml.params_keys(decl) == ["x", "y", "z"]


def test_a_dvc_stage_lists_only_params_keys_params_yaml_holds():
    decl = {"rules": ["r"], "params": ["seed", "m.absent", "m.${item.x}"], "outs": ["o"]}
    body = dvc_yaml.dvc_stage(decl, {"seed": 1, "m": {}}, ["src/socialbench/core"])
    assert body == {
        "desc": "runs r",
        "cmd": "snakemake --quiet rules --cores 1 r",
        "deps": ["src/socialbench/core"],
        "params": ["seed", "m.${item.x}"],
        "outs": ["o"],
    }


def test_the_written_yaml_reads_back_as_the_stages_and_keeps_the_plots():
    stages = {
        "s": {"matrix": {"m": "${a.b}"}, "desc": "runs r", "cmd": "x: y", "outs": [{"d/${item.m}": {"persist": True}}]},
        "t": {"foreach": "${p}", "do": {"cmd": "c", "params": ["true", "1.0"]}},
    }
    text = dvc_yaml.render("stages: {}\nplots:\n  - a.png\n", stages, {"s": "a comment"})
    assert yaml.safe_load(text) == {"stages": stages, "plots": ["a.png"]}
    assert "  # a comment\n  s:\n" in text


def test_a_declarations_paths_and_keys_take_dvcs_syntax_in_dvc_yaml():
    decl = {
        "rules": ["r"],
        "wildcards": {"source": "demo"},
        "matrix": {"meeting": "${m.demo.meetings}"},
        "targets": ["d/{source}/{meeting}/f.json"],
        "params": ["m.{source}.views", "seed"],
        "outs": [{"d/{source}/{meeting}": {"persist": True}}, "e/{meeting}"],
    }
    body = dvc_yaml.dvc_stage(decl, {"seed": 1}, [])
    assert body["cmd"].endswith(" d/demo/${item.meeting}/f.json")
    assert body["params"] == ["seed"]  # m.demo.views: not in params.yaml
    assert dvc_yaml.dvc_template("m.{source}.views", decl) == "m.demo.views"
    assert body["outs"] == [{"d/demo/${item.meeting}": {"persist": True}}, "e/${item.meeting}"]


def test_a_foreach_wildcard_is_dvcs_key_and_the_list_it_loops_over_is_the_foreach():
    decl = {"rules": ["r"], "foreach": {"pool": "${p.pools}"}, "params": ["p.pools.{pool}"], "outs": ["o/{pool}.jsonl"]}
    stage = dvc_yaml.dvc_stage(decl, {}, [])
    assert stage["foreach"] == "${p.pools}"
    assert stage["do"]["params"] == ["p.pools.${key}"] and stage["do"]["outs"] == ["o/${key}.jsonl"]


def test_a_wildcard_the_stage_neither_fixes_nor_loops_over_is_refused():
    with pytest.raises(ValueError, match=r"\{meeting\} is no wildcard of the stage"):
        dvc_yaml.dvc_template("d/{meeting}", {"wildcards": {"source": "demo"}})


def test_a_job_fills_a_key_from_the_stages_wildcards_then_its_own():
    decl = {"wildcards": {"source": "demo"}}
    assert dvc_yaml.job_template("m.{source}.{meeting}", decl, {"meeting": "ES1"}) == "m.demo.ES1"


@pytest.fixture
def fresh_summaries(tmp_path, monkeypatch):
    """The summaries' cache in a folder of the test's own, read anew by this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(dvc_yaml, "_summaries", None)
    monkeypatch.setattr(dvc_yaml, "_used", set())
    dvc_yaml._summary.cache_clear()
    yield dvc_yaml.summary_cache_file()
    dvc_yaml._summary.cache_clear()


def test_a_source_file_summary_comes_back_the_same_from_the_per_user_cache(fresh_summaries, monkeypatch):
    path = dvc_yaml.PKG / "stages" / "tables.py"
    made = dvc_yaml._summary(path)
    dvc_yaml.save_summaries()
    monkeypatch.setattr(dvc_yaml, "_summaries", None)
    dvc_yaml._summary.cache_clear()
    monkeypatch.setattr(dvc_yaml, "summarize", lambda source: pytest.fail("parsed again"))
    assert dvc_yaml._summary(path) == made


def test_an_unreadable_summary_cache_means_parsing_again(fresh_summaries):
    fresh_summaries.parent.mkdir(parents=True)
    fresh_summaries.write_text('{"abc": [1, 2')
    path = dvc_yaml.PKG / "stages" / "tables.py"
    assert dvc_yaml._summary(path) == dvc_yaml.summarize(path.read_text("utf-8"))
