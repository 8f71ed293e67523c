import pytest

from socialbench.core.resources import external_server_url, job_resources, model_gpus, server_url_env

SECTION = {
    "default": {"mem_mb": 2000, "runtime": 60, "cpus_per_task": 1},
    "media": {"mem_mb": 4000, "runtime": 120},
    "infer": {"mem_mb": 16000, "runtime": 720, "cpus_per_task": 4},
    "models": {"big": {"mem_mb": 64000, "gpu": 8}},
}


def test_vllm_model_asks_for_one_gpu_per_tensor_parallel_shard():
    assert model_gpus({"backend": "vllm", "options": {"tensor_parallel_size": 4}}) == 4


def test_vllm_model_without_tensor_parallelism_asks_for_one_gpu():
    assert model_gpus({"backend": "vllm"}) == 1


def test_vllm_model_on_a_server_the_user_runs_asks_for_no_gpu():
    assert (
        model_gpus({"backend": "vllm", "options": {"base_url": "http://gpu-node:8000/v1", "tensor_parallel_size": 4}})
        == 0
    )


def test_hf_model_on_cpu_asks_for_no_gpu():
    assert model_gpus({"backend": "hf", "options": {"device": "cpu"}}) == 0


def test_hf_model_on_auto_device_asks_for_one_gpu():
    assert model_gpus({"backend": "hf", "options": {}}) == 1


def test_api_and_baseline_models_ask_for_no_gpu():
    assert model_gpus({"backend": "anthropic"}) == 0 and model_gpus({"backend": "random"}) == 0


def test_media_job_takes_default_under_its_own_entry():
    assert job_resources(SECTION, "media") == {"mem_mb": 4000, "runtime": 120, "cpus_per_task": 1}


def test_infer_job_of_a_cpu_model_has_no_gpu_key():
    assert "gpu" not in job_resources(SECTION, "infer", "random", {"backend": "random"})


def test_infer_job_gets_its_models_gpus():
    res = job_resources(SECTION, "infer", "q", {"backend": "vllm", "options": {"tensor_parallel_size": 2}})
    assert res == {"mem_mb": 16000, "runtime": 720, "cpus_per_task": 4, "gpu": 2}


def test_per_model_entry_overrides_infer_and_model_gpus():
    res = job_resources(SECTION, "infer", "big", {"backend": "vllm", "options": {"tensor_parallel_size": 2}})
    assert res["mem_mb"] == 64000 and res["gpu"] == 8 and res["runtime"] == 720


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        job_resources(SECTION, "gpu-heavy")


def test_a_server_url_in_the_environment_means_the_job_asks_for_no_gpu():
    model = {"backend": "vllm", "options": {"tensor_parallel_size": 4}}
    env = {"SOCIALBENCH_SERVER_URL_QWEN3_VL_32B": "http://gpu-node:8000/v1"}
    assert "gpu" not in job_resources(SECTION, "infer", "qwen3-vl-32b", model, env)
    assert job_resources(SECTION, "infer", "qwen3-vl-32b", model, {})["gpu"] == 4


def test_the_environment_names_a_models_server_by_its_name_in_capitals():
    assert server_url_env("qwen3-vl-32b") == "SOCIALBENCH_SERVER_URL_QWEN3_VL_32B"


def test_the_environments_server_url_wins_over_the_params_base_url():
    model = {"backend": "vllm", "options": {"base_url": "http://a:1/v1"}}
    assert external_server_url("m", model, {"SOCIALBENCH_SERVER_URL_M": "http://b:2/v1"}) == "http://b:2/v1"
    assert external_server_url("m", model, {}) == "http://a:1/v1"


def test_the_server_url_comes_with_where_it_is_set():
    from socialbench.core.resources import external_server

    model = {"backend": "vllm", "options": {"base_url": "http://a:1/v1"}}
    assert external_server("m", model, {"SOCIALBENCH_SERVER_URL_M": "x"}) == ("x", "$SOCIALBENCH_SERVER_URL_M")
    assert external_server("m", model, {}) == ("http://a:1/v1", "models.m.options.base_url")
    assert external_server("m", {}, {}) is None


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("not-a-url", "'not-a-url' is not a server URL"),
        ("ftp://h/v1", "is not a server URL"),
        ("http:///v1", "names no host"),
        ("http://h:x/v1", "its port is not a number"),
        ("http://user:pw@h:x/v1", "'http://***@h:x/v1': its port"),
    ],
)
def test_a_server_url_that_is_none_is_named_with_its_credentials_masked(url, says):
    from socialbench.core.resources import server_url_problem

    assert says in server_url_problem(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://h/v1", "http://[::1]:8000/v1"])
def test_server_urls_pass(url):
    from socialbench.core.resources import server_url_problem

    assert server_url_problem(url) is None


def test_a_transformers_serve_model_on_cpu_asks_for_no_gpu_and_on_cuda_for_one():
    assert model_gpus({"backend": "transformers_serve", "options": {"device": "cpu"}}) == 0
    assert model_gpus({"backend": "transformers_serve", "options": {"device": "cuda:0"}}) == 1
    assert model_gpus({"backend": "transformers_serve", "options": {"base_url": "http://h:1/v1"}}) == 0
