"""URLs as they may be shown (core.secrets.redact_url, redact_text): no credential of a URL reaches a
message, a log, MLflow, a trace, a stats file or a table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from socialbench.core import secrets
from socialbench.core.io import one_line
from socialbench.core.secrets import redact_text, redact_url, url_has_secret


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:hunter2@db:5432/c", "postgresql://***@db:5432/c"),
        ("http://token@host/v1", "http://***@host/v1"),
        (
            "postgresql+psycopg://db/c?sslmode=require&password=hunter2",
            "postgresql+psycopg://db/c?sslmode=require&password=***",
        ),
        ("https://h/s?q=1&api_key=k1&X-Amz-Signature=s", "https://h/s?q=1&api_key=***&X-Amz-Signature=***"),
        ("https://h/cb#access_token=t1&state=x", "https://h/cb#access_token=***&state=x"),
        ("http://u:p@h:1/v1?Token=t#frag", "http://***@h:1/v1?Token=***#frag"),
    ],
)
def test_user_info_and_secret_parameters_are_redacted(url, shown):
    assert redact_url(url) == shown and url_has_secret(url)


@pytest.mark.parametrize(
    "url", ["sqlite:///mlflow.db", "http://127.0.0.1:8000/v1", "https://h/search?q=key+words&count=5", "mlruns"]
)
def test_a_url_without_credentials_is_shown_as_it_is(url):
    assert redact_url(url) == url and not url_has_secret(url)


def test_a_url_that_urllib_cannot_parse_is_still_redacted():
    assert redact_url("postgresql://u:pw@db:notaport/c") == "postgresql://***@db:notaport/c"


def test_every_url_in_free_text_is_redacted():
    text = "connecting to http://a:b@h/v1 failed; then postgresql://db?password=p1 refused"
    assert redact_text(text) == "connecting to http://***@h/v1 failed; then postgresql://db?password=*** refused"


def test_every_error_line_is_redacted():
    assert "hunter2" not in one_line("cannot reach https://u:hunter2@h/x\nsee the log")


def test_a_whole_query_and_fragment_may_be_hidden_for_hosts_that_name_credentials_as_they_like():
    assert redact_url("https://u:p@h/a.zip?exp=1&proof=abc#x", whole_query=True) == "https://***@h/a.zip?***#***"
    assert redact_url("https://h/a.zip", whole_query=True) == "https://h/a.zip"
    assert redact_url("https://h/a.zip?proof=abc") == "https://h/a.zip?proof=abc"  # a name that is no credential


def test_a_download_link_hides_its_whole_query_and_fragment_whatever_their_names():
    presigned = "https://bucket.host/a.zip?st=2024&se=2025&sv=1&sr=b&x-host-proof=abc123#frag=t0k"
    assert redact_url(presigned, whole_query=True) == "https://bucket.host/a.zip?***#***"


def test_a_mirror_path_or_file_url_is_shown_as_it_is_with_a_whole_query_hidden():
    assert redact_url("/mirror/key=1/a.zip", whole_query=True) == "/mirror/key=1/a.zip"
    assert redact_url("file:///mirror/a.zip?x=1", whole_query=True) == "file:///mirror/a.zip?x=1"


def test_the_password_is_masked_in_a_database_url():
    assert redact_url("postgresql://u:hunter2@db:5432/c") == "postgresql://***@db:5432/c"


def test_masking_never_fails_on_a_port_that_is_no_number():
    assert redact_url("postgresql://u:pw@db:port/c") == "postgresql://***@db:port/c"


def test_no_other_module_defines_a_url_masking_function():
    src = Path(secrets.__file__).parents[1]
    pattern = re.compile(r"^\s*def \w*(mask|redact)\w*_ur[il]\b", re.M)
    others = [
        str(p.relative_to(src)) for p in src.rglob("*.py") if p.name != "secrets.py" and pattern.search(p.read_text())
    ]
    assert others == []
