"""MeetingToM methods: one module per method, each with ``METHOD`` (see socialbench.core.benchmarks)."""
