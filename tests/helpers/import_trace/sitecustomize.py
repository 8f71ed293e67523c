"""Test-only start-up hook (on PYTHONPATH during the session's demo build, tests/helpers/pipeline.py):
when SOCIALBENCH_IMPORT_TRACE names a folder, each `socialbench` command writes there, at exit, its
arguments and the socialbench source files it imported, so tests/test_stage_deps.py checks every job's
imports against its declared code deps without running any stage a second time."""

import os
import sys

_TRACE_DIR = os.environ.get("SOCIALBENCH_IMPORT_TRACE")

if _TRACE_DIR and os.path.basename(sys.argv[0] if sys.argv else "") == "socialbench":
    import atexit

    def _dump() -> None:
        import json

        files = sorted(
            {
                m.__file__
                for m in list(sys.modules.values())
                if (getattr(m, "__name__", "") or "").startswith("socialbench") and getattr(m, "__file__", None)
            }
        )
        path = os.path.join(_TRACE_DIR, f"{os.getpid()}-{id(files)}.json")
        with open(path, "w") as fh:
            json.dump({"argv": sys.argv[1:], "files": files}, fh)

    atexit.register(_dump)
