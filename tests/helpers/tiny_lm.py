"""A tiny, randomly initialised text-only causal LM (Llama architecture) built locally from a config
(nothing downloaded): the byte-level BPE tokenizer and chat template of :mod:`tests.helpers.tiny_vlm`,
saved as a normal transformers checkpoint folder (config.json, model.safetensors, tokenizer), the
layout ``socialbench weights convert`` writes. ``transformers serve`` serves it as it serves a real
folder. Its outputs are random text.

Used by tests/backends/test_transformers_serve.py, tests/test_real_server.py and perf/bench_serve.py.
"""

from __future__ import annotations

from pathlib import Path


def build_tiny_lm(
    out_dir: str | Path, *, hidden: int = 32, layers: int = 2, seed: int = 0, vocab_size: int = 400
) -> Path:
    """Write a tiny random LlamaForCausalLM checkpoint with its tokenizer and chat template to out_dir."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.helpers.tiny_vlm import build_tokenizer

    out = Path(out_dir)
    tokenizer = build_tokenizer(vocab_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
