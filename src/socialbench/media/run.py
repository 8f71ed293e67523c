"""Running ffmpeg and ffprobe: the executables, a command run with its failure as a
:class:`~socialbench.media.errors.MediaError`, and the tool's identity for cache keys and manifests."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
from functools import cache
from pathlib import Path

from socialbench.core.hashing import sha256_file
from socialbench.core.io import write_text_atomic
from socialbench.core.paths import DiskFull
from socialbench.core.tools import executable
from socialbench.media import errors as E
from socialbench.media.errors import MediaError

#: Output options (ffmpeg-python keyword arguments) that keep version strings, metadata and other
#: run-dependent bytes out of a written file, so the same input gives the same bytes.
BITEXACT = {"fflags": "+bitexact", "flags": "+bitexact", "map_metadata": "-1"}
#: swscale's flags wherever a frame is scaled or its pixel format converted: ``bitexact`` keeps its SIMD code
#: to the C code's rounding, which the CPU's instruction set otherwise changes (an RGB-to-YUV conversion
#: differed between two machines: docs/decisions/media-determinism.md).
SCALE_FLAGS = "bicubic+accurate_rnd+full_chroma_int+bitexact"
#: Global options of every ffmpeg command line: no banner, never read stdin, no progress lines.
GLOBAL_ARGS = ("-hide_banner", "-nostdin", "-nostats")


def ffmpeg_path() -> str:
    """The ffmpeg executable (the pinned static build, :func:`socialbench.core.tools.executable`)."""
    return executable("ffmpeg")


def ffprobe_path() -> str:
    """The ffprobe executable of the same build as :func:`ffmpeg_path`."""
    return executable("ffprobe")


def run_ffmpeg(
    args: list[str], path: str | Path, what: str, out: str | Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run an ffmpeg command line (stdout and stderr captured, no stdin); a non-zero exit becomes
    :func:`ffmpeg_failure` (``path`` the input, ``out`` the file written when there is one)."""
    proc = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0 or disk_full(proc.stderr):  # ffmpeg may exit 0 after a failed write
        raise ffmpeg_failure(proc.returncode, proc.stderr, path, what, out)
    return proc


#: What ffmpeg prints (strerror of ENOSPC, EDQUOT) when the disk it writes to is full.
_DISK_FULL = ("No space left on device", "Disk quota exceeded")


def disk_full(stderr: bytes) -> bool:
    """Whether ffmpeg says its disk is full (it can exit 0 when the failed write was the trailer)."""
    text = stderr.decode("utf-8", "replace")
    return any(marker in text for marker in _DISK_FULL)


def ffmpeg_failure(
    returncode: int, stderr: bytes, path: str | Path, what: str, out: str | Path | None = None
) -> Exception:
    """The error of a failed ffmpeg run: a full disk is a one-line ``DiskFull`` naming ``out`` (partial bytes removed),
    else a MediaError naming ``path``, the action and ffmpeg's last messages."""
    if disk_full(stderr):
        target = Path(out) if out is not None else Path(path)
        if out is not None and Path(out).is_file():  # a cut-off file is never left as if it were whole
            Path(out).unlink(missing_ok=True)
        return DiskFull(target, f"ffmpeg stopped while {what}, and nothing of it was kept")
    return MediaError(
        str(path), E.FFMPEG_FAILED, f"ffmpeg {describe_exit(returncode)} while {what}: {last_lines(stderr)}"
    )


def describe_exit(returncode: int) -> str:
    """How a process ended: "failed (exit status N)", or "crashed (SIGSEGV)" for a signal."""
    if returncode < 0:
        try:
            return f"crashed ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"crashed (signal {-returncode})"
    return f"failed (exit status {returncode})"


_LOG_PREFIX = re.compile(r"\[[^\]]*@ 0x[0-9a-fA-F]+\]\s*")


def clean_log_line(line: str) -> str:
    """An ffmpeg log line without its "[demuxer @ 0x55d...]" prefix (addresses differ from run to run)."""
    return _LOG_PREFIX.sub("", line).strip()


def last_lines(stderr: bytes, n: int = 3) -> str:
    """The last ``n`` non-empty lines of an ffmpeg/ffprobe stderr, cleaned, joined with " | ", or "no message"."""
    lines = [clean_log_line(ln) for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no message"


@cache
def ffmpeg_version() -> str:
    """First line of ``ffmpeg -version`` (recorded in manifests; not used as the cache key)."""
    out = subprocess.run([ffmpeg_path(), "-version"], capture_output=True, check=True).stdout
    return out.decode("utf-8", "replace").splitlines()[0].strip()


def tool_identity(memo_dir: str | Path | None = None) -> str:
    """sha256 of the ffmpeg executable (for cache keys), memoised in ``memo_dir/tool-ids.json`` by path, size, mtime."""
    binary = Path(ffmpeg_path()).resolve()
    st = binary.stat()
    stamp = f"{binary}|{st.st_size}|{st.st_mtime_ns}"
    memo: dict[str, str] = {}
    memo_file = Path(memo_dir) / "tool-ids.json" if memo_dir is not None else None
    if memo_file is not None and memo_file.is_file():
        with contextlib.suppress(OSError, ValueError):  # an unreadable memo is built again
            memo = json.loads(memo_file.read_text("utf-8"))
    if stamp in memo:
        return memo[stamp]
    digest = sha256_file(binary)
    if memo_file is not None:
        memo[stamp] = digest
        write_text_atomic(memo_file, json.dumps(memo, sort_keys=True, indent=1))
    return digest
