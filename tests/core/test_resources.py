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


def test_a_transformers_serve_model_on_cpu_asks_for_no_gpu_and_on_cuda_for_one():
    assert model_gpus({"backend": "transformers_serve", "options": {"device": "cpu"}}) == 0
    assert model_gpus({"backend": "transformers_serve", "options": {"device": "cuda:0"}}) == 1
    assert model_gpus({"backend": "transformers_serve", "options": {"base_url": "http://h:1/v1"}}) == 0
