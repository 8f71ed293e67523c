"""toybench's one table: accuracy per (model, method) (test double)."""

from __future__ import annotations

from socialbench.core.benchmarks import ResultsHooks


class ToyResults(ResultsHooks):
    def tables(self, scores, params, instances=None, summaries=None):
        rows = [f"| {m} | {meth} | {sc['all']['accuracy']:.2f} |" for (m, meth), sc in sorted(scores.items())]
        md = "| model | method | accuracy |\n|---|---|---:|\n" + "\n".join(rows) + "\n"
        return {"accuracy.md": md}, {f"{m}.{meth}": sc["all"]["accuracy"] for (m, meth), sc in sorted(scores.items())}


HOOKS = ToyResults
