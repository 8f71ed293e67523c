"""``transformers_serve``: a model folder served by ``transformers serve``, spoken to through ``openai_compat``.

Started, shared and stopped like ``vllm serve`` (docs/backends.md; options: transformers_serve.options.json).
**JSON mode is not enforced**: the server ignores ``response_format`` (transformers 5.24), as the
declaration and the tables say."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from socialbench.backends.openai_compat import OpenAICompatBackend
from socialbench.backends.vllm_servers import NodeServerBackend, ServerProcess, server_executable
from socialbench.core.backend import BackendContext, ModelSpec
from socialbench.core.errors import ConfigError, MissingDependency

#: What ``transformers serve`` imports besides transformers (the extra ``serve``: transformers[serving]).
SERVER_MODULES = ("transformers", "fastapi", "uvicorn", "accelerate")


def check_model_folder(folder: Path, where: str) -> None:
    """A ``config.json`` naming the model class (``architectures``), checked before the server starts."""
    config = folder / "config.json"
    if not config.is_file():
        raise ConfigError(
            f"{where}: {folder} is no model folder (no config.json in it); build it first (e.g. socialbench"
            " weights convert) or name another one"
        )
    try:
        architectures = json.loads(config.read_text("utf-8")).get("architectures")
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{where}: {config} is not a JSON object ({exc})") from exc
    if not architectures:
        raise ConfigError(
            f"{where}: {config} names no architectures, which transformers serve needs to load the model"
            ' (e.g. "architectures": ["LlamaForCausalLM"], as save_pretrained writes it)'
        )


class TransformersServeBackend(NodeServerBackend, OpenAICompatBackend):
    """A ``transformers serve`` process (owned or the user's) behind the OpenAI-compatible client."""

    default_key_env = None  # a loopback server takes no key; a remote one names its variable
    # accepts (and JSON mode not enforced): declared in transformers_serve.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        options = dict(spec.options or {})
        folder = getattr(spec, "model_path", None) or spec.model_id
        if not folder:
            raise ConfigError(
                f"models.{spec.name}.model_id is required (a model folder in the Hugging Face layout, or a hub id)"
            )
        if str(folder).lower().endswith(".gguf") or (getattr(spec, "gguf_file", None) and folder == spec.model_id):
            raise ConfigError(
                f"models.{spec.name}: transformers serve cannot serve a GGUF file (its config names no"
                " architecture); convert it into a model folder (socialbench weights convert --gguf FILE --out"
                " FOLDER) and name that folder"
            )
        self.model_source = str(folder)
        port, base_url = self.node_url(spec.name, options)
        super().__init__(spec, context, base_url=base_url)
        if self.external:
            self.served_model = options.get("served_model_name") or str(spec.model_id or folder)
        else:
            self.served_model = self.force_model()
            # torch's CPU threads, read at the server's start ("": the job's environment as it is)
            threads = "" if options.get("threads") is None else str(int(options["threads"]))
            self.server = ServerProcess(
                self.server_command(port),
                port,
                Path(options.get("log_path") or f"logs/transformers-serve/{spec.name}.log"),
                float(options.get("startup_timeout", 600)),
                env=dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads) if threads else None,
                label="transformers serve",
            )

    def local_folder(self) -> Path | None:
        """The model folder, when the model is one on this machine (None: a hub id)."""
        path = Path(self.model_source).expanduser()
        looks_local = path.is_absolute() or self.model_source.startswith(".") or path.exists()
        return path.resolve() if looks_local else None

    def force_model(self) -> str:
        """The model the server preloads and every request names: a local folder by its absolute path (two
        working trees never share a server by a relative name), a hub id with its pinned or resolved revision."""
        folder = self.local_folder()
        if folder is not None:
            return str(folder)
        revision = self.resolved_revision()
        if revision and not revision.startswith("files:"):
            return f"{self.model_source}@{revision}"
        return self.model_source

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["revision"] = self.resolved_revision()
        ident["server"] = "transformers serve"
        if self.spec.options.get("dtype") not in (None, "auto"):
            ident["dtype"] = self.spec.options["dtype"]
        return ident

    def _executable(self) -> list[str]:
        """``options.executable``, else the job's own Python running transformers' CLI (whatever is on PATH)."""
        exe = self.spec.options.get("executable")
        if exe is None:
            missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
            if missing:
                raise MissingDependency(
                    f"backend 'transformers_serve' needs {', '.join(missing)} (transformers serve), not installed;"
                    f" install them with: pip install 'socialbench[serve]', or set {self.where}.base_url to a"
                    " server you already run"
                )
            return [sys.executable, "-m", "transformers.cli.transformers"]
        return server_executable(exe, self.where, "transformers_serve", "pip install 'socialbench[serve]'")

    def server_command(self, port: int) -> list[str]:
        o = self.spec.options
        cmd = self._executable() + ["serve", self.force_model(), "--host", "127.0.0.1", "--port", str(port)]
        cmd += ["--device", str(o.get("device", "auto")), "--dtype", str(o.get("dtype", "auto"))]
        return cmd + ["--default-seed", str(self.context.seed), *self.extra_args()]

    def before_start(self) -> None:
        folder = self.local_folder()
        if folder is not None:
            check_model_folder(folder, f"models.{self.spec.name}")
