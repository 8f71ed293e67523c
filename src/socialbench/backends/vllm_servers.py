"""One ``vllm serve`` per model on a node, shared by every job of that model there.

Loading an open-weight checkpoint takes minutes and a model's GPUs, so the ``vllm`` backend does not
start a server per job: it asks this node-local registry for one. The registry is a folder
(:func:`runtime_dir`: ``SOCIALBENCH_SERVER_DIR``, else ``/tmp/socialbench-<uid>/servers``, which is
node-local) holding per server ``<key>.json`` (pid, port, command, log, the processes using it) and
``<key>.lock`` (an ``flock`` serialising attach, start and release). The key is a hash of the
``vllm serve`` command line without its port: model id, revision, tensor-parallel size, model length,
image limit, dtype, seed and extra arguments, so only jobs that would start the same server share it.

- **Attach or start.** Under the lock, a recorded server whose process lives and whose ``/health``
  answers is attached to (this process joins its users); otherwise this process starts one (the lock
  is held while it loads, so a second job waits for it instead of starting another) and owns it.
- **Release.** A job leaves the users when its backend closes (or at exit). The last user to leave
  stops the server, unless servers are kept (:data:`KEEP_ENV`, set by the Snakefile for a local
  run): then the pipeline's ``onsuccess``/``onerror`` hook (:func:`stop_servers`, or
  ``socialbench serve stop``) stops every idle one at its end, so a model whose jobs run one after
  another (``model_slots=1``, or its jobs on two benchmarks) loads once per pipeline.
- **The owner waits.** Under a cluster scheduler the server runs on its starter's allocation (its
  GPUs) and ends with that job, so the owner, when done, waits for the other users to leave before it
  stops the server and exits (its job keeps the allocation the server is using).

Users are recorded as ``pid:start time`` on this host, so a user that died without releasing (killed
job) is dropped at the next attach or release, and a reused pid is not taken for it.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import secrets
import signal
import socket
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from socialbench.core.cache import _process_started

log = logging.getLogger("socialbench.backends")

#: The folder of the node's server records (default: /tmp/socialbench-<uid>/servers).
DIR_ENV = "SOCIALBENCH_SERVER_DIR"
#: "1": servers outlive their last job until :func:`stop_servers` (the pipeline's end); set by the
#: Snakefile for a local run only (a cluster job's server ends with the job anyway).
KEEP_ENV = "SOCIALBENCH_KEEP_SERVERS"

_TRUE = {"1", "yes", "true", "on"}


class VllmServer(Protocol):
    """What the registry needs of a server process (``vllm_backend.VllmServer``)."""

    command: list[str]
    port: int
    log_path: Path
    proc: Any

    def start(self) -> None: ...

    def stop(self) -> None: ...


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(DIR_ENV):
        return Path(env[DIR_ENV])
    return Path(tempfile.gettempdir()) / f"socialbench-{os.getuid()}" / "servers"


def keep_servers(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(KEEP_ENV, "").strip().lower() in _TRUE


def server_key(command: list[str], port: int) -> str:
    """The identity of a server: its command line with the port left out (any free port will do)."""
    masked = list(command)
    for i, arg in enumerate(masked[:-1]):
        if arg == "--port" and masked[i + 1] == str(port):
            masked[i + 1] = "*"
    return hashlib.sha256(json.dumps(masked).encode()).hexdigest()[:16]


def _user() -> str:
    """One use of a server: ``pid:start time:token`` (a process may hold several, one per backend)."""
    pid = os.getpid()
    return f"{pid}:{_process_started(pid) or ''}:{secrets.token_hex(4)}"


def _alive(user: str) -> bool:
    """Whether the process of a ``pid:start[:token]`` of this host still runs (not a reused pid)."""
    pid, started = ([*user.split(":"), ""])[:2]
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    now = _process_started(int(pid))
    return not started or now is None or now == started


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2.0) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def stop_process_group(pid: int, started: str | None, grace_s: float = 30.0) -> None:
    """End a server that is not (or no longer) this process's child: SIGTERM to its process group
    (vLLM's workers too), SIGKILL after ``grace_s``. Nothing when the pid is gone or reused."""
    if not _alive(f"{pid}:{started or ''}"):
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when it is our child
        if not _alive(f"{pid}:{started or ''}") or _zombie(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    from socialbench.core.cache import _proc_stat

    fields = _proc_stat(pid)
    return bool(fields) and fields[0] == "Z"


@dataclass
class Lease:
    """This process's use of a shared server."""

    key: str
    port: int
    owner: bool
    user: str = ""  # this use's entry in the server's users
    server: VllmServer | None = None  # the process object, in the process that started it
    released: bool = False
    at_exit: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class SharedServers:
    """The node's registry of shared servers (see the module doc)."""

    def __init__(self, directory: Path | None = None, *, keep: bool | None = None, poll_s: float = 1.0):
        self.dir = runtime_dir() if directory is None else Path(directory)
        self.keep = keep_servers() if keep is None else keep
        self.poll_s = poll_s

    # ---- records -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.dir / f"{key}.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.dir / f"{key}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def _write(self, key: str, record: dict[str, Any]) -> None:
        tmp = self.dir / f"{key}.json.tmp"
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True), "utf-8")
        os.replace(tmp, self.dir / f"{key}.json")

    def _drop(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.dir / f"{key}.json").unlink()

    def records(self) -> list[dict[str, Any]]:
        """Every recorded server of the node, its dead users dropped from the listing. A record that is
        not one (cut short, or a field of the wrong kind) is a DataError naming its file and field: it
        cannot be stopped for the user, who removes it once its server is known to be gone."""
        from socialbench.core.errors import DataError

        if self.dir.exists() and not self.dir.is_dir():
            raise DataError(str(self.dir), "is a file, not a folder of server records (--dir takes a folder)")
        out = []
        for path in sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []:
            rec = self._read(path.stem)
            if not isinstance(rec, dict):
                raise DataError(
                    str(path),
                    "is not a server record (cut short, or not a JSON object); remove it once its server is gone",
                )
            for name, kind in (("key", str), ("pid", int), ("port", int)):
                if not isinstance(rec.get(name), kind) or isinstance(rec.get(name), bool):
                    raise DataError(
                        str(path),
                        f"expected {kind.__name__}, got {rec.get(name)!r}; remove it once its server is gone",
                        field=name,
                    )
            if rec:
                rec["users"] = [u for u in rec.get("users", []) if _alive(u)]
                rec["running"] = _alive(f"{rec['pid']}:{rec.get('pid_started') or ''}") and not _zombie(rec["pid"])
                out.append(rec)
        return out

    # ---- attach, start, release ----------------------------------------------------------------
    def acquire(self, server: VllmServer, model: str = "") -> Lease:
        """Attach to the running server with ``server``'s command line, or start ``server`` (and own it)."""
        key = server_key(server.command, server.port)
        with self._locked(key):
            rec = self._read(key)
            if rec is not None:
                pid, started = rec["pid"], rec.get("pid_started")
                if _alive(f"{pid}:{started or ''}") and not _zombie(pid) and healthy(rec["port"]):
                    user = _user()
                    rec["users"] = [u for u in rec.get("users", []) if _alive(u)] + [user]
                    self._write(key, rec)
                    log.info(
                        "vllm server for %s: attached to the running one on port %d (pid %d, log %s)",
                        model or key,
                        rec["port"],
                        pid,
                        rec.get("log_path"),
                    )
                    return self._leased(Lease(key, int(rec["port"]), owner=False, user=user))
                stop_process_group(pid, started, grace_s=10.0)  # a stale record: hung or gone
                self._drop(key)
            server.start()  # under the lock: a second job waits for this one instead of starting its own
            assert server.proc is not None
            atexit.unregister(server.stop)  # others may use it: released (below), not stopped, at exit
            user = _user()
            self._write(
                key,
                {
                    "key": key,
                    "model": model,
                    "pid": server.proc.pid,
                    "pid_started": _process_started(server.proc.pid),
                    "port": server.port,
                    "host": socket.gethostname(),
                    "command": server.command,
                    "log_path": str(server.log_path),
                    "started_at": time.time(),
                    "started_in": os.getcwd(),
                    "owner": user,
                    "users": [user],
                },
            )
        return self._leased(Lease(key, server.port, owner=True, user=user, server=server))

    def _leased(self, lease: Lease) -> Lease:
        """The lease, released at exit if the backend is never closed (a crash, a killed job's cleanup)."""
        lease.at_exit = functools.partial(self.release, lease)
        atexit.register(lease.at_exit)
        return lease

    def release(self, lease: Lease) -> None:
        """Leave the server's users; the last one out stops it (unless kept). The owner first waits
        for the others (its allocation holds the server)."""
        if lease.released:
            return
        lease.released = True
        if lease.at_exit is not None:
            atexit.unregister(lease.at_exit)
        waited = False
        while True:
            with self._locked(lease.key):
                rec = self._read(lease.key)
                if rec is None or int(rec["port"]) != lease.port:
                    return  # stopped (or replaced) meanwhile
                users = [u for u in rec.get("users", []) if u != lease.user and _alive(u)]
                if lease.owner and users and not self.keep:
                    if not waited:
                        log.info("vllm server on port %d: waiting for %d other job(s) using it", lease.port, len(users))
                        waited = True
                elif not users and not self.keep:
                    self._stop(lease, rec)
                    return
                else:
                    rec["users"] = users
                    self._write(lease.key, rec)
                    return
            time.sleep(self.poll_s)

    def _stop(self, lease: Lease | None, rec: dict[str, Any]) -> None:
        if lease is not None and lease.server is not None and lease.server.proc is not None:
            lease.server.stop()  # our child: stopped and reaped
        else:
            stop_process_group(int(rec["pid"]), rec.get("pid_started"))
        self._drop(rec["key"])
        log.info("vllm server for %s on port %s stopped", rec.get("model") or rec["key"], rec["port"])

    def stop(self, *, force: bool = False, started_in: str | None = None) -> list[dict[str, Any]]:
        """Stop the node's idle servers (``force``: those in use too; ``started_in``: only those started
        from this working tree). Returns the records of those stopped."""
        stopped = []
        for rec in self.records():
            if started_in is not None and rec.get("started_in") != started_in:
                continue
            with self._locked(rec["key"]):
                current = self._read(rec["key"])
                if current is None or current.get("pid") != rec["pid"]:
                    continue
                if not force and any(_alive(u) for u in current.get("users", [])):
                    continue
                self._stop(None, current)
                stopped.append(current)
        return stopped


def stop_servers(*, force: bool = False, started_in: str | None = None, directory: Path | None = None) -> int:
    """The pipeline's end (Snakefile ``onsuccess``/``onerror``): stop this node's idle servers; how many."""
    return len(SharedServers(directory).stop(force=force, started_in=started_in))
