"""``vllm``: an open-weight model served by ``vllm serve``, spoken to through ``openai_compat``.

By default the pipeline runs the server: ``vllm serve <model_id>`` on a free loopback port with the
tensor-parallel size, maximum model length and per-prompt image limit from params, its output kept in
a log file. It is one server per model on a node, shared by every job of that model there
(:mod:`socialbench.backends.vllm_servers`): the first job that has a call to make starts it and waits
for ``/health``, later ones attach to it, and the last one to close stops it (a local pipeline keeps
it until its end). With a running server named by ``options.base_url`` or the environment's
``SOCIALBENCH_SERVER_URL_<MODEL>`` (:func:`socialbench.core.resources.server_url_env`) it starts nothing.
Answers are constrained to the answer schema by vLLM's guided decoding
(``response_format: json_schema``); ``Decoding.json_object`` asks for ``{"type": "json_object"}``.
Decoding fields, finish reasons, the image/audio parts and the reasoning a ``--reasoning-parser``
returns apart (``reasoning_content``/``reasoning``, kept in the trace, never parsed as the answer) are
those of ``openai_compat``.

Parts it takes (``accepts``): images; video, natively as a ``video_url`` content part whose URL is a
``data:video/mp4;base64,...`` URL of the clip file (vLLM's OpenAI server takes it for video-capable
models and samples the frames itself), or as its sampled frames when the part has no file; audio as
an ``input_audio`` content part (base64 WAV, ``format: wav``; vLLM also takes ``audio_url``, not used
here). The model must take the modality and the server must allow it: for video or audio, set
``limit_mm_per_prompt`` (e.g. ``{image: 8, video: 1, audio: 1}``).

Revision: with no ``revision`` in params, the model is pinned the way ``hf`` pins it: a hub id to the
commit its local Hugging Face cache holds (online and not cached: the commit the hub names now), a
local folder to a fingerprint of its files (:func:`socialbench.core.hashing.folder_fingerprint`). That is
the identity's revision (the cache key) and, for a hub commit, the ``--revision`` the owned server is
started with, so answers and key agree. A server the user runs (``base_url``) is taken as it is.

Options (``models.<name>.options``), besides those of ``openai_compat``:
  base_url              use this running server instead of starting one (SOCIALBENCH_SERVER_URL_<MODEL> wins)
  executable            command that starts the server (default: ``vllm``); a string or a list
  tensor_parallel_size  --tensor-parallel-size (default 1)
  max_model_len         --max-model-len (default: the model's)
  limit_mm_per_prompt   --limit-mm-per-prompt (default {"image": max_frames})
  dtype, quantization, gpu_memory_utilization   passed through when set (dtype/quantization: part of the key)
  extra_args            further ``vllm serve`` arguments (list of strings)
  startup_timeout       seconds to wait for /health (default 1800: large checkpoints load slowly)
  log_path              server log (default logs/vllm/<model name>.log, appended)
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.backends.images import encode_video
from socialbench.backends.openai_compat import OpenAICompatBackend
from socialbench.backends.revision import resolve_revision as _resolve
from socialbench.backends.vllm_preflight import preflight
from socialbench.backends.vllm_servers import (  # noqa: F401 - ServerFailed, free_port: this backend's API too
    Lease,
    NodeServerBackend,
    ServerFailed,
    ServerProcess,
    SharedServers,
    free_port,
    server_executable,
)
from socialbench.core.backend import BackendContext, ModelSpec, Request, VideoPart
from socialbench.core.errors import ConfigError
from socialbench.core.resources import external_server, server_url_problem

log = logging.getLogger("socialbench.backends")


_TRUE = {"1", "ON", "YES", "TRUE"}


def _offline() -> bool:
    try:
        import huggingface_hub.constants

        if huggingface_hub.constants.HF_HUB_OFFLINE:
            return True
    except ImportError:
        return True
    return any(os.environ.get(v, "").strip().upper() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def resolve_revision(model_id: str, offline: bool | None = None) -> str | None:
    """What an unpinned model is, as ``hf`` resolves it (``backends.revision``)."""
    return _resolve(model_id, _offline() if offline is None else offline)


class VllmServer(ServerProcess):
    """One ``vllm serve`` process: started on a free loopback port, health-checked, stopped."""

    label = "vllm serve"


class VllmBackend(NodeServerBackend, OpenAICompatBackend):
    """A vLLM server (owned or the user's) behind the OpenAI-compatible client."""

    default_key_env = "VLLM_API_KEY"  # only needed for a non-loopback server started with --api-key
    default_max_tokens_param = "max_completion_tokens"  # vLLM 0.33 deprecates max_tokens
    # accepts: images, native video clips (``video_url``) or their frames, and audio (``input_audio``).
    # A model takes images, frames and native video unless params declare its modalities (audio: an
    # audio-capable model declares it). Declared in vllm_backend.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        options = dict(spec.options or {})
        if not spec.model_id:
            raise ConfigError(f"models.{spec.name}.model_id is required (a Hugging Face id or a local path)")
        found = external_server(spec.name, {"options": options}, os.environ)
        external_url = found[0] if found else None
        problem = server_url_problem(found[0]) if found else None
        if found and problem:  # before the key: a URL that is none decides nothing about a key
            raise ConfigError(f"{found[1]}: {problem}")
        self.external = bool(external_url)
        self.server: VllmServer | None = None
        self.lease: Lease | None = None
        self.servers = SharedServers()
        self._revision: str | None = None
        self._resolved = False
        port = None if self.external else int(options.get("port") or free_port())
        base_url = external_url or f"http://127.0.0.1:{port}/v1"
        super().__init__(spec, context, base_url=base_url)
        self.served_model = spec.name if not self.external else (options.get("served_model_name") or spec.model_id)
        if not self.external:
            self.server = VllmServer(
                self.server_command(port),
                port,
                Path(options.get("log_path") or f"logs/vllm/{spec.name}.log"),
                float(options.get("startup_timeout", 1800)),
            )

    def resolved_revision(self) -> str | None:
        """The revision of the model: the pinned one, else (owned server) what the model id resolves
        to (see :func:`resolve_revision`), once. None for an unpinned model on a server the user runs."""
        if self.spec.revision or self.external:
            return self.spec.revision
        if not self._resolved:
            self._revision = resolve_revision(str(self.spec.model_id))
            self._resolved = True
            if self._revision is None:
                log.warning(
                    "models.%s: %s has no revision pinned and none could be resolved; pin models.%s.revision"
                    " to make the run reproducible",
                    self.spec.name,
                    self.spec.model_id,
                    self.spec.name,
                )
        return self._revision

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["revision"] = self.resolved_revision()
        for key in ("dtype", "quantization"):
            if self.spec.options.get(key) is not None:
                ident[key] = self.spec.options[key]
        return ident

    def _executable(self) -> list[str]:
        exe = self.spec.options.get("executable", "vllm")
        install = "pip install 'socialbench[vllm]' (on a machine with an NVIDIA GPU)"
        return server_executable(exe, self.where, "vllm", install)

    def server_command(self, port: int) -> list[str]:
        o = self.spec.options
        cmd = self._executable() + ["serve", str(self.spec.model_id), "--host", "127.0.0.1", "--port", str(port)]
        cmd += ["--served-model-name", self.spec.name]
        revision = self.resolved_revision()
        if revision and not revision.startswith("files:"):  # a local folder is read as it is
            cmd += ["--revision", str(revision)]
        cmd += ["--tensor-parallel-size", str(int(o.get("tensor_parallel_size", 1)))]
        if o.get("max_model_len"):
            cmd += ["--max-model-len", str(int(o["max_model_len"]))]
        limit = o.get("limit_mm_per_prompt") or {"image": int(self.spec.max_frames)}
        cmd += ["--limit-mm-per-prompt", json.dumps(limit, sort_keys=True)]
        for key, flag in (
            ("dtype", "--dtype"),
            ("quantization", "--quantization"),
            ("gpu_memory_utilization", "--gpu-memory-utilization"),
        ):
            if o.get(key) is not None:
                cmd += [flag, str(o[key])]
        cmd += ["--seed", str(self.context.seed)]
        extra = o.get("extra_args") or []
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise ConfigError(f"{self.where}.extra_args must be a list of strings")
        return cmd + extra

    def preflight(self, requests: Sequence[Request], ids: Sequence[str] | None = None):
        """Check the server command line and these requests with the installed vLLM, without starting
        the server (see :mod:`socialbench.backends.vllm_preflight`). Returns a ``PreflightReport``."""
        if self.server is None:
            raise ConfigError(
                f"{self.where}: the preflight checks the server this backend starts; with base_url there is none"
            )
        return preflight(self.server.command, [self._prepare(r) for r in requests], ids)

    def video_block(self, part: VideoPart) -> dict[str, Any]:
        return {"type": "video_url", "video_url": {"url": encode_video(part).data_url()}}
