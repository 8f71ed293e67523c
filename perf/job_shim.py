"""The measuring shim of the perf scripts (bench_paper.py, bench_demo_path.py): a script put first on PATH
in place of a command (``socialbench``, ``dvc``) that runs the real command as its one child and appends
the job to the JSON-lines file named by $BENCH_JOB_LOG: its argv, start and end (epoch seconds), wall
and CPU time (``wait4``, children included), peak RSS of its largest process, and exit code."""

from __future__ import annotations

import sys
from pathlib import Path

#: The environment variable that names the jobs' log.
LOG_VAR = "BENCH_JOB_LOG"

SHIM = """#!{python}
# perf/job_shim.py's measuring shim: runs the real command as its one child, records the job.
import json, os, sys, time
real = {real!r}
t0, start = time.time(), time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(real, [real] + sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
rec = {{"prog": {prog!r}, "argv": sys.argv[1:], "start": t0, "end": time.time(),
        "wall_s": time.perf_counter() - start, "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_mb": ru.ru_maxrss / 1024, "rc": os.waitstatus_to_exitcode(status)}}
with open(os.environ[{log_var!r}], "a") as fh:
    fh.write(json.dumps(rec) + "\\n")
sys.exit(rec["rc"])
"""


def install(bindir: Path, commands: dict[str, str]) -> None:
    """Write a shim into ``bindir`` for each ``{name: real executable}``."""
    bindir.mkdir(parents=True, exist_ok=True)
    for prog, real in commands.items():
        (bindir / prog).write_text(SHIM.format(python=sys.executable, real=real, prog=prog, log_var=LOG_VAR))
        (bindir / prog).chmod(0o755)
