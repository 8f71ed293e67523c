"""``vllm``: an open-weight model served by ``vllm serve``, spoken to through ``openai_compat``.

The server is started, shared and stopped by :mod:`socialbench.backends.vllm_servers` unless
``options.base_url`` or ``SOCIALBENCH_SERVER_URL_<MODEL>`` names a running one (docs/backends.md; options:
vllm_backend.options.json). Video goes natively as a ``video_url`` data URL of the clip. An unpinned hub
model's resolved commit is the owned server's ``--revision``, so the answers and the cache key agree."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.backends.images import encode_video
from socialbench.backends.openai_compat import OpenAICompatBackend
from socialbench.backends.vllm_preflight import preflight
from socialbench.backends.vllm_servers import (  # noqa: F401 - ServerFailed, free_port: this backend's API too
    NodeServerBackend,
    ServerFailed,
    ServerProcess,
    free_port,
    server_executable,
)
from socialbench.core.backend import BackendContext, ModelSpec, Request, VideoPart
from socialbench.core.errors import ConfigError


class VllmBackend(NodeServerBackend, OpenAICompatBackend):
    """A vLLM server (owned or the user's) behind the OpenAI-compatible client."""

    default_key_env = "VLLM_API_KEY"  # only needed for a non-loopback server started with --api-key
    default_max_tokens_param = "max_completion_tokens"  # vLLM 0.33 deprecates max_tokens
    # accepts: images, native video or its frames, and audio, declared in vllm_backend.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        options = dict(spec.options or {})
        if not spec.model_id:
            raise ConfigError(f"models.{spec.name}.model_id is required (a Hugging Face id or a local path)")
        self.model_source = str(spec.model_id)
        port, base_url = self.node_url(spec.name, options)
        super().__init__(spec, context, base_url=base_url)
        self.served_model = spec.name if not self.external else (options.get("served_model_name") or spec.model_id)
        if not self.external:
            self.server = ServerProcess(
                self.server_command(port),
                port,
                Path(options.get("log_path") or f"logs/vllm/{spec.name}.log"),
                float(options.get("startup_timeout", 1800)),
                label="vllm serve",
            )

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
        for key in ("dtype", "quantization", "gpu_memory_utilization"):
            if o.get(key) is not None:
                cmd += ["--" + key.replace("_", "-"), str(o[key])]
        return cmd + ["--seed", str(self.context.seed), *self.extra_args()]

    def preflight(self, requests: Sequence[Request], ids: Sequence[str] | None = None):
        """Check the server command line and these requests with the installed vLLM (a ``PreflightReport``)."""
        if self.server is None:
            raise ConfigError(
                f"{self.where}: the preflight checks the server this backend starts; with base_url there is none"
            )
        return preflight(self.server.command, [self._prepare(r) for r in requests], ids)

    def video_block(self, part: VideoPart) -> dict[str, Any]:
        return {"type": "video_url", "video_url": {"url": encode_video(part).data_url()}}
