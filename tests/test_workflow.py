"""The Snakemake workflow itself: lint-clean, and params validated at load."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def snakemake(*args):
    return subprocess.run(["snakemake", *args], cwd=REPO, env=ENV, capture_output=True, text=True)


@pytest.mark.slow
def test_snakemake_lint_is_clean():
    proc = snakemake("--lint")
    assert "Congratulations, your workflow is in a good condition" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_unknown_params_key_stops_snakemake_naming_it():
    proc = snakemake("-n", "--config", "demo={n_tset: 3}")
    assert proc.returncode != 0
    assert "demo: Additional properties are not allowed ('n_tset' was unexpected)" in proc.stderr


@pytest.mark.slow
def test_bad_params_value_stops_snakemake_naming_it():
    proc = snakemake("-n", "--config", "seed=-1")
    assert proc.returncode != 0 and "seed: -1 is less than the minimum of 0" in proc.stderr


@pytest.mark.slow
def test_a_bad_configfile_is_named_in_the_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: -1\n")
    proc = snakemake("-n", "--configfile", str(bad))
    assert proc.returncode != 0
    assert f"error: params.yaml + --configfile {bad} is invalid:" in proc.stderr, proc.stderr
    assert f"seed: -1 is less than the minimum of 0 (set in --configfile {bad})" in proc.stderr
