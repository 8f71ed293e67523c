"""The secret rules in one place: which option names hold a secret (refused in params, never logged or
keyed), what an environment variable's NAME looks like, and what of a URL may be shown."""

from __future__ import annotations

import re
from typing import Any

#: Secret option names, compared by their words (split at separators and camelCase, lowercased): a name is a secret when
#: it IS one of these or its last word is one of SECRET_LAST_WORDS; a word elsewhere does not count ("stop_token_ids").
#: ``*_env`` names are checked by value (:func:`secret_fields`).
SECRET_NAMES = frozenset(
    (
        "key apikey api_key x_api_key token access_token auth_token auth secret password passwd pwd passphrase"
        " credential credentials authorization proxy_authorization bearer cookie cookies set_cookie"
    ).split()
)
SECRET_LAST_WORDS = frozenset(
    (
        "key apikey token secret password passwd pwd passphrase credential credentials authorization bearer"
        " cookie cookies"
    ).split()
)
#: Names that end like a secret but are request parameters (prompt-cache keys, special tokens).
NOT_SECRET_NAMES = frozenset(
    "prompt_cache_key cache_key bos_token eos_token pad_token unk_token sep_token cls_token mask_token".split()
)
#: What an environment variable's name looks like (the value of ``api_key_env`` and other ``*_env``).
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)  # "HFToken" -> "HF_Token"
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)  # "apiKey" -> "api_Key"
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_env_name_option(name: str) -> bool:
    """An option naming the environment variable of a secret (``api_key_env``)."""
    words = _words(str(name))
    return len(words) > 1 and words[-1] == "env" and is_secret_name("_".join(words[:-1]))


def is_secret_name(name: str) -> bool:
    """Whether an option called ``name`` would hold a secret."""
    words = _words(str(name))
    if not words or words[-1] == "env":
        return False
    joined = "_".join(words)
    if joined in NOT_SECRET_NAMES:
        return False
    return joined in SECRET_NAMES or words[-1] in SECRET_LAST_WORDS


def holds_secret(name: str, value: Any) -> bool:
    """Whether ``name: value`` writes a secret into params (a flag or null holds none)."""
    return is_secret_name(name) and not (value is None or isinstance(value, bool))


def bad_env_name(value: Any) -> bool:
    """Whether ``value`` cannot be an ``*_env`` option's value (a variable's NAME, or null)."""
    return value is not None and not (isinstance(value, str) and ENV_NAME.match(value))


def secret_fields(value: Any, where: str, model: str) -> list[str]:
    """Problems of the fields under ``where`` that hold a secret (their values never read out)."""
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


#: URL parameters whose name holds one of these are credentials: their values are never shown.
SECRET_PARAM_PARTS = ("pass", "pwd", "token", "secret", "key", "auth", "signature", "credential", "sig")
#: A URL in free text: a scheme, ``://``, then up to white space or a quote.
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_PARAM = re.compile(r"(^|[&;])([^=&;]*)=([^&;]*)")
REDACTED = "***"


def is_secret_param(name: str) -> bool:
    return any(part in name.lower() for part in SECRET_PARAM_PARTS)


def _redact_params(text: str) -> str:
    return _PARAM.sub(lambda m: f"{m[1]}{m[2]}={REDACTED}" if is_secret_param(m[2]) else m[0], text)


def redact_url(url: str, *, whole_query: bool = False) -> str:
    """``url`` as it may be shown: user info and credential parameters as ``***`` (``whole_query``: query and
    fragment hidden whole, local paths unchanged). The project's one URL redaction. Pure."""
    text = str(url)
    scheme_end = text.find("://")
    if whole_query and (scheme_end < 0 or text.lower().startswith("file:")):
        return text
    if whole_query:
        text, hsep, _ = text.partition("#")
        text, qsep, _ = text.partition("?")
        return redact_url(text) + (qsep and qsep + REDACTED) + (hsep and hsep + REDACTED)
    if scheme_end < 0:
        return _redact_params(text) if "=" in text and "?" not in text else _redact_query(text)
    start = scheme_end + 3
    end = min([at for at in (text.find(sep, start) for sep in "/?#") if at >= 0], default=len(text))
    netloc = text[start:end]
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    return text[:start] + netloc + _redact_query(text[end:])


def _redact_query(rest: str) -> str:
    """A URL's path, query and fragment with secret parameters redacted."""
    path, sep, query = rest.partition("?")
    if not sep:
        path, hsep, fragment = rest.partition("#")
        return path + (hsep + _redact_params(fragment) if hsep else "")
    query, hsep, fragment = query.partition("#")
    return path + "?" + _redact_params(query) + (hsep + _redact_params(fragment) if hsep else "")


def url_has_secret(url: str) -> bool:
    """Whether ``url`` carries a credential that :func:`redact_url` would hide."""
    return redact_url(url) != str(url)


def redact_text(text: str) -> str:
    """Free text with every URL in it redacted."""
    text = str(text)
    return text if "://" not in text else URL_IN_TEXT.sub(lambda m: redact_url(m[0]), text)
