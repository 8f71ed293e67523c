"""MoCA's methods: one module each, ``METHOD`` its class (found by ``Benchmark.method_names``)."""
