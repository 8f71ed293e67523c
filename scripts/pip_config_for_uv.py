"""Print, one per line, the uv options that carry pip's own configuration (its config files and
PIP_* variables): find-links, constraint files, index URLs. scripts/setup.sh passes them to
`uv pip install`, so uv resolves where pip would (e.g. a machine's local CPU wheels of torch)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

# pip's setting -> uv's option; each pip value may hold several space-separated entries
OPTIONS = {"find-links": "--find-links", "constraint": "--constraint", "index-url": "--index-url"}
MULTI = {"extra-index-url": "--extra-index-url"}


def pip_settings() -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    settings: dict[str, str] = {}
    for line in out.splitlines():  # e.g. global.find-links='/opt/wheels' or :env:.find-links='...'
        key, sep, value = line.partition("=")
        if sep:
            settings[key.rsplit(".", 1)[-1]] = value.strip().strip("'\"")
    for name in (*OPTIONS, *MULTI):  # the environment wins, as in pip
        env = os.environ.get("PIP_" + name.upper().replace("-", "_"))
        if env:
            settings[name] = env
    return settings


def uv_args(settings: dict[str, str]) -> list[str]:
    args: list[str] = []
    for name, option in {**OPTIONS, **MULTI}.items():
        for value in shlex.split(settings.get(name, "")):
            if value.startswith("file://") and not os.path.isdir(value[len("file://") :]):
                continue  # pip ignores a missing local index too
            if "://" not in value and not os.path.exists(value):
                continue
            args += [option, value]
    return args


if __name__ == "__main__":
    print("\n".join(uv_args(pip_settings())))
