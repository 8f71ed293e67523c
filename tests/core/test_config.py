import pytest
import yaml

import socialbench.core.config as config_module
from socialbench.core.config import VALIDATED_ENV, load_params, validate_params, validated_record
from socialbench.core.errors import ConfigError


def test_repository_params_are_valid(repo_root):
    p = load_params(repo_root / "params.yaml")
    assert "random" in p["models"] and "prior" in p["models"]


def test_defaults_are_filled():
    p = validate_params({"models": {"r": {"backend": "random"}}, "moca": {}})
    assert p["moca"]["demo"]["n_test"] == 72 and p["models"]["r"]["category"] == "baseline"
    assert p["mlflow"]["tracking_uri"] == "sqlite:///mlflow.db"


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match=r"moca.demo: .*'n_tset'"):
        validate_params({"moca": {"demo": {"n_tset": 3}}})


def test_a_top_level_key_that_is_neither_core_nor_a_benchmark_is_refused():
    with pytest.raises(ConfigError, match=r"<top level>: .*'demo' was unexpected"):
        validate_params({"demo": {"n_test": 3}})


def test_bad_value_is_named():
    with pytest.raises(ConfigError, match=r"models\.r\.concurrency"):
        validate_params({"models": {"r": {"backend": "random", "concurrency": 0}}})


def test_unknown_backend_is_named():
    with pytest.raises(ConfigError, match=r"models\.x\.backend: unknown backend 'nope'"):
        validate_params({"models": {"x": {"backend": "nope"}}})


def test_yaml_syntax_error_names_file(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("seed: [1,\n")
    with pytest.raises(ConfigError, match="params.yaml: not valid YAML"):
        load_params(bad)


def test_every_params_key_is_described_in_the_schema():
    from socialbench.core.config import load_schema

    def walk(schema, path):
        for name, sub in schema.get("properties", {}).items():
            assert sub.get("description"), f"{path}{name} has no description"
            walk(sub, f"{path}{name}.")

    schema = load_schema()
    walk(schema, "")
    walk(schema["$defs"]["model"], "models.*.")
    assert yaml  # params.yaml comments are checked by eye; the schema carries the same text


@pytest.mark.parametrize(
    "options, field",
    [
        ({"api_key": "sk-123-do-not-print"}, "models.m.options.api_key"),
        ({"key": "sk-123-do-not-print"}, "models.m.options.key"),
        ({"hf_token": "sk-123-do-not-print"}, "models.m.options.hf_token"),
        ({"client_secret": "sk-123-do-not-print"}, "models.m.options.client_secret"),
        ({"password": "sk-123-do-not-print"}, "models.m.options.password"),
        ({"apiKey": "sk-123-do-not-print"}, "models.m.options.apiKey"),
        (
            {"extra_body": {"headers": {"Authorization": "Bearer sk-123-do-not-print"}}},
            "models.m.options.extra_body.headers.Authorization",
        ),
        ({"api_key_env": "sk-123-do-not-print"}, "models.m.options.api_key_env"),
        ({"hf_token_env": "sk-123-do-not-print"}, "models.m.options.hf_token_env"),
        ({"token": "sk-123-do-not-print"}, "models.m.options.token"),
        ({"access_token": "sk-123-do-not-print"}, "models.m.options.access_token"),
        ({"auth_token": "sk-123-do-not-print"}, "models.m.options.auth_token"),
        ({"secret": "sk-123-do-not-print"}, "models.m.options.secret"),
        ({"passwd": "sk-123-do-not-print"}, "models.m.options.passwd"),
        ({"private_key": "sk-123-do-not-print"}, "models.m.options.private_key"),
        ({"HFToken": "sk-123-do-not-print"}, "models.m.options.HFToken"),
        ({"use_auth_token": "sk-123-do-not-print"}, "models.m.options.use_auth_token"),
        (
            {"extra_body": {"headers": {"x-api-key": "sk-123-do-not-print"}}},
            "models.m.options.extra_body.headers.x-api-key",
        ),
        (
            {"extra_body": {"headers": {"Cookie": "session=sk-123-do-not-print"}}},
            "models.m.options.extra_body.headers.Cookie",
        ),
        ({"extra_body": {"bearer": "sk-123-do-not-print"}}, "models.m.options.extra_body.bearer"),
        ({"extra_env": {"HF_TOKEN": "sk-123-do-not-print"}}, "models.m.options.extra_env.HF_TOKEN"),
        ({"credentials": {"user": "u", "pass": "sk-123-do-not-print"}}, "models.m.options.credentials"),
    ],
)
def test_an_option_that_looks_like_a_secret_is_refused_naming_the_field_never_the_value(options, field):
    with pytest.raises(ConfigError) as exc:
        validate_params({"models": {"m": {"backend": "openai_compat", "options": options}}})
    message = str(exc.value)
    assert f"{field}:" in message and "environment variable" in message
    assert "do-not-print" not in message and "sk-123" not in repr(exc.value.args)


def test_options_that_only_resemble_secrets_are_accepted():
    options = {
        "api_key_env": "MY_API_KEY",
        "max_tokens_param": "max_completion_tokens",
        "json_mode": "none",
        "base_url": "http://127.0.0.1:8000/v1",
    }
    p = validate_params({"models": {"m": {"backend": "openai_compat", "options": options}}})
    assert p["models"]["m"]["options"] == options


@pytest.mark.parametrize(
    "options",
    [
        {
            "extra_body": {
                "stop_token_ids": [151645],
                "allowed_token_ids": [1, 2],
                "return_tokens_as_token_ids": True,
                "skip_special_tokens": False,
            }
        },
        {"extra_body": {"prompt_cache_key": "socialbench-moca"}},
        {"extra_body": {"use_auth_token": True}},
        {"api_key_env": None},
        {"max_tokens_param": "max_tokens", "extra_body": {"keyframe_interval": 2, "extra_env": {"HF_HOME": "/tmp/hf"}}},
        {"extra_body": {"chat_template_kwargs": {"eos_token": "<|im_end|>"}}},
    ],
)
def test_request_parameters_that_mention_tokens_or_keys_are_not_secrets(options):
    p = validate_params({"models": {"m": {"backend": "openai_compat", "options": options}}})
    assert p["models"]["m"]["options"] == options


def test_check_params_refuses_a_secret_without_printing_it(tmp_path):
    from typer.testing import CliRunner

    from socialbench.cli import app

    f = tmp_path / "params.yaml"
    f.write_text(
        yaml.safe_dump({"models": {"loc": {"backend": "openai_compat", "options": {"api_key": "sk-123-do-not-print"}}}})
    )
    result = CliRunner().invoke(app, ["check-params", "--params", str(f)])
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)
    assert "models.loc.options.api_key" in str(result.exception)
    assert "do-not-print" not in result.output + str(result.exception)


def test_each_problem_names_the_config_file_that_set_it():
    origins = [
        ("params.yaml", {"seed": 1, "moca": {"demo": {"n_test": 4}}}),
        ("--configfile bad.yaml", {"seed": -1}),
        ("--config", {"moca": {"demo": {"n_tset": 3}}}),
    ]
    merged = {"seed": -1, "moca": {"demo": {"n_test": 4, "n_tset": 3}}}
    with pytest.raises(ConfigError) as exc:
        validate_params(merged, source="params.yaml + --configfile bad.yaml + --config", origins=origins)
    message = str(exc.value)
    assert message.startswith("params.yaml + --configfile bad.yaml + --config is invalid:")
    assert "seed: -1 is less than the minimum of 0 (set in --configfile bad.yaml)" in message
    (line,) = [ln for ln in message.splitlines() if "'n_tset' was unexpected" in ln]
    assert line.endswith("(set in --config)")


@pytest.mark.parametrize("name", [123, True, None])
def test_a_model_name_yaml_reads_as_a_number_boolean_or_null_is_refused(name):
    with pytest.raises(ConfigError, match="not a string; quote it"):
        validate_params({"models": {name: {"backend": "random"}}})


def test_a_dot_in_a_model_name_is_refused_because_dvc_reads_it_as_nesting():
    with pytest.raises(ConfigError, match=r"'qwen2\.5' may hold only letters, digits"):
        validate_params({"models": {"qwen2.5": {"backend": "random"}}})


# ---- params name only what exists (issue 20, point 5) ---------------------------------------------
def _with(**sections) -> dict:
    return {"models": {"r": {"backend": "random"}}, **sections}


@pytest.mark.parametrize(
    ("sections", "says"),
    [
        ({"moca": {"methods": ["direkt"]}}, r"moca\.methods\.0: 'direkt' names no method of moca \(known: .*direct"),
        ({"meetingtom": {"methods": ["no_prompt__nope"]}}, r"names the ablation 'nope', which meetingtom\.ablations"),
        ({"moca": {"method_options": {"cdar": {}}}}, r"moca\.method_options\.cdar: names no method of moca"),
        ({"meetingtom": {"method_options": {"no_prompt": {"view": "side"}}}}, r"no_prompt: view must be one of"),
        ({"meetingtom": {"method_options": {"ecot": {"modalty": "video"}}}}, r"ecot: unknown setting\(s\) modalty"),
        ({"meetingtom": {"demo": {"meetings": ["ES9000z"]}}}, r"demo\.meetings: ES9000z is not a meeting of the demo"),
        ({"meetingtom": {"dev_meetings": ["IS1009d"]}}, r"dev_meetings: IS1009d is a meeting of no source"),
        (
            {"meetingtom": {"demo": {"seconds": 275, "clips_per_task": 10}}},
            r"meetingtom\.demo\.seconds: 275 does not fit demo\.clips_per_task 10 \(.*seconds must be 550\)",
        ),
        ({"meetingtom": {"mining": {"yuo": {}}}}, r"meetingtom\.mining: unknown key\(s\) yuo"),
        (
            {"meetingtom": {"mining": {"state": {"window_s": -5}}}},
            r"mining\.state\.window_s: must be a finite number >= 0",
        ),
        ({"meetingtom": {"mining": {"you": {"window": {"min_s": 90}}}}}, r"mining\.you\.window: window lengths need"),
        (
            {"moca": {"method_options": {"direct": {"stages": []}}}},
            r"moca\.method_options\.direct: .*'stages' was unexp",
        ),
        (
            {"moca": {"method_options": {"codar": {"revison_rounds": 2}}}},
            r"moca\.method_options\.codar: .*'revison_rounds'",
        ),
        (
            {"moca": {"method_options": {"codar": {"revision_rounds": "2"}}}},
            r"codar\.revision_rounds: '2' is not of type",
        ),
        ({"moca": {"method_options": {"codar": {"decoding": "xml"}}}}, r"codar\.decoding: 'xml' is not one of"),
        (
            {"moca": {"methods": ["codar"], "method_options": {"codar": {"stages": ["decoder", "observer"]}}}},
            r"moca\.method_options\.codar\.stages: expected stages of .* in that order",
        ),
        (
            {"moca": {"methods": ["direct"], "method_options": {"codar": {"revision_rounds": 40}}}},
            r"moca\.method_options\.codar\.revision_rounds: 40 could take more than the runner's",
        ),
    ],
)
def test_a_benchmark_section_that_names_nothing_is_refused_naming_the_key(sections, says):
    with pytest.raises(ConfigError, match=says):
        validate_params(_with(**sections))


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ({"benchmarks": ["moka"]}, r"models\.r\.benchmarks\.0: 'moka' is no benchmark"),
        ({"only_methods": {"moka": ["direct"]}}, r"models\.r\.only_methods\.moka: is no benchmark"),
        ({"only_methods": {"moca": ["drect"]}}, r"models\.r\.only_methods\.moca\.0: 'drect' names no method of moca"),
        ({"exclude_methods": {"cota": "why"}}, r"models\.r\.exclude_methods\.cota: names no method of any benchmark"),
        ({"only_methods": {"moca": ["direct__"]}}, r"models\.r\.only_methods\.moca\.0: 'direct__' names no method"),
    ],
)
def test_a_model_that_names_a_benchmark_or_method_that_is_not_there_is_refused(model, says):
    with pytest.raises(ConfigError, match=says):
        validate_params({"models": {"r": {"backend": "random", **model}}})


@pytest.mark.parametrize(
    "uri", ["sqlite://mlflow.db", "postgres://host/db", "mlflow.db:5000/x", "http://", "ftp://host/store"]
)
def test_a_tracking_uri_mlflow_cannot_use_is_refused_at_load(uri):
    with pytest.raises(ConfigError, match=r"mlflow\.tracking_uri: "):
        validate_params(_with(mlflow={"tracking_uri": uri}))


@pytest.mark.parametrize(
    "uri",
    [
        "sqlite:///mlflow.db",
        "sqlite:////tmp/m.db",
        "http://127.0.0.1:5000",
        "postgresql+psycopg2://u@h/db",
        "databricks",
    ],
)
def test_tracking_uris_mlflow_opens_are_accepted(uri):
    assert validate_params(_with(mlflow={"tracking_uri": uri}))["mlflow"]["tracking_uri"] == uri


@pytest.mark.parametrize("uri", ["mlruns", "./mlruns", "file:///tmp/mlruns"])
def test_a_file_store_in_params_is_refused_naming_maintenance_mode_and_the_way_out(uri):
    """Issue 38: MLflow 3 refuses its file store (maintenance mode) unless MLFLOW_ALLOW_FILE_STORE is
    set; params name a store every checkout can open."""
    with pytest.raises(
        ConfigError, match=r"mlflow\.tracking_uri: .*names MLflow's file store .*maintenance mode.*sqlite:///"
    ):
        validate_params(_with(mlflow={"tracking_uri": uri}))


def test_a_file_store_is_a_problem_unless_the_environment_opts_in():
    from socialbench.core.config import tracking_uri_problem

    assert (
        tracking_uri_problem("file:///tmp/mlruns")
        and tracking_uri_problem("file:///tmp/mlruns", allow_file_store=True) is None
    )


@pytest.mark.parametrize("url", ["localhost:8000", "not-a-url", "http://", "http://h:x/v1"])
def test_a_base_url_that_is_no_server_url_is_refused_at_load(url):
    model = {"backend": "openai_compat", "model_id": "m", "options": {"base_url": url}}
    with pytest.raises(ConfigError, match=r"models\.r\.options\.base_url: .*(not a server URL|names no host|port)"):
        validate_params({"models": {"r": model}})


# ---- a backend's options, checked at load against the schema declared with the backend ---------------
@pytest.mark.parametrize(
    ("model", "says"),
    [
        (
            {"backend": "hf", "model_id": "x", "options": {"devise": "cpu"}},
            r"models\.r\.options: unknown option\(s\) devise \(backend hf takes: .*device",
        ),
        (
            {"backend": "hf", "model_id": "x", "options": {"dtype": "f8"}},
            r"models\.r\.options\.dtype: 'f8' is not one of",
        ),
        (
            {"backend": "vllm", "model_id": "x", "options": {"tensor_parallel_size": 0}},
            r"models\.r\.options\.tensor_parallel_size: 0 is less than the minimum of 1",
        ),
        (
            {"backend": "openai_compat", "options": {"base_url": "http://127.0.0.1:1/v1", "timeout": "soon"}},
            r"models\.r\.options\.timeout: 'soon' is not of type 'number'",
        ),
        ({"backend": "random", "options": {"seed": 1}}, r"models\.r\.options: unknown option\(s\) seed .*takes: none"),
        ({"backend": "file", "options": {}}, r"models\.r\.options: 'path' is a required property"),
        ({"backend": "codar_script", "options": {"route": "web"}}, r"models\.r\.options\.route: 'web' is not one of"),
    ],
)
def test_a_backend_option_its_backend_does_not_take_is_refused_at_load_naming_the_key(model, says):
    with pytest.raises(ConfigError, match=says):
        validate_params({"models": {"r": model}})


def test_every_registered_backend_declares_its_options_schema():
    from socialbench.core.backend import available_backends, backend_options_schema

    missing = [name for name in available_backends() if backend_options_schema(name) is None]
    assert not missing


def test_a_backend_options_schema_is_read_without_importing_the_backend_module():
    import sys

    from socialbench.core.backend import backend_options_schema

    before = "socialbench.backends.hf" in sys.modules
    assert "device" in backend_options_schema("hf")["properties"]
    assert ("socialbench.backends.hf" in sys.modules) == before


def test_vllm_takes_every_option_of_openai_compat():
    from socialbench.core.backend import backend_options_schema

    vllm, openai = (set(backend_options_schema(n)["properties"]) for n in ("vllm", "openai_compat"))
    assert openai <= vllm


# ---- robustness: the order runs of answer stability under option order (issue 34) ----------------
@pytest.mark.parametrize(
    ("section", "says"),
    [
        (
            {"moca": {"robustness": {"orders": 1, "models": ["r"], "methods": ["direct"]}}},
            r"moca\.robustness\.orders: 1 is less than the minimum of 2",
        ),
        (
            {"moca": {"robustness": {"orders": 3, "models": ["gpt"], "methods": ["direct"]}}},
            r"moca\.robustness\.models\.0: 'gpt' is no model under models \(known: r\)",
        ),
        (
            {"meetingtom": {"robustness": {"orders": 3, "models": ["r"], "methods": ["ecot"]}}},
            r"meetingtom\.robustness\.methods\.0: 'ecot' is no run of meetingtom\.methods \(no_prompt\)",
        ),
        (
            {"meetingtom": {"methods": ["no_prompt__order1"]}},
            r"meetingtom\.methods\.0: 'no_prompt__order1' is an order",
        ),
    ],
)
def test_a_robustness_section_naming_what_params_do_not_define_is_refused_naming_the_key(section, says):
    with pytest.raises(ConfigError, match=says):
        validate_params(_with(**section))


def test_a_robustness_section_naming_defined_models_and_runs_is_valid():
    p = validate_params(_with(moca={"robustness": {"orders": 3, "models": ["r"], "methods": ["direct"]}}))
    assert p["moca"]["robustness"]["orders"] == 3
    assert validate_params(_with(moca={}))["moca"]["robustness"] is None  # opt-in: none by default


# ---- check-params knows every key (issue 33, class 7): each fails at load, naming the key -------------


def _bm25(**options) -> dict:
    return {"moca": {"retrieval": {"retriever": "bm25", "options": {"corpus": "data/corpus/moca_demo", **options}}}}


@pytest.mark.parametrize(
    ("sections", "says"),
    [
        (
            _bm25(corpsu="x"),
            r"moca\.retrieval\.options: unknown option\(s\) corpsu \(retriever bm25 takes: b, corpus, k1\)",
        ),
        (_bm25(k1=-1), r"moca\.retrieval\.options\.k1: -1 is less than the minimum of 0"),
        ({"moca": {"retrieval": {"retriever": "web", "options": {"max_wait_s": "1h"}}}}, r"options\.max_wait_s: '1h'"),
        ({"moca": {"retrieval": {"retriever": "bm52"}}}, r"moca\.retrieval\.retriever: unknown retriever 'bm52'"),
        ({"moca": {"retrieval": {"retriever": "none", "options": {"k1": 1}}}}, r"retriever none takes no options"),
        ({"resources": {"models": {"ghost": {"gpu": 1}}}}, r"resources\.models\.ghost: names no model of params"),
    ],
)
def test_a_key_check_params_did_not_know_is_refused_naming_it(sections, says):
    with pytest.raises(ConfigError, match=says):
        validate_params(_with(**sections))


def test_a_vllm_model_asked_fewer_gpus_than_its_tensor_parallel_size_is_refused():
    params = {
        "models": {"big": {"backend": "vllm", "model_id": "org/m", "options": {"tensor_parallel_size": 4}}},
        "resources": {"models": {"big": {"gpu": 1}}},
    }
    with pytest.raises(ConfigError, match=r"resources\.models\.big\.gpu: 1 is fewer than the 4 GPUs its vLLM server"):
        validate_params(params)
    params["models"]["big"]["options"]["base_url"] = "http://127.0.0.1:8000/v1"  # a running server: no GPUs here
    validate_params(params)


def test_two_model_names_sharing_one_server_variable_are_refused():
    models = {"qwen-7b": {"backend": "random"}, "qwen_7b": {"backend": "random"}}
    with pytest.raises(ConfigError, match=r"models\.qwen_7b: its server variable SOCIALBENCH_SERVER_URL_QWEN_7B is"):
        validate_params({"models": models})


def test_an_ablation_whose_template_cannot_render_is_refused_naming_it(monkeypatch):
    from socialbench.moca.benchmark import MocaBenchmark

    real = MocaBenchmark.template

    def template(self, method, name):  # an ablation's own prompt with a typo in a placeholder
        text = real(self, method, name)
        return text + "\n$in_percepton\n" if method == "codar__wo_step5" and name == "decoder.user.txt" else text

    monkeypatch.setattr(MocaBenchmark, "template", template)
    ablation = {
        "table": "table5",
        "label": "w/o Step 5",
        "stages": ["observer", "query", "context", "conflict", "decoder"],
    }
    section = {
        "methods": ["codar", "codar__wo_step5"],
        "retrieval": {"retriever": "none"},
        "ablations": {"wo_step5": ablation},
    }
    with pytest.raises(
        ConfigError,
        match=r"moca\.ablations\.wo_step5: template templates/codar/decoder\.user\.txt:"
        r" placeholder \$in_percepton has no value",
    ):
        validate_params(_with(moca=section))


def test_every_shipped_codar_template_renders_with_the_placeholders_the_chain_fills(repo_root):
    from socialbench.core.benchmarks import template_problem
    from socialbench.moca.schema.methods import CODAR_PLACEHOLDERS

    folder = repo_root / "src/socialbench/moca/templates/codar"
    for path in folder.rglob("*.txt"):
        assert template_problem(path.read_text("utf-8"), str(path), CODAR_PLACEHOLDERS) is None


def test_a_model_declaring_a_modality_its_backend_cannot_carry_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"models\.c\.modalities: 'audio': backend anthropic cannot carry it"):
        validate_params({"models": {"c": {"backend": "anthropic", "modalities": ["image", "audio"]}}})


def test_an_unknown_modality_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"models\.v\.modalities\.0"):
        validate_params({"models": {"v": {"backend": "vllm", "modalities": ["sound"]}}})


def test_a_vllm_model_may_declare_audio():
    p = validate_params({"models": {"omni": {"backend": "vllm", "modalities": ["image", "frames", "video", "audio"]}}})
    assert p["models"]["omni"]["modalities"] == ["image", "frames", "video", "audio"]


def test_an_overlay_merges_mappings_and_replaces_lists_and_the_models():
    from socialbench.core.config import overlay_params

    base = {"seed": 1, "moca": {"methods": ["direct", "codar"], "subset": None, "frames": 8}, "models": {"a": {}}}
    over = {"moca": {"methods": ["direct"], "subset": {"n": 4}}, "models": {"b": {"backend": "hf"}}, "weights": {}}
    merged = overlay_params(base, over)
    assert merged["moca"] == {"methods": ["direct"], "subset": {"n": 4}, "frames": 8}
    assert merged["models"] == {"b": {"backend": "hf"}} and merged["weights"] == {} and merged["seed"] == 1
    assert base["moca"]["methods"] == ["direct", "codar"]


def _params_file(tmp_path, n_test=5):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"models": {"r": {"backend": "random"}}, "moca": {"demo": {"n_test": n_test}}}))
    return path


def test_a_job_takes_the_values_the_snakefile_validated_for_the_same_bytes(tmp_path, monkeypatch):
    path = _params_file(tmp_path)
    record = validated_record(path)

    def no_validation(*args, **kwargs):
        raise AssertionError("validated again")

    monkeypatch.setattr(config_module, "validate_params", no_validation)
    assert load_params(path, environ={VALIDATED_ENV: record})["moca"]["demo"]["n_test"] == 5


def test_a_params_file_edited_after_the_snakefile_validated_it_is_validated_again(tmp_path):
    path = _params_file(tmp_path)
    record = validated_record(path)
    _params_file(tmp_path, n_test=0)
    with pytest.raises(ConfigError, match=r"moca\.demo\.n_test"):
        load_params(path, environ={VALIDATED_ENV: record})


def test_an_unreadable_validated_record_is_ignored(tmp_path):
    path = _params_file(tmp_path)
    assert load_params(path, environ={VALIDATED_ENV: "{not json"}) == load_params(path, environ={})


def test_values_that_json_would_change_are_not_handed_on(tmp_path, monkeypatch):
    path = _params_file(tmp_path)
    monkeypatch.setattr(config_module, "validate_params", lambda params, source: {"models": {}, "pair": (1, 2)})
    assert validated_record(path) is None
