"""The benchmark and method plug-in kinds: registry, methods, prompt hashes."""

import re

import pytest

from socialbench.core.benchmarks import (
    BENCHMARKS,
    HOOK_KINDS,
    DatasetHooks,
    available_benchmarks,
    get_benchmark,
    register,
    settings_sources,
)
from socialbench.core.errors import ConfigError, SocialbenchError
from tests.helpers.toybench.benchmark import ToyBenchmark


def test_moca_is_found_by_its_folder():
    assert "moca" in available_benchmarks()
    assert get_benchmark("moca").method_names() == ["direct"] or "direct" in get_benchmark("moca").method_names()


def test_an_unknown_benchmark_is_refused_listing_the_registered_ones():
    with pytest.raises(ConfigError, match=r"unknown benchmark 'nope'; available: .*moca"):
        get_benchmark("nope")


def test_an_unknown_method_is_refused_listing_the_known_ones():
    with pytest.raises(ConfigError, match=r"benchmark moca: unknown method 'cot'; known methods: .*direct"):
        get_benchmark("moca").method_class("cot")


def test_a_registered_benchmark_brings_its_methods_from_its_package():
    register(ToyBenchmark)
    assert get_benchmark("toybench").method_names() == ["chain", "direct"]


def test_a_benchmark_without_its_own_run_summary_gets_each_runs_outcome_rows_whole():
    rows = [{"id": "toy-test-000", "group": "all"}]
    assert ToyBenchmark().results.run_summary(rows, source="o.jsonl") == ("o.jsonl", rows)


def test_a_benchmark_without_per_instance_tables_has_no_outcomes():
    with pytest.raises(NotImplementedError, match="benchmark toybench: no per-instance outcomes"):
        ToyBenchmark().eval.score_with_outcomes([], [], source="p.jsonl")


def test_the_prompt_hash_of_direct_covers_its_template_files_in_order():
    from socialbench.core.hashing import sha256_bytes

    bench = get_benchmark("moca")
    texts = [bench.template("direct", n) for n in ("system.txt", "user.txt", "retry.txt")]
    assert bench.prompt_hash("direct", {}) == sha256_bytes("\0".join(texts).encode("utf-8"))


def test_a_template_edit_changes_the_prompt_hash(tmp_path, monkeypatch):
    register(ToyBenchmark)
    bench = get_benchmark("toybench")
    before = bench.prompt_hash("chain", {})
    original = bench.template
    monkeypatch.setattr(bench, "template", lambda m, n: original(m, n) + (" edited" if n == "check.txt" else ""))
    assert bench.prompt_hash("chain", {}) != before
    assert bench.prompt_hash("direct", {}) == ToyBenchmark().prompt_hash("direct", {})


def test_a_variant_run_reads_its_own_template_files_and_its_methods_for_the_rest():
    bench = ToyBenchmark()
    assert "leniently" in bench.template("chain__lenient", "check.txt")
    assert bench.template("chain__lenient", "notes.txt") == bench.template("chain", "notes.txt")
    assert bench.template("chain__strict", "check.txt") == bench.template("chain", "check.txt")


def test_a_variant_runs_prompt_hash_covers_the_files_it_reads():
    bench = ToyBenchmark()
    assert bench.prompt_hash("chain__lenient", {}) != bench.prompt_hash("chain", {})
    assert bench.prompt_hash("chain__strict", {}) == bench.prompt_hash("chain", {})


def test_a_benchmarks_params_section_is_validated_against_its_own_schema():
    from socialbench.core.config import validate_params

    with pytest.raises(ConfigError, match=r"moca.demo: Additional properties are not allowed \('n_tset'"):
        validate_params({"models": {"r": {"backend": "random"}}, "moca": {"demo": {"n_tset": 3}}})


def test_only_methods_excludes_a_models_other_runs_of_that_benchmark_with_the_reason():
    from socialbench.core.benchmarks import excluded

    entry = {"only_methods": {"meetingtom": ["no_prompt"]}}
    assert excluded(entry, "meetingtom", "no_prompt") is None
    assert excluded(entry, "meetingtom", "naive_cot") == "runs no_prompt only on meetingtom (only_methods in params)"
    assert excluded(entry, "moca", "direct") is None  # another benchmark is not restricted


def test_a_variant_runs_settings_come_from_its_method_options_then_its_ablation():
    assert settings_sources("codar") == [("method_options", "codar")]
    assert settings_sources("codar__wo_step2") == [("method_options", "codar"), ("ablations", "wo_step2")]


# ---- order runs: answer stability under option order (issue 34) -----------------------------------
def test_an_order_runs_settings_are_its_runs_plus_its_order():
    assert settings_sources("codar__wo_step2__order1") == [
        ("method_options", "codar"),
        ("ablations", "wo_step2"),
        ("robustness", "order1"),
    ]
    section = {"method_options": {"chain": {"rounds": 2}}, "ablations": {"lenient": {"rounds": 1}}}
    bench = ToyBenchmark()
    assert bench.method_settings(section, "chain__lenient__order2") == {"rounds": 1, "order": 2}
    assert "order" not in bench.method_settings(section, "chain__lenient")


def test_an_order_run_reads_the_template_files_of_the_run_it_reorders():
    bench = ToyBenchmark()
    assert bench.template("chain__lenient__order1", "check.txt") == bench.template("chain__lenient", "check.txt")
    assert bench.prompt_hash("chain__lenient__order1", {}) == bench.prompt_hash("chain__lenient", {})


def test_robustness_asks_each_named_run_of_each_named_model_again_in_orders_1_to_k_minus_1():
    from socialbench.core.benchmarks import robustness_runs

    section = {"robustness": {"orders": 3, "models": ["a"], "methods": ["direct", "codar"]}}
    assert robustness_runs(section, "a", ["direct"]) == ["direct__order1", "direct__order2"]
    assert robustness_runs(section, "b", ["direct"]) == []  # not a named model
    assert robustness_runs({"robustness": None}, "a", ["direct"]) == []


def test_an_order_run_is_excluded_when_its_run_is():
    from socialbench.core.benchmarks import excluded

    entry = {"only_methods": {"meetingtom": ["no_prompt"]}, "exclude_methods": {"codar": "no free text"}}
    assert excluded(entry, "meetingtom", "no_prompt__order1") is None
    assert excluded(entry, "meetingtom", "ecot__order1") is not None
    assert excluded(entry, "moca", "codar__order2") == "no free text"


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"methods": ["direct__order1"]}, r"methods\.0: 'direct__order1' is an order run; ask for it with robustness"),
        (
            {"methods": ["direct"], "robustness": {"orders": 2, "models": ["r"], "methods": ["chain"]}},
            r"robustness\.methods\.0: 'chain' is no run of toybench\.methods \(direct\)",
        ),
        ({"methods": ["direct"], "ablations": {"order2": {}}}, r"ablations\.order2: order<k> names the option orders"),
        ({"methods": ["direct__order0"]}, r"methods\.0: run name 'direct__order0': 'order0' is no option order"),
    ],
)
def test_params_problems_name_an_order_run_asked_for_the_wrong_way(section, says):
    problems = ToyBenchmark().params_problems(section)
    assert any(re.search(says, p) for p in problems), problems


# ---- pairs that cannot run, derived from what the model takes and what the run needs ------------------
def test_a_choices_only_backend_cannot_run_a_method_that_needs_free_text_and_says_why():
    from socialbench.core.benchmarks import FREE_TEXT, Need, excluded

    needs = [Need((FREE_TEXT,), "the chain's free-text stages")]
    assert excluded({"backend": "prior"}, "moca", "chain", needs) == (
        "answers multiple choice only, not the chain's free-text stages"
    )
    assert excluded({"backend": "scripted"}, "moca", "chain", needs) is None


def test_a_model_lacking_every_modality_a_need_names_is_excluded_with_its_declaration():
    from socialbench.core.benchmarks import Need, excluded

    needs = [Need(("video",), "native video (ingestion: native)")]
    assert excluded({"backend": "hf"}, "meetingtom", "r", needs) == (
        "takes image, frames (the default of backend hf), not native video (ingestion: native)"
    )
    declared = {"backend": "vllm", "modalities": ["image"]}
    assert excluded(declared, "meetingtom", "r", [Need(("video", "frames"), "the clip's video")]) == (
        "takes image (modalities in params), not the clip's video"
    )
    assert excluded({"backend": "vllm"}, "meetingtom", "r", needs) is None


def test_a_reason_params_give_wins_over_the_derived_one_and_covers_the_methods_variant_runs():
    from socialbench.core.benchmarks import FREE_TEXT, Need, excluded

    entry = {"backend": "file", "exclude_methods": {"codar": "human answers are final answers only"}}
    needs = [Need((FREE_TEXT,), "CoDAR's free-text stages")]
    assert excluded(entry, "moca", "codar__wo_step2", needs) == "human answers are final answers only"
    assert excluded({**entry, "exclude_methods": {"codar__wo_step5": "x"}}, "moca", "codar__wo_step2") is None


def repo_params(repo_root, **models):
    from socialbench.core.config import load_params

    p = load_params(repo_root / "params.yaml")
    return {**p, "models": models}


def test_the_demos_baselines_cannot_run_codar_with_the_reason_the_tables_printed_before(repo_root):
    from socialbench.core.benchmarks import pair_excluded

    p = repo_params(repo_root, random={"backend": "random"}, s={"backend": "codar_script"})
    for run in ("codar", "codar__wo_step2", "codar__wo_steps34", "codar__wo_step5"):
        assert pair_excluded(p, "moca", "random", run) == "answers multiple choice only, not CoDAR's free-text stages"
        assert pair_excluded(p, "moca", "s", run) is None
    assert pair_excluded(p, "moca", "random", "direct") is None


def test_a_meetingtom_run_ingesting_native_video_is_not_run_for_a_model_without_video(repo_root):
    from socialbench.core.benchmarks import pair_excluded

    p = repo_params(repo_root, llava={"backend": "hf"}, qwen={"backend": "vllm"})
    assert pair_excluded(p, "meetingtom", "llava", "no_prompt__ingest_native") == (
        "takes image, frames (the default of backend hf), not native video (ingestion: native)"
    )
    assert pair_excluded(p, "meetingtom", "llava", "no_prompt") is None  # auto: the clip as frames
    assert pair_excluded(p, "meetingtom", "qwen", "no_prompt__ingest_native") is None
    text_only = {**p, "models": {"t": {"backend": "vllm", "modalities": []}}}
    assert pair_excluded(text_only, "meetingtom", "t", "no_prompt__modality_utterances") is None
    assert pair_excluded(text_only, "meetingtom", "t", "no_prompt") == (
        "takes text only (modalities in params), not the clip's video"
    )


def test_a_model_declared_text_only_runs_where_the_need_has_a_text_form_only():
    from socialbench.core.benchmarks import Need, excluded

    text_form = [Need(("image",), "MoCA's images", text_only="the text without its images")]
    video = [Need(("video", "frames"), "the clip's video")]
    assert excluded({"backend": "hf", "modalities": []}, "moca", "direct", text_form) is None
    assert excluded({"backend": "hf", "modalities": []}, "meetingtom", "r", video) == (
        "takes text only (modalities in params), not the clip's video"
    )
    assert excluded({"backend": "hf", "modalities": ["audio"]}, "moca", "direct", text_form) is not None


def test_the_stages_before_inference_are_declared_hooks_that_refuse_by_default(tmp_path, monkeypatch):
    monkeypatch.setitem(BENCHMARKS.classes, "toybench", ToyBenchmark)
    hooks = get_benchmark("toybench").dataset  # it has a demo, and no prepare stage of its own
    assert type(hooks).demo is not DatasetHooks.demo and type(hooks).prepare is DatasetHooks.prepare
    with pytest.raises(SocialbenchError, match="benchmark 'toybench' has no prepare stage"):
        hooks.prepare(tmp_path / "raw.jsonl", "drop")


@pytest.mark.parametrize("name", ["moca", "meetingtom"])
def test_a_packaged_benchmark_has_every_kind_of_stage_hooks_under_its_folder_name(name):
    bench = get_benchmark(name)
    assert all(isinstance(getattr(bench, kind.folder), kind) for kind in HOOK_KINDS)


class _Bare(ToyBenchmark):
    """TEST DOUBLE: a benchmark whose package holds no stage hooks modules."""

    name = "bare"
    package = "tests.helpers"


def test_a_benchmark_without_a_dataset_hooks_module_gets_the_refusing_defaults(tmp_path):
    with pytest.raises(SocialbenchError, match="benchmark 'bare' has no embedded demo"):
        _Bare().dataset.demo({}, tmp_path)


def test_a_benchmark_without_an_eval_hooks_module_is_told_where_to_write_one():
    with pytest.raises(SocialbenchError, match=r"benchmark bare: no eval hooks: write tests/helpers/eval/hooks\.py"):
        _Bare().eval.score([], [], source="p.jsonl")


# ---- the params keys a run's settings read (Benchmark.settings_keys): an inference stage's params --
def _only(section: dict, keys: list[str]) -> dict:
    """The section with only ``keys`` (dotted) kept, each whole."""
    kept: dict = {}
    for key in keys:
        *parents, last = key.split(".")
        src, dst = section, kept
        for part in parents:
            if part not in src:
                break
            src, dst = src[part], dst.setdefault(part, {})
        else:
            if last in src:
                dst[last] = src[last]
    return kept


@pytest.mark.parametrize("benchmark", ["moca", "meetingtom"])
def test_a_runs_settings_come_from_the_keys_its_benchmark_says_they_read_and_no_other(benchmark, repo_root):
    # what rules/infer.smk declares for each model (its runs' keys): both tools' rerun triggers
    from socialbench.core.config import load_params
    from socialbench.results.layout import runs

    params = load_params(repo_root / "params.yaml")
    bench, section = get_benchmark(benchmark), params[benchmark]
    for run in sorted({r for _, r in runs(params, benchmark, params[benchmark]["methods"])}):
        keys = bench.settings_keys(section, run)
        assert bench.method_settings(_only(section, keys), run) == bench.method_settings(section, run), run


def test_a_variant_order_run_reads_its_methods_options_and_its_ablation_and_no_robustness_entry():
    # the order is in the run's name (its command): removing another model from robustness.models
    # must not rerun this one
    assert ToyBenchmark().settings_keys({}, "chain__lenient__order2") == ["method_options.chain", "ablations.lenient"]


class _Incomplete(ToyBenchmark):
    """TEST DOUBLE: a benchmark whose package (written by the test) has only a results hooks module, without
    ``tables``."""

    name = "incomplete"
    package = "tests_incomplete_pkg"


def test_each_kind_of_hooks_that_cannot_load_is_named_with_what_it_lacks(tmp_path, monkeypatch):
    pkg = tmp_path / "tests_incomplete_pkg"
    (pkg / "results").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "results" / "__init__.py").write_text("")
    (pkg / "results" / "hooks.py").write_text(
        "from socialbench.core.benchmarks import ResultsHooks\n\n\nclass Partial(ResultsHooks):\n    pass\n\n\n"
        "HOOKS = Partial\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _Incomplete().hooks_problems() == [
        "benchmark incomplete: no schema hooks: write tests_incomplete_pkg/schema/hooks.py with HOOKS, a subclass"
        " of SchemaHooks",
        "benchmark incomplete: no eval hooks: write tests_incomplete_pkg/eval/hooks.py with HOOKS, a subclass of"
        " EvalHooks",
        "benchmark incomplete: tests_incomplete_pkg.results.hooks.HOOKS (Partial) does not define tables",
    ]


def test_every_packaged_benchmarks_stage_hooks_load():
    assert all(not get_benchmark(name).hooks_problems() for name in ("moca", "meetingtom"))


def test_a_hooks_module_without_hooks_is_named(tmp_path, monkeypatch):
    pkg = tmp_path / "tests_hookless_pkg"
    (pkg / "eval").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "eval" / "__init__.py"):
        init.write_text("")
    (pkg / "eval" / "hooks.py").write_text("SCORE = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_Incomplete, "package", "tests_hookless_pkg")
    with pytest.raises(
        SocialbenchError, match=r"tests_hookless_pkg\.eval\.hooks\.HOOKS must be a subclass of EvalHooks"
    ):
        _Incomplete().eval.score([], [], source="p.jsonl")
