"""What this project knows of other processes on its host (Linux ``/proc``), and which it may signal.

A record of a process keeps its pid and start time (:func:`process_started`), so a reused pid is not taken
for it; :func:`signal_refusal` refuses pids 0, -1, 1, the caller and its group. Without ``/proc`` nothing
can be proven, so nothing is signalled by a record."""

from __future__ import annotations

import os

#: Linux's default ``/proc/sys/kernel/pid_max`` on 64-bit hosts (its ceiling is 2**22).
DEFAULT_PID_MAX = 4_194_304


def proc_stat(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (state first); None where unknown."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError, UnicodeDecodeError, ValueError, OverflowError):
        return None


def process_started(pid: int) -> str | None:
    """Start time (clock ticks since boot, stat field 22); None where unknown."""
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
    """Why ``pid`` must not be signalled by a record, or None (then only once proven the process
    recorded): not an int, 1 or below, above pid_max, the caller, or in the caller's process group."""
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
