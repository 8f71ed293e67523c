#!/usr/bin/env python3
"""TEST DOUBLE (stand-in executable) for ``vllm serve``: parses the same command line, prints it,
and serves the OpenAI-compatible API on loopback with the loopback test server. No model runs.

  fake_vllm_serve.py serve MODEL --host H --port P [any other vllm serve flags]

Environment knobs for tests:
  FAKE_VLLM_STARTUP_S   seconds /health answers 503 before turning healthy (default 0.5)
  FAKE_VLLM_EXIT_CODE   exit with this code during startup instead of serving (a failed start)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.helpers.loopback import LoopbackServer  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "serve" or len(argv) < 2:
        print("usage: fake_vllm_serve.py serve MODEL [flags]", file=sys.stderr)
        return 2
    model, flags = argv[1], argv[2:]
    opts: dict[str, str] = {}
    i = 0
    while i < len(flags):
        if flags[i].startswith("--") and i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            opts[flags[i]] = flags[i + 1]
            i += 2
        else:
            opts[flags[i]] = "true"
            i += 1
    print("FAKE_VLLM_ARGS " + json.dumps({"model": model, "flags": opts}, sort_keys=True), flush=True)
    print(f"pid {os.getpid()}", flush=True)
    exit_code = os.environ.get("FAKE_VLLM_EXIT_CODE")
    server = LoopbackServer("openai", port=int(opts.get("--port", "0")))
    server.ready = False
    if exit_code is not None:
        print("fake startup failure: CUDA out of memory (simulated)", flush=True)
        return int(exit_code)

    def become_ready() -> None:
        time.sleep(float(os.environ.get("FAKE_VLLM_STARTUP_S", "0.5")))
        server.ready = True
        print("INFO: Application startup complete.", flush=True)

    threading.Thread(target=become_ready, daemon=True).start()

    def on_term(signum: int, frame: object) -> None:
        print("INFO: Shutting down (SIGTERM)", flush=True)
        threading.Thread(target=server.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    server.serve_forever()
    print("INFO: Finished server process", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
