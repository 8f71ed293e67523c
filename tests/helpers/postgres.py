"""One throwaway PostgreSQL cluster per test session (scripts/pg_services.sh), on loopback, for the
tests marked ``postgres``; skipped with the reason when it cannot be had (not root, no apt-get)."""

from __future__ import annotations

import atexit
import functools
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg_services.sh"


@dataclass(frozen=True)
class Cluster:
    dir: str
    port: int
    user: str
    password: str

    def url(self, db: str, driver: str = "postgresql") -> str:
        """A database's URL; the database is created (owned by the cluster's user) on first use."""
        env = {**os.environ, "PGSERVICE_PASSWORD": self.password}
        subprocess.run(["bash", str(SCRIPT), "start", self.dir, str(self.port), db, self.user], check=True, env=env)
        return f"{driver}://{self.user}:{self.password}@127.0.0.1:{self.port}/{db}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@functools.cache
def _start() -> Cluster | str:
    """The session's cluster, or why there is none."""
    if os.geteuid() != 0:
        return "PostgreSQL tests need root (to install postgresql and run it as the postgres user)"
    if not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"):
        if shutil.which("apt-get") is None:
            return "PostgreSQL is not installed and apt-get is unavailable"
        done = subprocess.run(["bash", str(SCRIPT), "install"], capture_output=True, text=True)
        if done.returncode != 0:
            return f"installing postgresql failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    cluster = Cluster(tempfile.mkdtemp(prefix="socialbench-pg-"), _free_port(), "sbtest", secrets.token_hex(12))
    cluster.url("postgres")  # initdb and start
    atexit.register(lambda: (subprocess.run(["bash", str(SCRIPT), "stop", cluster.dir]), shutil.rmtree(cluster.dir)))
    return cluster


def postgres_cluster() -> Cluster:
    got = _start()
    if isinstance(got, str):
        pytest.skip(got)
    return got
