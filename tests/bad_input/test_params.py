"""Bad input: params (docs/bad-input.md, classes "params YAML", "params names", "params values",
"params keys", "secrets"): a file that is no clean YAML, keys and names params do not define, values
out of range, a secret; and Snakemake's own load giving check-params's line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    CODAR_PARAMS,
    PARAMS,
    REPO,
    Case,
    bad_params,
    check,
    frames,
    infer,
    run_case,
    run_main,
    run_with,
    write,
)

BILLION_LAUGHS = "".join(
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" if i else "a0: &a0 [lol]\n" for i in range(12)
)


BROKEN_PARAMS = {
    "syntax": "seed: [1,\n",
    "tab": "seed: 1\n\tmodels: {}\n",
    "python-tag": "seed: !!python/object/apply:os.system [echo hi]\n",
    "top-level-list": "- seed\n",
    "non-utf8": b"seed: 1\nname: caf\xe9\n",
    "empty": "",
    "duplicate": "seed: 1\nseed: 2\n",
}


# ---- issue 33, class 7: check-params knows every key -----------------------------------------------------
def params_with(old: str, new: str, extra: str = ""):
    return bad_params(PARAMS.replace(old, new) + extra)


def template_typo(monkeypatch, benchmark: str, run: str, name: str) -> None:
    """``benchmark``'s (a class path) template ``name`` of run ``run`` read with an unknown placeholder."""
    import importlib

    module, cls_name = benchmark.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), cls_name)
    real = cls.template

    def template(self, method, file):
        text = real(self, method, file)
        return text + "\n$transcirpt\n" if (method, file) == (run, name) else text

    monkeypatch.setattr(cls, "template", template)


CASES = [
    # -- params: broken YAML, named with line and column ---------------------------------------------------
    Case("params-syntax", "params YAML", bad_params("seed: [1,\n"), "bad.yaml: not valid YAML: line 2, column 1"),
    Case(
        "params-tab",
        "params YAML",
        bad_params("seed: 1\n\tmodels: {}\n"),
        "line 2, column 1: found character '\\t' that cannot start any token",
    ),
    Case(
        "params-python-tag",
        "params YAML",
        bad_params("seed: !!python/object/apply:os.system [echo hi]\n"),
        "line 1, column 7: the tag tag:yaml.org,2002:python/object/apply:os.system is not allowed",
    ),
    Case(
        "params-top-level-list",
        "params YAML",
        bad_params("- seed\n- models\n"),
        "the top level must be a mapping of settings (key: value), got a list",
    ),
    Case(
        "params-non-utf8",
        "params YAML",
        bad_params(b"seed: 1\nmodels: {caf\xe9: {backend: random}}\n"),
        "bad.yaml: not UTF-8 text (byte 0xe9 at offset 20, line 2)",
    ),
    Case(
        "params-empty",
        "params YAML",
        bad_params(""),
        "bad.yaml: holds no settings (the file is empty or only comments)",
    ),
    Case("params-only-comments", "params YAML", bad_params("# nothing here\n"), "holds no settings"),
    Case(
        "params-billion-laughs",
        "params YAML",
        bad_params(BILLION_LAUGHS),
        "line 2, column 10: the alias *a0 is not allowed",
    ),
    Case(
        "params-duplicate-seed",
        "params YAML",
        bad_params("seed: 1\nseed: 2\n"),
        "line 2, column 1: duplicate key 'seed' (first at line 1)",
    ),
    Case(
        "params-nan",
        "params YAML",
        bad_params("seed: 1\nmoca: {demo: {video_fraction: .nan}}\n"),
        "line 2, column 31: .nan is not a finite number",
    ),
    Case("params-date", "params YAML", bad_params("seed: 2024-06-11\n"), "line 1, column 7: a date or time"),
    Case(
        "params-boolean-key",
        "params YAML",
        bad_params("models: {on: {backend: random}}\n"),
        "the key on is read as a boolean, not a name; quote it",
    ),
    Case(
        "params-missing",
        "params YAML",
        run_with(["check-params", "--params", "nothere.yaml"]),
        "nothere.yaml: file not found",
    ),
    Case(
        "params-folder", "params YAML", run_with(["check-params", "--params", "data"]), "data: is a folder, not a file"
    ),
    Case(
        "params-broken-for-infer",
        "params YAML",
        bad_params("seed: 1\nseed: 2\n", lambda: infer("data/i.jsonl", "--params", "bad.yaml")),
        "bad.yaml: line 2, column 1: duplicate key",
    ),
    Case(
        "params-broken-for-demo",
        "params YAML",
        bad_params(
            "seed: [\n", lambda: ["demo", "--benchmark", "moca", "--params", "bad.yaml", "--out-dir", "data/demo"]
        ),
        "bad.yaml: not valid YAML",
    ),
    Case(
        "params-broken-for-media",
        "params YAML",
        bad_params(
            "media: {frame_max_side: 64}\nmedia: {}\n",
            lambda: frames("data/v.jsonl", "data/pv.jsonl", "--params", "bad.yaml"),
        ),
        "duplicate key 'media'",
    ),
    # -- params: valid YAML, invalid settings --------------------------------------------------------------
    Case(
        "params-secret",
        "params values",
        bad_params("models: {m: {backend: openai_compat, options: {api_key: sk-do-not-print}}}\n"),
        "models.m.options.api_key",
    ),
    Case(
        "params-bad-allowed-roots",
        "params values",
        bad_params("media: {allowed_roots: [1]}\n"),
        "media.allowed_roots.0: 1 is not of type 'string'",
    ),
    Case(
        "params-several-problems-one-line",
        "params values",
        bad_params("seed: -1\nmodels: {r: {backend: random, concurrency: 0}}\n"),
        "bad.yaml is invalid: models.r.concurrency: 0 is less than the minimum of 1; seed: -1",
    ),
    # -- params name only what exists (point 5): check-params and every command's load say the same line --
    Case(
        "params-unknown-method",
        "params names",
        check("moca: {methods: [direkt]}\n"),
        "moca.methods.0: 'direkt' names no method of moca (known: codar",
    ),
    Case(
        "params-unknown-ablation",
        "params names",
        check("meetingtom: {methods: [no_prompt__nope]}\n"),
        "meetingtom.methods.0: 'no_prompt__nope' names the ablation 'nope', which meetingtom.ablations does not",
    ),
    Case(
        "params-robustness-fewer-than-two-orders",
        "params names",
        check("moca: {robustness: {orders: 1, models: [random], methods: [direct]}}\n"),
        "moca.robustness.orders: 1 is less than the minimum of 2",
    ),
    Case(
        "params-robustness-unknown-model",
        "params names",
        check("moca: {robustness: {orders: 3, models: [gpt], methods: [direct]}}\n"),
        "moca.robustness.models.0: 'gpt' is no model under models (known: random)",
    ),
    Case(
        "params-robustness-unknown-run",
        "params names",
        check("meetingtom: {robustness: {orders: 3, models: [random], methods: [ecot]}}\n"),
        "meetingtom.robustness.methods.0: 'ecot' is no run of meetingtom.methods (no_prompt)",
    ),
    Case(
        "params-unknown-view",
        "params names",
        check("meetingtom: {method_options: {no_prompt: {view: side}}}\n"),
        "meetingtom.method_options.no_prompt: view must be one of mosaic, global, closeup, got 'side'",
    ),
    Case(
        "params-meeting-not-in-the-corpus",
        "params names",
        check("meetingtom: {demo: {meetings: [ES9000z]}}\n"),
        "meetingtom.demo.meetings: ES9000z is not a meeting of the demo release",
    ),
    Case(
        "params-unknown-mining-key",
        "params names",
        check("meetingtom: {mining: {yuo: {}}}\n"),
        "meetingtom.mining: unknown key(s) yuo (known: state, you, consensus)",
    ),
    Case(
        "params-negative-window",
        "params names",
        check("meetingtom: {mining: {state: {window_s: -5}}}\n"),
        "meetingtom.mining.state.window_s: must be a finite number >= 0, got -5",
    ),
    Case(
        "params-tracking-uri-mlflow-cannot-use",
        "params names",
        check("mlflow: {tracking_uri: 'sqlite://mlflow.db'}\n"),
        "mlflow.tracking_uri: 'sqlite://mlflow.db': a sqlite store is sqlite:///<relative path>",
    ),
    Case(
        "params-model-on-no-benchmark",
        "params names",
        bad_params("models: {random: {backend: random, benchmarks: [moka]}}\n"),
        "models.random.benchmarks.0: 'moka' is no benchmark",
    ),
    Case(
        "params-unknown-method-for-infer",
        "params names",
        bad_params(
            PARAMS.replace("moca: {frames: 2}", "moca: {frames: 2, methods: [direkt]}"),
            lambda: infer("data/i.jsonl", "--params", "bad.yaml"),
        ),
        "bad.yaml is invalid: moca.methods.0: 'direkt' names no method of moca",
    ),
    # -- settings a method or a backend does not take are refused at load (point 5), like every params key --
    Case(
        "params-unknown-backend-option",
        "params values",
        bad_params("seed: 1\nmodels: {m: {backend: hf, model_id: x, options: {devise: cpu}}}\n"),
        "models.m.options: unknown option(s) devise (backend hf takes: attn_implementation, device, dtype",
    ),
    Case(
        "params-backend-option-out-of-range",
        "params values",
        bad_params("seed: 1\nmodels: {m: {backend: vllm, model_id: x, options: {gpu_memory_utilization: 2}}}\n"),
        "models.m.options.gpu_memory_utilization: 2 is greater than the maximum of 1",
    ),
    Case(
        "params-codar-rounds-beyond-the-runner",
        "params values",
        check("moca: {method_options: {codar: {revision_rounds: 40}}}\n"),
        "moca.method_options.codar.revision_rounds: 40 could take more than the runner's 64 rounds",
    ),
    Case(
        "params-direct-takes-no-settings",
        "params values",
        check("moca: {method_options: {direct: {stages: [observer]}}}\n"),
        "moca.method_options.direct: Additional properties are not allowed ('stages' was unexpected)",
    ),
    # -- socialbench plan (issue 32): the keys params do not define, the instances it needs; a price's shape
    Case(
        "plan-unknown-model",
        "params names",
        run_with(["plan", "--instances", "moca=data/i.jsonl", "--model", "nope"]),
        "plan: models.nope: no such model in params (known: random)",
    ),
    Case(
        "plan-unknown-run",
        "params names",
        run_with(["plan", "--instances", "moca=data/i.jsonl", "--run", "codar_x"]),
        "plan: --run codar_x: no <benchmark>.methods in params names it",
    ),
    Case(
        "plan-unknown-benchmark",
        "params names",
        run_with(["plan", "--instances", "mocha=data/i.jsonl"]),
        "plan: --instances 'mocha=data/i.jsonl': 'mocha' is no benchmark of params",
    ),
    Case(
        "check-params-price-shape",
        "params values",
        bad_params(PARAMS.replace("random: {backend: random}", "random: {backend: random, price: 3.0}")),
        "models.random.price: 3.0 is not of type 'object', 'null'",
    ),
    Case(
        "params-tracking-uri-query-password",
        "secrets",
        run_with(
            ["check-params", "--params", "bad.yaml"],
            lambda root: (
                write("bad.yaml", PARAMS.replace("sqlite:///mlflow.db", "postgresql://db/m?password=s3cr3t")) and None
            ),
        ),
        "mlflow.tracking_uri: holds a password",
    ),
    Case(
        "infer-brave-key-to-another-host",
        "secrets",
        run_with(
            [*infer("data/i.jsonl"), "--method", "codar", "--params", "web.yaml"],
            lambda root: (
                write(
                    "web.yaml",
                    PARAMS.replace(
                        "moca: {frames: 2}",
                        'moca: {frames: 2, retrieval: {retriever: web, options: {base_url: "https://gw.example/s"}}}',
                    ).replace(  # a model that writes CoDAR's free text (a chance row is not run with CoDAR)
                        "random: {backend: random}", "random: {backend: codar_script}"
                    ),
                )
                and None
            ),
        ),
        "gw.example is not the Brave Search API, and the key of BRAVE_SEARCH_API_KEY goes only there",
    ),
    Case(
        "check-params-retriever-option-typo",
        "params keys",
        params_with("moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: bm25, options: {corpsu: c}}}"),
        "moca.retrieval.options: unknown option(s) corpsu (retriever bm25 takes: b, corpus, k1)",
    ),
    Case(
        "check-params-retriever-option-out-of-range",
        "params keys",
        params_with(
            "moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: bm25, options: {corpus: c, k1: -1}}}"
        ),
        "moca.retrieval.options.k1: -1 is less than the minimum of 0",
    ),
    Case(
        "check-params-unknown-retriever",
        "params keys",
        params_with("moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: google}}"),
        "moca.retrieval.retriever: unknown retriever 'google'",
    ),
    Case(
        "check-params-resources-of-no-model",
        "params keys",
        params_with("seed: 1", "seed: 1\nresources: {models: {ghost: {gpu: 1}}}"),
        "resources.models.ghost: names no model of params",
    ),
    Case(
        "check-params-gpu-below-tensor-parallel-size",
        "params keys",
        params_with(
            "seed: 1",
            "seed: 1\nresources: {models: {big: {gpu: 1}}}",
            "  big: {backend: vllm, model_id: org/m, options: {tensor_parallel_size: 4}}\n",
        ),
        "resources.models.big.gpu: 1 is fewer than the 4 GPUs its vLLM server shards over",
    ),
    Case(
        "check-params-two-models-one-server-variable",
        "params keys",
        params_with("seed: 1", "seed: 1", "  random_7b: {backend: random}\n  random-7b: {backend: random}\n"),
        "its server variable SOCIALBENCH_SERVER_URL_RANDOM_7B is also models.random_7b's",
    ),
    Case(
        "check-params-meetingtom-ablation-template-cannot-render",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2}\nmeetingtom: {methods: [no_prompt, no_prompt__no_markers], ablations:"
            " {no_markers: {table: markers, label: no markers, remove_markers: true}}}",
        ),
        "meetingtom.ablations.no_markers: template templates/no_prompt/user.txt: placeholder $transcirpt has no value",
        patch=lambda mp: template_typo(
            mp, "socialbench.meetingtom.benchmark.MeetingToMBenchmark", "no_prompt__no_markers", "user.txt"
        ),
    ),
    Case(
        "check-params-codar-ablation-template-cannot-render",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2, methods: [direct, codar__wo_step5], ablations: {wo_step5: {table: table5, label: w/o"
            " Step 5, stages: [observer, query, context, conflict, decoder]}}}",
        ),
        "moca.ablations.wo_step5: template templates/codar/decoder.user.txt: placeholder $transcirpt has no value",
        patch=lambda mp: template_typo(
            mp, "socialbench.moca.benchmark.MocaBenchmark", "codar__wo_step5", "decoder.user.txt"
        ),
    ),
    Case(  # issue 38: an ablation without templates of its own, whose stages change what a stage answers
        "check-params-codar-ablation-templates-of-other-stages",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2, methods: [direct, codar__wo_step3], ablations: {wo_step3: {table: table5, label: w/o"
            " Step 3, stages: [observer, query, context, decoder, checker]}}}",
        ),
        "moca.ablations.wo_step3: the method's templates (templates/codar/) do not fit its stages: decoder.system.txt"
        " asks for counterfactual_cost, conflict_utility",
    ),
    Case(
        "infer-codar-ablation-templates-of-other-stages",
        "params keys",
        run_with(
            [*infer("data/i.jsonl"), "--method", "codar__wo_step3"],
            lambda root: (
                write(
                    "params.yaml",
                    CODAR_PARAMS.replace(
                        "moca: {frames: 2, retrieval: {retriever: bm25, k: 2, options: {corpus: data/corpus}}}",
                        "moca: {frames: 2, retrieval: {retriever: none}, ablations: {wo_step3: {table: table5,"
                        " label: w/o Step 3, stages: [observer, query, context, decoder, checker]}}}",
                    ),
                )
                and None
            ),
        ),
        "moca.ablations.wo_step3: the method's templates (templates/codar/) do not fit its stages",
    ),
    Case(
        "check-params-modality-its-backend-cannot-carry",
        "params values",
        params_with("seed: 1", "seed: 1", "  c: {backend: anthropic, model_id: x, modalities: [image, audio]}\n"),
        "models.c.modalities: 'audio': backend anthropic cannot carry it (it carries image)",
    ),
    Case(
        "infer-model-without-a-modality-the-run-needs",
        "params values",
        run_with(
            [*infer("data/i.jsonl")[:6], "blind", *infer("data/i.jsonl")[7:]],
            # audio only: an image-text run needs an image (an empty list would be a text-only model, which runs)
            lambda root: write("params.yaml", PARAMS + "  blind: {backend: random, modalities: [audio]}\n"),
        ),
        "models.blind: moca method direct is excluded in params (takes audio (modalities in params), not",
    ),
    Case(
        "check-params-tracking-uri-a-file-store",
        "params names",
        params_with('mlflow: {tracking_uri: "sqlite:///mlflow.db"}', 'mlflow: {tracking_uri: "file:///tmp/mlruns"}'),
        "mlflow.tracking_uri: 'file:///tmp/mlruns': names MLflow's file store (a folder, or file://), which MLflow"
        " keeps in maintenance mode",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)


def test_a_secret_in_params_is_named_but_never_shown(ws, capsys, monkeypatch):
    write("bad.yaml", "models: {m: {backend: openai_compat, options: {api_key: sk-do-not-print}}}\n")
    _, err = run_main(["check-params", "--params", "bad.yaml"], capsys, monkeypatch)
    assert "sk-do-not-print" not in err


# ---- snakemake and check-params agree on a broken params.yaml (issue 12, point 6) -------------------------
@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory) -> Path:
    """The repository's tracked and new files (no data, results or caches) in a scratch folder."""
    from tests.helpers.pipeline import repo_copy

    return repo_copy(tmp_path_factory.mktemp("workflow"), REPO, skip=("data/", "results/"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BROKEN_PARAMS))
def test_snakemake_and_check_params_give_the_same_line_for_a_broken_params_file(
    name, workflow_copy, capsys, monkeypatch
):
    data = BROKEN_PARAMS[name]
    (workflow_copy / "params.yaml").write_bytes(data.encode() if isinstance(data, str) else data)
    env = {
        **os.environ,
        "PYTHONPATH": str(workflow_copy / "src"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    smk = subprocess.run(
        ["snakemake", "-n", "--cores", "1"], cwd=workflow_copy, env=env, capture_output=True, text=True
    )
    monkeypatch.chdir(workflow_copy)  # `socialbench check-params` there, in this process
    code, err = run_main(["check-params"], capsys, monkeypatch)
    assert smk.returncode != 0 and code == 2
    (line,) = err.splitlines()
    assert line.startswith("error: params.yaml: ") and line in smk.stderr.splitlines(), smk.stderr
    assert "Traceback" not in smk.stderr and "Config file is not valid" not in smk.stderr


@pytest.mark.slow
def test_snakemake_and_check_params_give_the_same_line_for_params_that_name_nothing(workflow_copy, capsys, monkeypatch):
    """Point 5: a params value that names nothing (here a method) stops Snakemake's own load with
    check-params's line, and no traceback."""
    good = (REPO / "params.yaml").read_text("utf-8")
    assert "  methods: [direct," in good
    (workflow_copy / "params.yaml").write_text(good.replace("  methods: [direct,", "  methods: [direkt, direct,", 1))
    env = {
        **os.environ,
        "PYTHONPATH": str(workflow_copy / "src"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    smk = subprocess.run(
        ["snakemake", "-n", "--cores", "1"], cwd=workflow_copy, env=env, capture_output=True, text=True
    )
    monkeypatch.chdir(workflow_copy)
    code, err = run_main(["check-params"], capsys, monkeypatch)
    (line,) = err.splitlines()
    assert smk.returncode != 0 and code == 2
    assert "moca.methods.0: 'direkt' names no method of moca" in line and line in smk.stderr.splitlines()
    assert "Traceback" not in smk.stderr
