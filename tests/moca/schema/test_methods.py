"""spec.methods: the method settings checked when params load, without method or evaluation code."""

from __future__ import annotations

import subprocess
import sys

from socialbench.core.benchmarks import get_benchmark
from socialbench.moca.schema.methods import READS_RETRIEVAL, SETTINGS_CHECKS


def test_loading_params_imports_no_moca_method_or_evaluation_module():
    # every stage command loads params: MeetingToM's too, whose code deps hold no MoCA eval/ or methods/
    code = (
        "import sys; from socialbench.core.config import load_params; load_params('params.yaml');"
        "print(sorted(m for m in sys.modules if m.startswith(('socialbench.moca.eval.', 'socialbench.moca.methods'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_settings_checks_name_methods_of_moca():
    assert set(SETTINGS_CHECKS) | READS_RETRIEVAL <= set(get_benchmark("moca").method_names())


def test_no_retrieval_block_means_core_retrievals_none():
    from socialbench.core.retrieval import NONE
    from socialbench.moca.schema.methods import RetrievalSettings

    assert RetrievalSettings.parse(None).retriever == NONE
