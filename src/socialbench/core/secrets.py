"""The secret rules, in one place: which option names hold a secret (and so are refused in
params, never logged and never part of a cache key), and what the NAME of an environment variable
looks like. Used by ``socialbench.core.config`` (params checked at load) and the API backends."""

from __future__ import annotations

import re
from typing import Any

# Secret option names. A name is compared by its words (split at separators and camelCase, lowercased),
# so "x-api-key", "apiKey" and "API_KEY" are the same name. A name is a secret when it IS one (api_key,
# token, password, Authorization, ...) or when its last word is one (hf_token, client_secret,
# private_key); a word elsewhere in the name does not make it one ("stop_token_ids",
# "max_tokens_param", "keyframe_interval" are request parameters). A ``*_env`` name holds the NAME
# of an environment variable and is checked by its value (see :func:`secret_fields`).
SECRET_NAMES = frozenset(
    {
        "key",
        "apikey",
        "api_key",
        "x_api_key",
        "token",
        "access_token",
        "auth_token",
        "auth",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "authorization",
        "proxy_authorization",
        "bearer",
        "cookie",
        "cookies",
        "set_cookie",
    }
)
SECRET_LAST_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "authorization",
        "bearer",
        "cookie",
        "cookies",
    }
)
# Names that end like a secret but are request parameters (OpenAI's prompt-cache routing key, the
# tokenizer's special tokens).
NOT_SECRET_NAMES = frozenset(
    {
        "prompt_cache_key",
        "cache_key",
        "bos_token",
        "eos_token",
        "pad_token",
        "unk_token",
        "sep_token",
        "cls_token",
        "mask_token",
    }
)
#: What an environment variable's name looks like (the value of ``api_key_env`` and other ``*_env``).
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)  # "HFToken" -> "HF_Token"
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)  # "apiKey" -> "api_Key"
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_env_name_option(name: str) -> bool:
    """``api_key_env``, ``hf_token_env``...: an option that names the environment variable of a secret."""
    words = _words(str(name))
    return len(words) > 1 and words[-1] == "env" and is_secret_name("_".join(words[:-1]))


def is_secret_name(name: str) -> bool:
    """Whether an option called ``name`` would hold a secret (api_key, hf_token, Authorization, ...)."""
    words = _words(str(name))
    if not words or words[-1] == "env":
        return False
    joined = "_".join(words)
    if joined in NOT_SECRET_NAMES:
        return False
    return joined in SECRET_NAMES or words[-1] in SECRET_LAST_WORDS


def holds_secret(name: str, value: Any) -> bool:
    """Whether the option ``name: value`` writes a secret into params. A flag or null holds none
    (``use_auth_token: true`` means "use the stored token")."""
    return is_secret_name(name) and not (value is None or isinstance(value, bool))


def bad_env_name(value: Any) -> bool:
    """Whether ``value`` cannot be the value of an ``*_env`` option: the NAME of an environment
    variable, or null (no variable: no key)."""
    return value is not None and not (isinstance(value, str) and ENV_NAME.match(value))


def secret_fields(value: Any, where: str, model: str) -> list[str]:
    """Fields under ``where`` that hold a secret (their values are never read out). An ``*_env``
    field of a secret (``api_key_env``) is the NAME of an environment variable, or null."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            field = f"{where}.{k}"
            if is_env_name_option(str(k)):
                if bad_env_name(v):
                    found.append(
                        f"{field}: must be the NAME of an environment variable (letters, digits, _),"
                        " or null, not the secret itself"
                    )
            elif holds_secret(str(k), v):
                found.append(
                    f"{field}: looks like a secret; secrets are never written into params (they would end"
                    " up in git, DVC and MLflow): put it in an environment variable and set"
                    f" {model}.options.api_key_env to that variable's NAME"
                )
            else:
                found += secret_fields(v, field, model)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += secret_fields(v, f"{where}[{i}]", model)
    return found
