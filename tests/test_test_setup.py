"""The test command's own set-up: pytest-xdist keeps a group's tests on one worker (tests/conftest.py
groups a module's tests, the demo run's tests and the service tests), so the session's demo run and
each module's fixtures are built once, not once per worker."""

import subprocess
import sys
import textwrap


def test_loadgroup_keeps_a_groups_tests_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(
        textwrap.dedent(
            """\
            import os
            import pytest

            pytestmark = pytest.mark.xdist_group("one")

            @pytest.mark.parametrize("n", range(6))
            def test_worker(n):
                print("WORKER", os.environ["PYTEST_XDIST_WORKER"])
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider", "-rP"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    workers = {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("WORKER ")}
    assert len(workers) == 1, proc.stdout[-2000:]
