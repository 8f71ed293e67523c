"""One model server per model on a node (``vllm serve``, ``transformers serve``), shared by every job of that model
there (docs/scale-out.md, "One model server per model"), and the server process itself.

Jobs attach to a node-local registry of ``<key>.json`` records and ``<key>.lock`` flocks, keyed by the command line
without its port. The last user to leave stops the server unless :data:`KEEP_ENV` keeps it. A process group is signalled
only when :func:`stale_reason` proves it is this project's server (docs/security.md, "Process control")."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialbench.backends.revision import hub_offline, resolve_revision
from socialbench.core.backend import check_requests
from socialbench.core.errors import ConfigError, DataError, MissingDependency, SocialbenchError
from socialbench.core.processes import (
    is_zombie,
    pid_max,
    process_cmdline,
    process_group,
    process_started,
    signal_refusal,
)
from socialbench.core.resources import external_server, server_url_problem

log = logging.getLogger("socialbench.backends")

#: The folder of the node's server records (default: /tmp/socialbench-<uid>/servers).
DIR_ENV = "SOCIALBENCH_SERVER_DIR"
#: "1": servers outlive their last job until :func:`stop_servers` (the pipeline's end); set by the
#: Snakefile for a local run only (a cluster job's server ends with the job anyway).
KEEP_ENV = "SOCIALBENCH_KEEP_SERVERS"

#: What a record's key looks like: a name (:func:`server_key` makes 16 hex digits), never a path.
KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
#: The files of a record ``<key>``: the record, its lock, the record being rewritten.
RECORD_SUFFIXES = (".json", ".lock", ".json.tmp")
#: The fields every record holds: a JSON object with none of them is another program's file, left alone.
RECORD_FIELDS = ("key", "pid", "port")
#: The prefix of vLLM's process titles (setproctitle rewrites /proc/<pid>/cmdline).
VLLM_TITLE = "VLLM::"


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
    return f"{pid}:{process_started(pid) or ''}:{secrets.token_hex(4)}"


def _alive(user: object) -> bool:
    """Whether the process of a ``pid:start[:token]`` of this host still runs (not a reused pid)."""
    pid_text, started = ([*str(user).split(":"), ""])[:2]
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid <= 0 or pid > pid_max():
        return False
    now = process_started(pid)
    if now is None:
        if os.path.isdir("/proc"):
            return False  # Linux: no such process
        try:  # no /proc: whether the pid is in use at all
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return not started or now == started


def is_server_command(command: object, port: object) -> bool:
    """Whether a recorded command line is a model server's: ``EXECUTABLE... serve MODEL ... --port PORT``."""
    if not isinstance(command, list) or len(command) < 3 or not all(isinstance(a, str) for a in command):
        return False
    has_port = any(command[i] == "--port" and command[i + 1] == str(port) for i in range(len(command) - 1))
    return "serve" in command[1:-1] and has_port


def runs_command(actual: list[str] | None, command: list[str]) -> bool:
    """Whether a process's command line is ``command``: its arguments the same, its executable the same
    file name (a script's interpreter comes first: ``python .../vllm serve ...``)."""
    if not actual or not command:
        return False
    tail = command[1:]
    if len(actual) <= len(tail) or actual[len(actual) - len(tail) :] != tail:
        return False
    head = actual[: len(actual) - len(tail)]
    return os.path.basename(command[0]) in {os.path.basename(a) for a in head}


def stale_reason(record: Mapping[str, Any]) -> str | None:
    """None when the record's process is provably the server this project started (pid, start time, a
    model server's command line or vLLM's title, leading its own process group); else why it is stale."""
    pid = record.get("pid")
    refusal = signal_refusal(pid)
    if refusal is not None:
        return f"pid {refusal}"
    assert isinstance(pid, int)
    now = process_started(pid)
    if now is None or is_zombie(pid):
        return f"no process with pid {pid} runs"
    started = record.get("pid_started")
    if not started:
        return f"the record holds no start time for pid {pid}, so it cannot be proven to be the server"
    if str(started) != now:
        return f"pid {pid} started at tick {now}, not {started}: another process has the pid now"
    command = record.get("command")
    if not is_server_command(command, record.get("port")):
        return "the recorded command is not a model server's (EXECUTABLE serve MODEL ... --port PORT)"
    actual = process_cmdline(pid)
    if not (runs_command(actual, command) or (actual and actual[0].startswith(VLLM_TITLE))):  # type: ignore[arg-type]
        return f"pid {pid} runs another command than the recorded server's"
    if process_group(pid) != pid:
        return f"pid {pid} does not lead its own process group, as a started server does"
    return None


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2.0) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class ServerFailed(SocialbenchError):
    """A model server did not come up (exited, or never became healthy)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class ServerProcess:
    """One model server process in its own session on a loopback port, waited for until ``/health`` answers."""

    def __init__(
        self,
        command: list[str],
        port: int,
        log_path: Path,
        startup_timeout_s: float,
        env: Mapping[str, str] | None = None,
        label: str = "model server",  # names it in messages
    ):
        self.label = label
        self.command = command
        self.env = env  # None: the job's own environment
        self.port = port
        self.log_path = log_path
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as logf:
            logf.write(f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(self.command)}\n".encode())
            logf.flush()
            # Own process group, so stop() also ends the workers a server spawns.
            self.proc = subprocess.Popen(
                self.command,
                stdout=logf,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=None if self.env is None else dict(self.env),
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                raise ServerFailed(
                    f"{self.label} exited with code {code} before becoming"
                    f" healthy; log {self.log_path}:\n{log_tail(self.log_path)}"
                )
            if healthy(self.port):
                log.info("%s up on port %d (log %s)", self.label, self.port, self.log_path)
                return
            time.sleep(0.25)
        self.stop()
        raise ServerFailed(
            f"{self.label} not healthy after {self.startup_timeout_s:.0f}s; log {self.log_path}:"
            f"\n{log_tail(self.log_path)}"
        )

    def stop(self, grace_s: float = 30.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        atexit.unregister(self.stop)


def stop_recorded(record: Mapping[str, Any], grace_s: float = 30.0) -> str | None:
    """SIGTERM a recorded server's process group, SIGKILL after ``grace_s``, each only while
    :func:`stale_reason` proves it is the server. None when signalled, else why the record is stale."""
    reason = stale_reason(record)
    if reason is not None:
        return reason
    pid, started = int(record["pid"]), str(record["pid_started"])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when it is our child
        if process_started(pid) != started or is_zombie(pid):
            return None
        time.sleep(0.1)
    if stale_reason(record) is None:  # proven again: the pid could have been reused meanwhile
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    return None


def is_foreign(record: object) -> bool:
    """Whether a parsed ``<name>.json`` is another program's JSON object (none of :data:`RECORD_FIELDS`)."""
    return isinstance(record, dict) and not any(name in record for name in RECORD_FIELDS)


def record_problem(record: object, stem: str) -> tuple[str | None, str] | None:
    """What makes a parsed record file ``<stem>.json`` no record (field or None, message), or None."""
    if not isinstance(record, dict):
        return None, "is not a server record (cut short, or not a JSON object); remove it once its server is gone"
    for name, kind in (("key", str), ("pid", int), ("port", int)):
        value = record.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return name, f"expected {kind.__name__}, got {value!r}; remove it once its server is gone"
    if not KEY.match(record["key"]) or record["key"] != stem:
        return "key", (
            f"{record['key'][:80]!r} is not this record's file name {stem!r} (record keys are names, never paths);"
            " remove the file"
        )
    refusal = signal_refusal(record["pid"])
    if refusal is not None:
        return "pid", f"refused: pid {refusal}; nothing was signalled, remove the file"
    users = record.get("users", [])
    if not isinstance(users, list) or not all(isinstance(u, str) for u in users):
        return "users", "expected a list of 'pid:start' strings; remove it once its server is gone"
    return None


@dataclass
class Lease:
    """This process's use of a shared server."""

    key: str
    port: int
    owner: bool
    user: str = ""  # this use's entry in the server's users
    server: ServerProcess | None = None  # the process object, in the process that started it
    released: bool = False
    at_exit: Callable[[], None] | None = field(default=None, repr=False)


class SharedServers:
    """The node's registry of shared servers (see the module doc)."""

    def __init__(self, directory: Path | None = None, *, keep: bool | None = None, poll_s: float = 1.0):
        default_dir = Path(tempfile.gettempdir()) / f"socialbench-{os.getuid()}" / "servers"
        self.dir = Path(directory or os.environ.get(DIR_ENV) or default_dir)
        if keep is None:
            keep = os.environ.get(KEEP_ENV, "").strip().lower() in {"1", "yes", "true", "on"}
        self.keep = keep
        self.poll_s = poll_s

    # ---- records -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        if not isinstance(key, str) or not KEY.match(key):  # a key is a file name in self.dir, never a path
            raise SocialbenchError(f"{self.dir}: {str(key)[:80]!r} is no server record key (a name, never a path)")
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.dir / f"{key}.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read(self, key: str) -> Any:
        return self._load(self.dir / f"{key}.json")

    def _write(self, key: str, record: dict[str, Any]) -> None:
        tmp = self.dir / f"{key}.json.tmp"
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True), "utf-8")
        os.replace(tmp, self.dir / f"{key}.json")

    def _drop(self, key: str) -> None:
        (self.dir / f"{key}.json").unlink(missing_ok=True)

    @staticmethod
    def _load(path: Path) -> object:
        """A record file parsed, or None when it cannot be read or parsed (cut short)."""
        try:
            return json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def foreign_files(self) -> list[str]:
        """Names in the folder that are no record, lock or record being written, or another program's JSON."""
        if not self.dir.is_dir():
            return []
        out = []
        for path in sorted(self.dir.iterdir()):
            name = path.name
            stem = next((name[: -len(s)] for s in RECORD_SUFFIXES if name.endswith(s)), None)
            if stem is None or not KEY.match(stem) or path.is_symlink() or not path.is_file():
                out.append(name + ("/" if path.is_dir() and not path.is_symlink() else ""))
            elif name.endswith(".json") and not name.endswith(".json.tmp") and is_foreign(self._load(path)):
                out.append(name)
        return out

    def records(self) -> list[dict[str, Any]]:
        """Every recorded server of the node, dead users dropped, with ``running`` and ``stale`` (why not, or
        None). A record that is not one is a DataError naming file and field; another program's file is skipped."""
        if self.dir.exists() and not self.dir.is_dir():
            raise DataError(str(self.dir), "is a file, not a folder of server records (--dir takes a folder)")
        out = []
        paths = sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []
        for path in paths:
            if not KEY.match(path.stem) or not path.is_file() or path.is_symlink():
                continue  # no record file (a link or a folder is none)
            rec = self._load(path)
            if is_foreign(rec):
                continue  # another program's JSON file: named by foreign_files, left alone
            problem = record_problem(rec, path.stem)
            if problem is not None:
                raise DataError(str(path), problem[1], field=problem[0])
            rec["users"] = [u for u in rec.get("users", []) if _alive(u)]
            rec["stale"] = stale_reason(rec)
            rec["running"] = rec["stale"] is None
            out.append(rec)
        return out

    # ---- attach, start, release ----------------------------------------------------------------
    def acquire(self, server: ServerProcess, model: str = "") -> Lease:
        """Attach to the running server with ``server``'s command line, or start ``server`` (and own it)."""
        key = server_key(server.command, server.port)
        with self._locked(key):
            rec = self._read(key)
            problem = record_problem(rec, key) if rec is not None else None
            if rec is not None and problem is not None:
                log.warning("server record %s: %s; replaced, nothing signalled", self.dir / f"{key}.json", problem[1])
                self._drop(key)
            elif rec is not None:
                stale = stale_reason(rec)
                if stale is None and healthy(rec["port"]):
                    user = _user()
                    rec["users"] = [u for u in rec.get("users", []) if _alive(u)] + [user]
                    self._write(key, rec)
                    log.info(
                        "model server for %s: attached to the running one on port %d (pid %d, log %s)",
                        model or key,
                        rec["port"],
                        rec["pid"],
                        rec.get("log_path"),
                    )
                    return self._leased(Lease(key, int(rec["port"]), owner=False, user=user))
                if stale is None:  # the server, provably, but it does not answer: hung
                    stop_recorded(rec, grace_s=10.0)
                else:
                    log.warning("server record %s is stale (%s): removed, nothing signalled", key, stale)
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
                    "pid_started": process_started(server.proc.pid),
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
        """Leave the server's users; the last one out stops it (unless kept); the owner waits for the others."""
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
                        log.info(
                            "model server on port %d: waiting for %d other job(s) using it", lease.port, len(users)
                        )
                        waited = True
                elif not users and not self.keep:
                    self._stop(lease, rec)
                    return
                else:
                    rec["users"] = users
                    self._write(lease.key, rec)
                    return
            time.sleep(self.poll_s)

    def _stop(self, lease: Lease | None, rec: dict[str, Any]) -> str | None:
        """Stop the record's server and remove the record; None, or why the record was stale."""
        stale = None
        if lease is not None and lease.server is not None and lease.server.proc is not None:
            lease.server.stop()  # our child: stopped and reaped
        else:
            stale = stop_recorded(rec)
        self._drop(rec["key"])
        name = rec.get("model") or rec["key"]
        if stale is None:
            log.info("model server for %s on port %s stopped", name, rec["port"])
        else:
            log.warning("server record %s is stale (%s): removed, nothing signalled", name, stale)
        return stale

    def stop(self, *, force: bool = False, started_in: str | None = None) -> StopResult:
        """Stop the node's idle servers (``force``: those in use too; ``started_in``: only those started
        from this working tree), and remove stale records without signalling anything."""
        result = StopResult()
        for rec in self.records():
            if started_in is not None and rec.get("started_in") != started_in:
                continue
            with self._locked(rec["key"]):
                current = self._read(rec["key"])
                if current is None or current.get("pid") != rec["pid"] or record_problem(current, rec["key"]):
                    continue  # replaced meanwhile
                if not force and stale_reason(current) is None and any(_alive(u) for u in current.get("users", [])):
                    continue  # in use
                stale = self._stop(None, current)  # a stale record is removed, nothing signalled
                if stale is None:
                    result.stopped.append(current)
                else:
                    result.stale.append((current, stale))
        return result


@dataclass
class StopResult:
    """What :meth:`SharedServers.stop` did: servers stopped, and stale records removed (with why)."""

    stopped: list[dict[str, Any]] = field(default_factory=list)
    stale: list[tuple[dict[str, Any], str]] = field(default_factory=list)


def stop_servers(*, force: bool = False, started_in: str | None = None, directory: Path | None = None) -> int:
    """The pipeline's end (Snakefile ``onsuccess``/``onerror``): stop this node's idle servers; how many."""
    try:
        return len(SharedServers(directory).stop(force=force, started_in=started_in).stopped)
    except SocialbenchError as exc:
        log.warning("shared model servers not stopped: %s", exc)
        return 0


def server_executable(exe: Any, where: str, backend: str, install: str) -> list[str]:
    """``options.executable`` (a string or an argument list) as a command line, its program found: on PATH
    or as a file. ``where``: the model's options key; ``install``: how to install the program."""
    import shutil

    command = list(exe) if isinstance(exe, (list, tuple)) else shlex.split(str(exe))
    if not command:
        raise ConfigError(f"{where}.executable is empty")
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise MissingDependency(
            f"backend '{backend}' needs the `{command[0]}` executable, which is not on PATH; install it with:"
            f" {install}, or set {where}.base_url to a server you already run"
        )
    return command


class NodeServerBackend:
    """A mixin before ``OpenAICompatBackend`` for a model behind this node's shared server, attached to or
    started only when there is work; ``self.server`` is None for a server the user runs."""

    server: ServerProcess | None
    lease: Lease | None
    servers: SharedServers
    #: What the owned server serves and what an unpinned revision is resolved from.
    model_source: str

    def node_url(self, name: str, options: Mapping[str, Any]) -> tuple[int | None, str]:
        """(the owned server's port, None for a server the user runs, and the client's base URL); a user's
        server URL that is none stops here, before anything else (the key rule depends on it)."""
        found = external_server(name, {"options": options}, os.environ)
        problem = server_url_problem(found[0]) if found else None
        if found and problem:
            raise ConfigError(f"{found[1]}: {problem}")
        self.external = bool(found and found[0])
        self.server = self.lease = None
        self.servers = SharedServers()
        self._revision: str | None = None
        self._resolved = False
        if self.external:
            return None, found[0]
        port = int(options.get("port") or free_port())
        return port, f"http://127.0.0.1:{port}/v1"

    def resolved_revision(self) -> str | None:
        """The pinned revision, else (owned server) what ``model_source`` resolves to (once)."""
        if self.spec.revision or self.external:
            return self.spec.revision
        if not self._resolved:
            self._revision = resolve_revision(self.model_source, hub_offline())
            self._resolved = True
            if self._revision is None:
                log.warning(
                    "models.%s: %s has no revision pinned and none could be resolved; pin models.%s.revision"
                    " to make the run reproducible",
                    self.spec.name,
                    self.model_source,
                    self.spec.name,
                )
        return self._revision

    def extra_args(self) -> list[str]:
        extra = self.spec.options.get("extra_args") or []
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise ConfigError(f"{self.where}.extra_args must be a list of strings")
        return extra

    def before_start(self) -> None:
        """Checks that need the model's files, made once, just before a server would start."""

    def start(self) -> None:
        """Attach to the node's server of this model, or start it and wait until it is healthy (once)."""
        if self.server is None or self.lease is not None:
            return
        self.before_start()
        self.lease = self.servers.acquire(self.server, self.spec.name)
        if self.lease.port != self.server.port:  # a server another job started, on its own port
            self.base_url = f"http://127.0.0.1:{self.lease.port}/v1"
            self._client = None

    def complete_many(self, requests, on_result) -> None:
        if requests:
            check_requests(self, requests)  # a part it cannot take stops the batch before the server starts
            self.start()
        super().complete_many(requests, on_result)

    def close(self) -> None:
        super().close()  # the API client first, then the server it talks to
        lease, self.lease = self.lease, None
        if lease is not None:
            self.servers.release(lease)
