"""What the project knows of other processes and which it may signal (core.processes)."""

from __future__ import annotations

import os
import subprocess

import pytest

from socialbench.core.processes import (
    pid_max,
    process_cmdline,
    process_group,
    process_started,
    signal_refusal,
)


@pytest.mark.parametrize("pid", [0, -1, 1, -4242])
def test_pids_of_one_and_below_are_refused(pid):
    assert "no process a record may name" in signal_refusal(pid)


def test_a_pid_beyond_the_hosts_largest_is_refused():
    assert "above this host's largest process id" in signal_refusal(2**40)
    assert "above" in signal_refusal(pid_max() + 1)


@pytest.mark.parametrize("pid", ["12", 3.0, True, None])
def test_what_is_not_a_whole_number_is_refused(pid):
    assert "is not a process id" in signal_refusal(pid)


def test_the_caller_and_its_process_group_are_refused():
    assert "is this process" in signal_refusal(os.getpid())
    assert "own process group" in signal_refusal(os.getpgrp())


def test_a_child_in_the_callers_group_is_refused_and_one_in_its_own_session_is_not():
    same = subprocess.Popen(["sleep", "30"])
    own = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert "own process group" in signal_refusal(same.pid)
        assert signal_refusal(own.pid) is None and process_group(own.pid) == own.pid
    finally:
        for proc in (same, own):
            proc.kill()
            proc.wait()


def test_a_process_is_known_by_its_start_time_and_command_line():
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert process_started(proc.pid) and process_started(proc.pid) != process_started(os.getpid())
        assert process_cmdline(proc.pid) == ["sleep", "30"]
    finally:
        proc.kill()
        proc.wait()
    assert process_started(proc.pid) is None and process_cmdline(proc.pid) is None


def test_impossible_pids_are_unknown_not_errors():
    assert process_started(2**40) is None and process_cmdline(-1) is None and process_group(2**40) is None
