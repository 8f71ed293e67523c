"""Fixtures shared by the core tests: small tmpfs disks that really fill up."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest


@pytest.fixture
def mount_disk(tmp_path):
    """mount_disk(size): a tmpfs of ``size`` (e.g. "64k") mounted for the test and unmounted after:
    a disk that really fills up. Skips where mounting is not permitted (needs root)."""
    mounted = []

    def mount(size: str) -> Path:
        folder = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
        folder.mkdir()
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here (needs root): {proc.stderr.strip() or proc.returncode}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.fixture
def small_disk(mount_disk):
    """A 64 KiB disk."""
    return mount_disk("64k")
