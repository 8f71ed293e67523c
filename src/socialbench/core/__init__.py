"""The contracts every layer builds on. The benchmark registry is imported here so that the backends benchmarks
contribute (``Benchmark.backends``) are known to the backend registry whichever core module is imported first."""

from socialbench.core import benchmarks as _benchmarks  # noqa: F401  (registers the benchmarks' backend source)
