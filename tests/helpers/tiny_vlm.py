"""A tiny, randomly initialised vision-language model built locally from configs (nothing downloaded).

A LLaVA-architecture model (CLIP vision tower, projector, Llama decoder) with a byte-level BPE
tokenizer trained here on a small corpus, a chat template, and the LLaVA processor, saved as a normal
transformers checkpoint folder. The ``hf`` backend loads it through ``AutoProcessor`` and
``AutoModelForImageTextToText`` exactly as it loads a real model. Its outputs are random text.

Used by tests/backends/test_hf.py and perf/gpu_check.sh.
"""

from __future__ import annotations

from pathlib import Path

IMAGE_SIDE = 32
PATCH = 8
#: Placeholder tokens one image becomes: (32/8)^2 patches + the CLS state ("full" feature strategy).
TOKENS_PER_IMAGE = (IMAGE_SIDE // PATCH) ** 2 + 1

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    '{"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target1"}',
    '{"mechanism": "affective deception", "label": "angry", "subject": "subject2", "target": "target3"}',
    "Objectively classify the implicit social dynamics in the provided text-image or text-video pair.",
    "Return only a strict JSON object with exactly these four keys: mechanism, label, subject, target.",
    "The speaker about the manager: oh great, exactly what I needed today. Frames sampled at 0.50s.",
    "system user assistant scenario intent affection stance subject target slot image video transcript",
]


def build_tokenizer(vocab_size: int = 400, extra_corpus: tuple[str, ...] = ()):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>", "<image>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4 + list(extra_corpus), trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        chat_template=CHAT_TEMPLATE,
        padding_side="left",
    )


def build_tiny_vlm(
    out_dir: str | Path,
    *,
    hidden: int = 32,
    layers: int = 2,
    seed: int = 0,
    vocab_size: int = 400,
    extra_corpus: tuple[str, ...] = (),
    max_positions: int = 2048,
) -> Path:
    """Write a tiny random LLaVA checkpoint (model, processor, tokenizer, chat template) to out_dir.
    ``extra_corpus`` (e.g. the prompt templates) makes the tokenizer's pieces longer, prompts shorter."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    try:  # transformers 5: the Pillow backend (no torchvision needed)
        from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil as ImageProcessor
    except ImportError:  # transformers 4.x
        from transformers import CLIPImageProcessor as ImageProcessor

    out = Path(out_dir)
    tokenizer = build_tokenizer(vocab_size, extra_corpus)
    image_processor = ImageProcessor(
        size={"shortest_edge": IMAGE_SIDE}, crop_size={"height": IMAGE_SIDE, "width": IMAGE_SIDE}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH,
        vision_feature_select_strategy="full",
        num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )
    vision = CLIPVisionConfig(
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        image_size=IMAGE_SIDE,
        patch_size=PATCH,
        projection_dim=hidden,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        image_seq_length=TOKENS_PER_IMAGE,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def build_tiny_llm(
    out_dir: str | Path, *, hidden: int = 32, layers: int = 2, seed: int = 0, max_positions: int = 4096
) -> Path:
    """Write a tiny random text-only Llama checkpoint (LlamaForCausalLM, tokenizer, chat template), the
    kind of folder ``socialbench weights convert`` makes of SmolLM2, to out_dir: ``transformers serve``
    serves it as it serves a real folder (its answers are random text)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    tokenizer = build_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
