"""socialbench: reproducible experiments for the MoCA and MeetingToM benchmarks."""

import os as _os

# Nothing calls home: switch MLflow telemetry off before anything imports mlflow.
_os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
_os.environ.setdefault("DO_NOT_TRACK", "true")

__version__ = "0.1.0"
