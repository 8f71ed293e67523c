"""``--cpu-durations=N``: the N tests that took the most CPU time, and the CPU time of each xdist group.

pytest's own ``--durations`` times the wall clock, which on a loaded machine (this one runs other work
beside the tests) says more about the load than about the test. CPU time does not: each test's user and
system time of its worker process and of the child processes it waited for (``subprocess.run``: the
Snakemake, DVC and ``socialbench`` commands), setup and teardown included, so a module or session
fixture counts for the test that built it. Not counted: work done by daemons that are not the test's
children (slurmd's jobs, a PostgreSQL server, a server left running for the module until it is stopped).
The group totals show how the work is spread over the xdist groups (tests/conftest.py) and how much
of it is serial on one worker: the wall time of the test command cannot be shorter than its largest group
(the demo build counts for the group of the worker that built it).
"""

from __future__ import annotations

import resource

import pytest


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its waited-for children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def group_of(nodeid: str) -> str:
    """The xdist group pytest-xdist appends to a test's id under ``--dist loadgroup`` (else its module)."""
    return nodeid.rsplit("@", 1)[1] if "@" in nodeid else nodeid.split("::", 1)[0]


def summary(times: dict[str, float], n: int) -> list[str]:
    """The report's lines: the n costliest tests, then every group's total, both costliest first."""
    groups: dict[str, float] = {}
    for nodeid, seconds in times.items():
        groups[group_of(nodeid)] = groups.get(group_of(nodeid), 0.0) + seconds
    lines = [f"{seconds:8.2f}s cpu  {nodeid}" for nodeid, seconds in sorted(times.items(), key=lambda e: -e[1])[:n]]
    lines.append(f"--- CPU seconds per xdist group (total {sum(times.values()):.1f} s) ---")
    lines += [f"{seconds:8.2f}s cpu  {group}" for group, seconds in sorted(groups.items(), key=lambda e: -e[1])]
    return lines


def pytest_addoption(parser):
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="show the N tests that took the most CPU time (worker and waited-for children), and each group's",
    )


_START = pytest.StashKey[float]()
#: {test id: CPU seconds}, on the process that writes the report (the controller under xdist).
TIMES: dict[str, float] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.config.getoption("cpu_durations") is not None:
        item.stash[_START] = cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "teardown" and _START in item.stash:
        # user_properties travel with the report from an xdist worker to the controller
        outcome.get_result().user_properties.append(("cpu_s", cpu_seconds() - item.stash[_START]))


def pytest_runtest_logreport(report):
    for name, value in report.user_properties:
        if name == "cpu_s":
            TIMES[report.nodeid] = value


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("cpu_durations")
    if n is None or not TIMES or hasattr(config, "workerinput"):
        return
    terminalreporter.write_sep("=", f"slowest {n} tests by CPU time (worker and waited-for children)")
    for line in summary(TIMES, n):
        terminalreporter.write_line(line)
