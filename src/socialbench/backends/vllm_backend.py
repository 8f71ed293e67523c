"""``vllm``: an open-weight model served by ``vllm serve``, spoken to through ``openai_compat``.

The server is started, shared and stopped by :mod:`socialbench.backends.vllm_servers` unless
``options.base_url`` or ``SOCIALBENCH_SERVER_URL_<MODEL>`` names a running one; docs/backends.md
describes it. Video goes natively as a ``video_url`` data URL of the clip (frames when no file), audio as
``input_audio``; the server must allow them (``limit_mm_per_prompt``). Without ``revision`` in params
the model is pinned as ``hf`` pins it, and a hub commit is the owned server's ``--revision``, so the
answers and the cache key agree.

Options (``models.<name>.options``), besides those of ``openai_compat``: see docs/backends.md.
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
