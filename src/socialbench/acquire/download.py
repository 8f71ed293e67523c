"""Fetch one raw-source file over HTTP(S), or copy it from a local mirror (``file://`` or a path), safely: ``download``
resumes a ``dest.part`` (``Range``), retries, checks the sha256, then renames into place. URL credentials go as basic
auth, never to another host or a log. An unpinned file is recorded in a :class:`TrustStore` (``sources.lock``), so an
upstream change is refused (:class:`ChecksumMismatch`)."""

from __future__ import annotations

import base64
import contextlib
import email.utils
import errno
import hashlib
import http.client
import logging
import os
import re
import shutil
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from socialbench.core import secrets
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.core.io import parse_json_object, read_file_bytes, write_text_atomic

log = logging.getLogger(__name__)


DEFAULT_RETRIES = 5
DEFAULT_TIMEOUT = 60.0
DEFAULT_CHUNK_SIZE = 1 << 20
DEFAULT_BACKOFF = 1.0
MAX_BACKOFF = 60.0
USER_AGENT = "socialbench-acquire/1"

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)", re.I)
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)", re.I)
_HEX64 = re.compile(r"[0-9a-f]{64}")

# Indirection so tests can observe the backoff without waiting.
_sleep = time.sleep


class DownloadError(SocialbenchError):
    """A file could not be fetched (HTTP error, retries exhausted, bad URL)."""


class ChecksumMismatch(DataError):
    """The fetched bytes do not have the expected sha256 (nothing was left at the destination)."""

    def __init__(self, source: str, expected: str, actual: str, recorded_in: str | None = None):
        origin = f" (recorded on first use in {recorded_in}: the file changed since)" if recorded_in else ""
        super().__init__(
            source,
            f"sha256 mismatch: expected {expected}{origin}, got {actual}; the download was discarded",
        )


DEFAULT_TRUST_FILE = "sources.lock"


def _file_key(path: Path, base: str | os.PathLike[str] | None, *, relative_to_base: bool = False) -> str:
    """``file:`` and where ``path`` resolves (a relative ``path`` from the working folder, or from ``base``
    with ``relative_to_base``), written relative to ``base`` when given (as the repository sees it)."""
    if relative_to_base and base is not None and not path.is_absolute():
        path = Path(base) / path
    real = os.path.realpath(path)
    return "file:" + (os.path.relpath(real, os.path.realpath(base)) if base is not None else real)


class TrustStore:
    """sha256 of unpinned source files, recorded on first use and checked on every later use (a lock
    file: commit it with the code, delete an entry to accept a changed file)."""

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_TRUST_FILE):
        self.path = Path(path)

    @staticmethod
    def key(source: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
        """A file's key: a mirror file by where it resolves (relative to ``base``, the lock's folder); a URL
        without credentials, its query (a token, perhaps) only hashed."""
        if is_local(source):
            return _file_key(local_path(source), base)
        clean, _ = _split_credentials(str(source))
        parts = urllib.parse.urlsplit(clean)
        bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return bare + (f"?sha256:{hashlib.sha256(parts.query.encode()).hexdigest()[:16]}" if parts.query else "")

    def _key(self, source: str | os.PathLike[str]) -> str:
        return self.key(source, self.path.parent)

    def _load(self) -> dict[str, str]:
        """The lock's entries, mirror files keyed as :meth:`key` keys them now; conflicting hashes are refused."""
        if not self.path.exists():
            return {}
        data = parse_json_object(read_file_bytes(self.path), str(self.path), "{source: sha256}")
        out: dict[str, str] = {}
        spelled: dict[str, str] = {}
        for k, v in data.items():
            if not isinstance(v, str) or not _HEX64.fullmatch(v):
                raise DataError(str(self.path), f"not a sha256 (64 hexadecimal digits): {v!r}", field=k)
            key = (
                _file_key(Path(k[len("file:") :]), self.path.parent, relative_to_base=True)
                if k.startswith("file:")
                else k
            )
            if key in out and out[key] != v:
                raise DataError(
                    str(self.path),
                    f"names the file of {spelled[key]!r} again ({key[len('file:') :]}) with another sha256;"
                    " delete the entry that is wrong",
                    field=k,
                )
            out[key], spelled[key] = v, k
        return out

    def recorded(self, source: str | os.PathLike[str]) -> str | None:
        return self._load().get(self._key(source))

    def record(self, source: str | os.PathLike[str], sha256: str) -> None:
        import json

        data = self._load()
        data[self._key(source)] = sha256
        write_text_atomic(self.path, json.dumps(dict(sorted(data.items())), indent=2) + "\n")
        # a warning: the only record that this file was trusted unchecked (info is not shown by default)
        log.warning(
            "%s: no sha256 pinned; %s recorded on first use in %s (later uses are checked against it)",
            secrets.redact_url(str(source), whole_query=True),
            sha256,
            self.path,
        )


def verification(source: str | os.PathLike[str], sha256: str | None, trust: TrustStore | None) -> str:
    """How a file fetched now is checked: ``pinned`` (a sha256 given), ``recorded`` (against the hash
    recorded on its first use), ``first use`` (hashed and recorded now), ``none`` (no trust store)."""
    if sha256 is not None:
        return "pinned"
    if trust is None:
        return "none"
    return "recorded" if trust.recorded(source) is not None else "first use"


def recorded_verification(how: str) -> str:
    """A file's check as a versioned output states it: ``first use`` reads ``recorded`` (same bytes each run)."""
    return "recorded" if how == "first use" else how


def _trusted(source, sha256: str | None, trust: TrustStore | None) -> tuple[str | None, str | None]:
    """(the sha256 to check, the trust file it comes from when recorded)."""
    if sha256 is not None or trust is None:
        return sha256, None
    recorded = trust.recorded(source)
    return recorded, (str(trust.path) if recorded else None)


class _Retryable(Exception):
    """A transient failure: try again after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def is_local(source: str | os.PathLike[str]) -> bool:
    """True for a ``file://`` URL or a plain path (no ``scheme://``)."""
    return isinstance(source, os.PathLike) or str(source).lower().startswith("file:") or "://" not in str(source)


def local_path(source: str | os.PathLike[str]) -> Path:
    """The local file a ``file://`` URL or plain path names."""
    if isinstance(source, os.PathLike):
        return Path(source)
    s = str(source)
    if s.lower().startswith("file:"):
        parts = urllib.parse.urlsplit(s)
        if parts.netloc not in ("", "localhost"):
            raise DownloadError(f"{s}: a file:// URL must name a local file (host {parts.netloc!r})")
        return Path(urllib.request.url2pathname(parts.path))
    return Path(s)


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without user info, and the basic-auth header value it carried (if any)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    host = parts.netloc.rsplit("@", 1)[1]
    clean = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return clean, f"Basic {token}"


def _normalise_sha256(sha256: str | None) -> str | None:
    if sha256 is None:
        return None
    value = str(sha256).strip().lower().removeprefix("sha256:")
    if not _HEX64.fullmatch(value):
        raise SocialbenchError(f"sha256 {sha256!r} is not 64 hexadecimal digits")
    return value


def _part_path(dest: Path) -> Path:
    """``dest.part``: a link there is removed (never written through); a folder or FIFO is refused."""
    part = dest.with_name(dest.name + ".part")
    if part.is_symlink():
        log.warning("%s is a symbolic link; removed, not written through", part)
        part.unlink()
    elif part.exists() and not part.is_file():
        raise DownloadError(f"{part}: exists and is not a file (where the partial download of {dest.name} goes)")
    return part


def _open_part(part: Path, mode: str):
    """``part`` opened for writing (``wb``) or appending (``ab``); a link put there since is refused."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if mode == "ab" else os.O_TRUNC)
    try:
        fd = os.open(part, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DownloadError(f"{part}: is a symbolic link; a download never writes through one") from None
        raise
    return os.fdopen(fd, mode)


def _already_there(dest: Path, sha256: str | None, shown: str) -> bool:
    """True when ``dest`` exists and is the wanted file (so nothing is fetched)."""
    if not dest.exists():
        return False
    if not dest.is_file():
        raise DownloadError(f"{dest}: exists and is not a file (wanted {shown})")
    if sha256 is None:
        log.debug("%s exists (no checksum to compare); not fetched again", dest)
        return True
    actual = sha256_file(dest)
    if actual == sha256:
        log.debug("%s exists with the expected sha256; not fetched again", dest)
        return True
    log.warning("%s exists with sha256 %s, expected %s: fetching it again", dest, actual, sha256)
    return False


def _verify_and_place(part: Path, dest: Path, sha256: str | None, shown: str, recorded_in: str | None) -> None:
    if sha256 is not None:
        actual = sha256_file(part)
        if actual != sha256:
            part.unlink(missing_ok=True)
            raise ChecksumMismatch(shown, sha256, actual, recorded_in)
    with open(part, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(part, dest)


def copy_local(
    source: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    trust: TrustStore | None = None,
) -> Path:
    """Copy a mirror file to ``dest``, verified (``sha256``, else ``trust``) and atomic; a missing one: DataError."""
    src = local_path(source)
    dest = Path(dest)
    pinned = _normalise_sha256(sha256)
    sha256, recorded_in = _trusted(source, pinned, trust)
    if not _already_there(dest, sha256, str(src)):
        if not src.is_file():
            what = "is not a file" if src.exists() else "does not exist"
            raise DataError(str(src), f"mirror file {what} (wanted for {dest})")
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = _part_path(dest)
        try:
            with open(src, "rb") as fin, _open_part(part, "wb") as fout:
                shutil.copyfileobj(fin, fout, chunk_size)
            _verify_and_place(part, dest, sha256, str(src), recorded_in)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        log.info("copied %s -> %s", src, dest)
    if trust is not None and pinned is None and recorded_in is None:  # first use: recorded now
        trust.record(source, sha256_file(dest))
    return dest


class _NoRedirectToOtherScheme(urllib.request.HTTPRedirectHandler):
    """Follow redirects only between http and https (never to file:// or ftp://)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 - urllib API
        scheme = urllib.parse.urlsplit(newurl).scheme.lower()
        if scheme not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, f"redirect to a {scheme}: URL refused", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _fetch_once(
    opener: urllib.request.OpenerDirector,
    url: str,
    auth: str | None,
    part: Path,
    shown: str,
    timeout: float,
    chunk_size: int,
) -> None:
    """One request appending to (or restarting) ``part``; _Retryable for a transient failure."""
    offset = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
    if auth is not None:
        req.add_unredirected_header("Authorization", auth)
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = opener.open(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        try:
            if exc.code == 416 and offset:
                m = _UNSATISFIED_RANGE.search(exc.headers.get("Content-Range", "") if exc.headers else "")
                if m and int(m.group(1)) == offset:
                    log.debug("%s: %s already holds all %d bytes", shown, part, offset)
                    return
                log.info("%s: the server refused to resume at byte %d; restarting", shown, offset)
                part.unlink(missing_ok=True)
                raise _Retryable(f"HTTP 416 resuming at byte {offset}", retry_after=0.0) from None
            if exc.code in _RETRY_STATUS:
                raise _Retryable(f"HTTP {exc.code} {exc.reason}", _retry_after(exc.headers)) from None
            raise DownloadError(f"{shown}: HTTP {exc.code} {exc.reason}") from None
        finally:
            with contextlib.suppress(Exception):
                exc.close()
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise _Retryable(f"timed out after {timeout:g} s") from None
        raise _Retryable(f"connection failed: {reason}") from None

    with resp:
        status = resp.status
        length = resp.headers.get("Content-Length")
        length = int(length) if length and length.isdigit() else None
        if status == 206 and offset:
            m = _CONTENT_RANGE.search(resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != offset:
                part.unlink(missing_ok=True)
                raise _Retryable(
                    f"bad Content-Range {resp.headers.get('Content-Range')!r} for a resume at byte {offset}",
                    retry_after=0.0,
                )
            total = int(m.group(3)) if m.group(3) != "*" else (offset + length if length is not None else None)
            mode = "ab"
            log.info("%s: resuming at byte %d", shown, offset)
        elif status == 200:
            if offset:
                log.info("%s: the server ignored the Range request; restarting from byte 0", shown)
            offset = 0
            total = length
            mode = "wb"
        else:
            raise DownloadError(f"{shown}: unexpected HTTP status {status}")

        written = offset
        with _open_part(part, mode) as fh:
            while True:
                try:
                    chunk = resp.read(chunk_size)
                except (http.client.HTTPException, OSError) as exc:
                    fh.flush()
                    raise _Retryable(f"connection dropped after {written} bytes: {exc!r}") from None
                if not chunk:
                    break
                fh.write(chunk)
                written += len(chunk)
    if total is not None and written != total:
        if written > total:
            part.unlink(missing_ok=True)
        raise _Retryable(f"connection closed after {written} of {total} bytes")


def _download_http(
    url: str,
    dest: Path,
    sha256: str | None,
    retries: int,
    timeout: float,
    chunk_size: int,
    backoff: float,
    recorded_in: str | None = None,
) -> None:
    clean, auth = _split_credentials(url)
    shown = secrets.redact_url(url, whole_query=True)
    part = _part_path(dest)
    opener = urllib.request.build_opener(_NoRedirectToOtherScheme())
    dest.parent.mkdir(parents=True, exist_ok=True)

    resumed_from_old = part.exists() and part.stat().st_size > 0
    fresh_retry_done = False
    failures = 0
    best = part.stat().st_size if part.exists() else 0
    log.info("downloading %s -> %s", shown, dest)
    while True:
        try:
            _fetch_once(opener, clean, auth, part, shown, timeout, chunk_size)
        except _Retryable as exc:
            size = part.stat().st_size if part.exists() else 0
            if size > best:
                # Progress was kept: the budget is for failures in a row, not for the whole file.
                best, failures = size, 0
            failures += 1
            if failures > retries:
                raise DownloadError(
                    f"{shown}: giving up after {failures} failed attempts in a row (last: {exc}); "
                    f"{size} bytes kept in {part} for the next try"
                ) from None
            delay = min(MAX_BACKOFF, backoff * 2 ** (failures - 1))
            if exc.retry_after is not None:
                delay = min(MAX_BACKOFF, max(delay, exc.retry_after)) if exc.retry_after > 0 else 0.0
            log.warning("%s: %s; retry %d/%d in %.1f s", shown, exc, failures, retries, delay)
            if delay > 0:
                _sleep(delay)
            continue
        try:
            _verify_and_place(part, dest, sha256, shown, recorded_in)
        except ChecksumMismatch:
            if resumed_from_old and not fresh_retry_done:
                # The kept bytes may come from another version of the file: one clean try.
                log.warning("%s: checksum mismatch after resuming an old partial file; downloading it again", shown)
                fresh_retry_done = True
                resumed_from_old = False
                best = 0
                continue
            raise
        log.info("downloaded %s (%d bytes)", dest, dest.stat().st_size)
        return


def download(
    url: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    retries: int = DEFAULT_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    backoff: float = DEFAULT_BACKOFF,
    trust: TrustStore | None = None,
) -> Path:
    """Fetch ``url`` to ``dest`` (module docstring) and return ``dest``. ``retries``: failures in a row
    tolerated; ``backoff``: first delay, doubled per failure, capped at 60 s (Retry-After honoured)."""
    dest = Path(dest)
    sha256 = _normalise_sha256(sha256)
    if retries < 0 or timeout <= 0 or chunk_size <= 0 or backoff < 0:
        raise SocialbenchError("download: retries and backoff must be >= 0, timeout and chunk_size > 0")
    if is_local(url):
        return copy_local(url, dest, sha256=sha256, chunk_size=chunk_size, trust=trust)
    url = str(url)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    shown = secrets.redact_url(url, whole_query=True)
    if scheme not in ("http", "https"):
        raise DownloadError(f"{shown}: unsupported URL scheme {scheme!r} (http, https, file or a local path)")
    pinned = sha256
    sha256, recorded_in = _trusted(url, sha256, trust)
    if not _already_there(dest, sha256, shown):
        if sha256 is None and trust is None:
            log.info("%s: no sha256 given; the download is not verified", shown)
        _download_http(url, dest, sha256, retries, timeout, chunk_size, backoff, recorded_in)
    if trust is not None and pinned is None and recorded_in is None:
        trust.record(url, sha256_file(dest))
    return dest
