"""vLLM preflight: what ``vllm serve`` would do with our command line and our requests, checked through
vLLM's own code without starting its engine (a CPU is enough): the serve arguments, the engine
configuration, each request body and the guided JSON grammar (docs/backends.md, "vLLM preflight").
Written against vLLM 0.33; an internal API it cannot find is a failed check naming it, not a crash."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from socialbench.core.errors import MissingDependency


@dataclass
class PreflightReport:
    vllm_version: str = "?"
    checks: dict[str, bool] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(self.checks.values())

    def fail(self, check: str, problem: str) -> None:
        self.checks[check] = False
        self.problems.append(f"{check}: {problem}")

    def as_dict(self) -> dict[str, Any]:
        fields = ("checks", "problems", "model", "requests")
        return {"vllm_version": self.vllm_version, "ok": self.ok, **{k: getattr(self, k) for k in fields}}


def _use_cpu_platform_without_cuda() -> None:
    """Without a CUDA device vLLM's platform detection fails; its CPU platform is enough (set before import)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - vLLM needs torch
        torch = None
    if torch is None or not torch.cuda.is_available():
        os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _image_count(body: Mapping[str, Any]) -> int:
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


def preflight(
    server_command: Sequence[str], bodies: Sequence[Mapping[str, Any]], ids: Sequence[str] | None = None
) -> PreflightReport:
    """Check a ``vllm serve`` command line and the bodies sent to it; ``ids`` name the requests."""
    _use_cpu_platform_without_cuda()
    try:
        import vllm
    except ImportError as exc:
        raise MissingDependency(
            "the vLLM preflight needs vLLM: pip install 'socialbench[vllm]' (scripts/vllm_preflight.sh"
            " makes a separate virtual environment with it)"
        ) from exc
    report = PreflightReport(vllm_version=getattr(vllm, "__version__", "?"))
    ids = list(ids) if ids is not None else [str(i) for i in range(len(bodies))]

    # 1-2: the command line and the engine configuration it resolves to.
    try:
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.entrypoints.common.cli_args import make_arg_parser, validate_parsed_serve_args
        from vllm.usage.usage_lib import UsageContext
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError as exc:
        report.fail("serve arguments parse", f"this vLLM lacks an API the preflight uses ({exc})")
        return report
    said = io.StringIO()
    command = list(server_command)
    try:
        parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
        if "serve" not in command:
            raise ValueError(f"not a `vllm serve` command line: {command}")
        with contextlib.redirect_stderr(said):
            args = parser.parse_args(command[command.index("serve") + 1 :])
    except (SystemExit, ValueError) as exc:  # argparse exits on an unknown flag or a bad value
        why = said.getvalue().strip().splitlines()[-1:] or [str(exc)]
        report.fail("serve arguments parse", f"vLLM's parser rejected {shlex.join(server_command)}: {why[0]}")
        return report
    try:
        if getattr(args, "model_tag", None):
            args.model = args.model_tag
        validate_parsed_serve_args(args)
        report.checks["serve arguments parse"] = True
        engine_args = AsyncEngineArgs.from_cli_args(args)
        vllm_config = engine_args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
    except Exception as exc:  # noqa: BLE001 - vLLM raises many types here; the message is the diagnosis
        report.fail("engine config resolves", f"{type(exc).__name__}: {exc}")
        return report
    model_config = vllm_config.model_config
    served = list(args.served_model_name or [args.model])
    mm_config = getattr(model_config, "multimodal_config", None)
    image_limit = mm_config.get_limit_per_prompt("image") if mm_config is not None else 0
    report.model = {
        "architecture": (model_config.architectures or ["?"])[0],
        "max_model_len": model_config.max_model_len,
        "dtype": str(model_config.dtype),
        "served_model_name": served,
        "image_limit": image_limit,
    }
    report.checks["engine config resolves"] = True

    # 3: the requests, rendered as the server renders them.
    try:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.renderers.registry import renderer_from_config
    except ImportError as exc:
        report.fail("requests render", f"this vLLM lacks an API the preflight uses ({exc})")
        return report
    renderer = renderer_from_config(vllm_config)
    tokenizer = renderer.get_tokenizer()
    schemas: dict[str, tuple[dict[str, Any], Any]] = {}
    for check in (
        "requests validate",
        "requests render",
        "images match placeholders",
        "images within limit",
        "prompt fits the model length",
        "greedy decoding",
        "guided JSON schema",
    ):
        report.checks[check] = True
    for rid, body in zip(ids, bodies):
        row: dict[str, Any] = {"id": rid, "images": _image_count(body)}
        report.requests.append(row)
        if body.get("model") not in served:
            report.fail("requests validate", f"request {rid}: model {body.get('model')!r} is not served ({served})")
        try:
            request = ChatCompletionRequest.model_validate(dict(body))
        except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, named in the message
            report.fail("requests validate", f"request {rid}: {exc}")
            continue
        max_tokens = request.max_completion_tokens or request.max_tokens or 0
        try:
            chat_params = request.build_chat_params(None, "auto")
            tok_params = request.build_tok_params(model_config)
            _, engine_inputs = renderer.render_chat([request.messages], chat_params, tok_params)
            engine_input = engine_inputs[0]
        except Exception as exc:  # noqa: BLE001
            report.fail("requests render", f"request {rid}: {type(exc).__name__}: {exc}")
            continue
        placeholders = (engine_input.get("mm_placeholders") or {}).get("image", [])
        row.update(
            prompt_tokens=len(engine_input.get("prompt_token_ids") or []),
            placeholders=len(placeholders),
            image_tokens=sum(int(getattr(p, "length", 0)) for p in placeholders),
        )
        if len(placeholders) != row["images"]:
            report.fail(
                "images match placeholders",
                f"request {rid}: {row['images']} images sent, {len(placeholders)} placeholders rendered",
            )
        if row["images"] > int(image_limit):
            report.fail(
                "images within limit", f"request {rid}: {row['images']} images > --limit-mm-per-prompt {image_limit}"
            )
        if row["prompt_tokens"] + max_tokens > model_config.max_model_len:
            report.fail(
                "prompt fits the model length",
                f"request {rid}: {row['prompt_tokens']} prompt tokens + "
                f"{max_tokens} max_tokens > max_model_len {model_config.max_model_len}",
            )
        sampling = request.to_sampling_params(max_tokens, model_config.get_diff_sampling_param())
        if sampling.temperature != 0.0:
            report.fail("greedy decoding", f"request {rid}: temperature {sampling.temperature}")
        wanted = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        guided = getattr(sampling.structured_outputs, "json", None)
        guided = json.loads(guided) if isinstance(guided, str) else guided
        if wanted is None:
            report.fail(
                "guided JSON schema",
                f"request {rid}: no response_format json_schema in the request (options.json_mode must be json_schema)",
            )
            continue
        if guided != wanted:
            report.fail(
                "guided JSON schema", f"request {rid}: vLLM's structured outputs {guided!r} differ from the schema sent"
            )
            continue
        try:
            sampling._validate_structured_outputs(model_config, vllm_config.structured_outputs_config, tokenizer)
        except Exception as exc:  # noqa: BLE001
            report.fail("guided JSON schema", f"request {rid}: vLLM rejects the schema ({exc})")
            continue
        row["structured_backend"] = sampling.structured_outputs._backend
        schemas.setdefault(json.dumps(wanted, sort_keys=True), (wanted, row["structured_backend"]))

    # 4: every distinct schema compiled by the backend vLLM chose, against the model's tokenizer.
    report.checks["grammar accepts valid, rejects invalid"] = bool(schemas)
    if not schemas:
        report.problems.append("grammar accepts valid, rejects invalid: no request had a usable schema")
    for schema, backend_name in schemas.values():
        try:
            problem = _grammar_problem(vllm_config, model_config, tokenizer, schema, backend_name)
        except Exception as exc:  # noqa: BLE001
            problem = f"{backend_name} grammar failed to compile or run: {type(exc).__name__}: {exc}"
        if problem:
            report.fail("grammar accepts valid, rejects invalid", problem)
    return report


def _grammar_problem(vllm_config, model_config, tokenizer, schema: dict[str, Any], backend_name: str) -> str | None:
    try:
        from vllm.v1.structured_output.backend_types import StructuredOutputOptions

        if backend_name == "xgrammar":
            from vllm.v1.structured_output.backend_xgrammar import XgrammarBackend as GrammarBackend
        elif backend_name == "guidance":
            from vllm.v1.structured_output.backend_guidance import GuidanceBackend as GrammarBackend
        else:
            return f"structured-output backend {backend_name!r} is not covered by the preflight"
    except ImportError as exc:
        return f"this vLLM lacks an API the preflight uses ({exc})"
    backend = GrammarBackend(vllm_config, tokenizer=tokenizer, vocab_size=model_config.get_vocab_size())
    props = schema.get("properties", {})
    keys = list(schema.get("required") or props)
    # a valid answer (the first option of every enum) and one outside the schema
    valid = json.dumps({k: (props[k].get("enum") or ["x"])[0] for k in keys}, ensure_ascii=False)
    invalid = json.dumps({k: "not-an-option" for k in keys}, ensure_ascii=False)
    grammar = backend.compile_grammar(StructuredOutputOptions.JSON, json.dumps(schema))
    ids = tokenizer.encode(valid, add_special_tokens=False)
    if not grammar.accept_tokens("preflight", ids):
        return f"{backend_name} grammar rejects the valid answer {valid}"
    if not grammar.accept_tokens("preflight", [tokenizer.eos_token_id]) or not grammar.is_terminated():
        return f"{backend_name} grammar does not end after the valid answer {valid}"
    grammar.reset()
    bad_ids = tokenizer.encode(invalid, add_special_tokens=False)
    if len(grammar.validate_tokens(bad_ids)) == len(bad_ids):
        return f"{backend_name} grammar accepts the answer outside the schema {invalid}"
    return None
