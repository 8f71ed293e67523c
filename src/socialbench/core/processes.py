"""What this project knows of other processes on its host (Linux ``/proc``), and which of them it may
signal.

A record the project keeps of a process (a shared model server, a cache claim, a tracking run's
owner) holds its pid and its start time (:func:`process_started`), so a pid reused by the system is not
taken for the process recorded. Signalling is stricter (:func:`signal_refusal`): never pid 0, -1 or 1
(``kill(0)`` is the caller's own process group, ``kill(-1)`` every process the user owns), never the
caller itself or its process group, never a number that cannot be a pid on this host.

Where ``/proc`` is missing (not Linux) the start time and command line are unknown (None), so nothing
can be proven to be the process recorded and nothing is signalled by a record.
"""

from __future__ import annotations

import os

#: Linux's default ``/proc/sys/kernel/pid_max`` on 64-bit hosts (its ceiling is 2**22).
DEFAULT_PID_MAX = 4_194_304


def proc_stat(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (the state first), None where unknown (no such process, no
    ``/proc``)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError, UnicodeDecodeError, ValueError, OverflowError):
        return None


def process_started(pid: int) -> str | None:
    """When a process started (clock ticks since boot, ``/proc/<pid>/stat`` field 22), so a reused pid
    is not taken for the process recorded; None where unknown."""
    fields = proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else None


def is_zombie(pid: int) -> bool:
    """Whether the process has ended and waits for its parent to reap it (state Z or X)."""
    fields = proc_stat(pid)
    return bool(fields) and fields[0] in ("Z", "X")


def process_cmdline(pid: int) -> list[str] | None:
    """The command line a process was started with (``/proc/<pid>/cmdline``), None where unknown."""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError, OverflowError):
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0")[:-1]] if raw else None


def process_group(pid: int) -> int | None:
    """The process group of ``pid``, None when there is no such process."""
    try:
        return os.getpgid(pid)
    except (OSError, OverflowError, ValueError):
        return None


def pid_max() -> int:
    """The largest pid this host hands out (``/proc/sys/kernel/pid_max``)."""
    try:
        with open("/proc/sys/kernel/pid_max", encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return DEFAULT_PID_MAX


def signal_refusal(pid: object) -> str | None:
    """Why ``pid`` must not be signalled by a record (None: it may, once proven the process recorded).
    Refused: not a whole number, 1 or below (0 is the caller's group, -1 everything the user owns, 1
    init), above the host's largest pid, the caller itself, the caller's process group, or a process
    in the caller's process group (signalling its group would signal the caller)."""
    if not isinstance(pid, int) or isinstance(pid, bool):
        return f"{pid!r} is not a process id"
    if pid <= 1:
        return f"{pid} is no process a record may name (0: this process's group, -1: every process, 1: init)"
    if pid > pid_max():
        return f"{pid} is above this host's largest process id ({pid_max()})"
    if pid == os.getpid():
        return f"{pid} is this process"
    own_group = os.getpgrp()
    if pid == own_group or process_group(pid) == own_group:
        return f"{pid} is in this process's own process group"
    return None
