"""``web``: a Brave Search API client (``GET /res/v1/web/search``), standard library only.

The key comes from the environment (``options.api_key_env``, default ``BRAVE_SEARCH_API_KEY``; missing: a
ConfigError before any call), goes only in ``X-Subscription-Token`` to the Brave API (:data:`KEY_HOSTS`) or a
host params name a variable for (docs/security.md, "Secrets"), never through a redirect, and is no part of the
identity, cache or messages. A ``Retry-After`` over ``max_wait_s`` stops the run (the quota is spent). The
request cache keeps each answer, so a rerun replays it."""

from __future__ import annotations

import email.utils
import html
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.core.hashing import sha256_json
from socialbench.core.retrieval import Passage, RetrievalError, Retriever, SearchesStopped
from socialbench.core.secrets import ENV_NAME, redact_url

BASE_URL = "https://api.search.brave.com/res/v1/web/search"
DEFAULT_KEY_ENV = "BRAVE_SEARCH_API_KEY"
#: The defaults of the waiting options (the ceilings of docs/security.md, "Waits").
TIMEOUT_S, MAX_RETRIES, MAX_WAIT_S, FAIL_AFTER = 30.0, 3, 60.0, 5
#: Options that change what comes back (the rest change how it is fetched): the identity's settings hash.
RESULT_OPTIONS = ("base_url", "country", "search_lang", "safesearch")
OPTIONS = {"api_key_env", *RESULT_OPTIONS, "timeout_s", "max_retries", "max_wait_s", "max_consecutive_failures"}
#: The API's most results per request.
MAX_COUNT = 20
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
#: A key variable's own hosts: its key goes elsewhere only when params name the variable for that host.
KEY_HOSTS = {DEFAULT_KEY_ENV: ("api.search.brave.com",)}
_TAG = re.compile(r"<[^>]+>")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect would carry the key's header to wherever it points: refused (an HTTPError)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001, ANN201
        return None


def passages_of(body: dict[str, Any], k: int) -> list[Passage]:
    """The web results of a search answer as passages, in the API's order (pure)."""
    results = ((body.get("web") or {}).get("results")) or []
    out: list[Passage] = []
    for r in results:
        if not isinstance(r, dict) or not isinstance(r.get("url"), str):
            continue
        text = " ".join(html.unescape(_TAG.sub("", str(r.get("description") or ""))).split())
        if not text:
            continue
        title = html.unescape(_TAG.sub("", str(r.get("title") or ""))).strip() or None
        out.append(Passage(doc_id=r["url"], text=text, title=title, source=r["url"]))
    return out[:k]


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` asks for (a number of seconds or an HTTP date), or None (pure)."""
    if not value or not value.strip():
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_detail(raw: bytes) -> str:
    """``": <the API's detail>"`` of an error answer, or ""."""
    try:
        err = json.loads(raw.decode("utf-8")).get("error") or {}
        detail = str(err.get("detail") or err.get("code") or "")[:200]
    except (ValueError, AttributeError, UnicodeDecodeError):
        return ""
    return f": {detail}" if detail else ""


class BraveSearchRetriever(Retriever):
    """The Brave Search API's web results (see the module docstring)."""

    def __init__(self, options: dict[str, Any] | None = None, where: str = "retrieval"):
        super().__init__(options, where)
        unknown = sorted(set(self.options) - OPTIONS)
        if unknown:
            raise ConfigError(f"{where}.options: unknown key(s) {unknown}; web takes {sorted(OPTIONS)}")
        env = self.options.get("api_key_env", DEFAULT_KEY_ENV)
        if not isinstance(env, str) or not ENV_NAME.match(env):
            raise ConfigError(f"{where}.options.api_key_env: must be the NAME of an environment variable, got a value")
        self.base_url = str(self.options.get("base_url", BASE_URL))
        url = urllib.parse.urlsplit(self.base_url)
        self.host = url.hostname or ""
        if not (url.scheme == "https" or (url.scheme == "http" and self.host in LOOPBACK)) or not self.host:
            raise ConfigError(
                f"{where}.options.base_url: {redact_url(self.base_url)!r} must be an https URL (http only to a"
                " loopback address)"
            )
        if "api_key_env" not in self.options and self.host.lower() not in KEY_HOSTS[DEFAULT_KEY_ENV]:
            raise ConfigError(
                f"{where}.options.base_url: {self.host} is not the Brave Search API, and the key of {DEFAULT_KEY_ENV}"
                f" goes only there; name the variable that holds the key for {self.host} in"
                f" {where}.options.api_key_env"
            )
        if self.options.get("safesearch", "moderate") not in ("off", "moderate", "strict"):
            raise ConfigError(f"{where}.options.safesearch: one of off, moderate, strict")
        self.timeout_s = float(self.number_option("timeout_s", TIMEOUT_S, least=0.1))
        self.max_retries = int(self.number_option("max_retries", MAX_RETRIES, whole=True))
        self.max_wait_s = float(self.number_option("max_wait_s", MAX_WAIT_S))
        self.fail_after = int(self.number_option("max_consecutive_failures", FAIL_AFTER, whole=True, least=1))
        key = os.environ.get(env, "")
        if not key.strip():
            raise ConfigError(
                f"{where}: retriever web needs a Brave Search API key in the environment variable {env} (unset or"
                " empty); keys come from the environment only"
            )
        self._key = key.strip()
        self._opener = urllib.request.build_opener(_NoRedirect())
        self.attempts = 0

    def __repr__(self) -> str:  # never the key
        return f"BraveSearchRetriever(base_url={redact_url(self.base_url)!r})"

    def identity(self) -> dict[str, Any]:
        config = {k: self.options[k] for k in RESULT_OPTIONS if k in self.options}
        return {"retriever": self.name, "config_sha256": sha256_json(config), "corpus_sha256": None}

    def search(self, query: str, k: int) -> list[Passage]:
        if k < 1 or not query.strip():
            return []
        params: dict[str, Any] = {"q": query, "count": max(1, min(int(k), MAX_COUNT)), "text_decorations": "false"}
        params |= {opt: self.options[opt] for opt in ("country", "search_lang", "safesearch") if opt in self.options}
        headers = {"Accept": "application/json", "X-Subscription-Token": self._key}
        request = urllib.request.Request(f"{self.base_url}?{urllib.parse.urlencode(params)}", headers=headers)
        if urllib.parse.urlsplit(request.full_url).hostname != self.host:  # pragma: no cover (defensive)
            raise RetrievalError(f"web search: refusing to send the key to another host than {self.host}")
        for attempt in range(self.max_retries + 1):
            self.attempts += 1
            wait = min(self.max_wait_s, 2.0**attempt)
            try:
                with self._opener.open(request, timeout=self.timeout_s) as resp:
                    raw = resp.read()
                break
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc.read() or b"")
                if exc.code in (401, 403):
                    raise ConfigError(
                        f"{self.where}: the Brave Search API key was refused by {self.host} (HTTP {exc.code}{detail})"
                    ) from None
                if 300 <= exc.code < 400:
                    raise RetrievalError(
                        f"web search: {self.host} answered a redirect (HTTP {exc.code}), which is not followed"
                    ) from None
                after = retry_after_s(exc.headers.get("Retry-After") if exc.headers else None)
                if after is not None and after > self.max_wait_s and (exc.code == 429 or exc.code >= 500):
                    # waiting that long would hold the run's jobs (and a cluster allocation) for nothing
                    raise SearchesStopped(
                        f"web search: {self.host} answered HTTP {exc.code} and asks to wait {after:.0f} s"
                        f" (Retry-After), longer than {self.where}.options.max_wait_s ({self.max_wait_s:g} s):"
                        " the search quota is probably spent. Rerun later (searches finished before are in"
                        " the request cache), or raise max_wait_s to wait inside the run"
                    ) from None
                if exc.code != 429 and exc.code < 500 or attempt == self.max_retries:
                    raise RetrievalError(f"web search: HTTP {exc.code} from {self.host}{detail}") from None
                if after is not None:
                    wait = after
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                if attempt == self.max_retries:
                    reason = getattr(exc, "reason", exc)
                    raise RetrievalError(f"web search: {self.host} could not be reached ({reason})") from None
            time.sleep(wait)
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise RetrievalError(f"web search: the answer of {self.host} is not JSON") from None
        if not isinstance(body, dict):
            raise RetrievalError(f"web search: the answer of {self.host} is not a JSON object")
        return passages_of(body, k)
