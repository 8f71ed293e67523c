"""socialbench: reproducible experiments for the MoCA and MeetingToM benchmarks."""

import os as _os

# Nothing calls home: switch MLflow and Hugging Face telemetry off before anything imports them.
# (Downloading a model named in params stays possible; the run scripts and tests run offline.)
_os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
_os.environ.setdefault("DO_NOT_TRACK", "true")
_os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

__version__ = "0.1.0"
