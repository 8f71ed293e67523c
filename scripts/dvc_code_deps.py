#!/usr/bin/env python3
"""Write the code deps of every stage in dvc.yaml from the package layout (run after adding a module).

Each stage of a benchmark depends on the shared core (every module and folder of src/socialbench
that is no benchmark package) and on its own benchmark's package without methods/ and templates/;
a stage run per method (its command names ``${item.method}``) also on that method's module and
templates only, so editing one method's prompt reruns only its jobs. A benchmark whose runs may be
variants of a method (``Benchmark.run_variants``: MeetingToM's ``<method>__<ablation>``) has its
whole methods/ and templates/ folders instead, since a run's name is no module name. The data deps of a stage (paths
outside src/) are kept as written. Snakemake's rules take the same files as inputs (stage_code in
rules/common.smk), and tests/test_workflow.py checks that dvc.yaml is what this script writes.

  python scripts/dvc_code_deps.py          # rewrite dvc.yaml in place (comments kept)
  python scripts/dvc_code_deps.py --check  # exit 1 when dvc.yaml is not current
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedSeq

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "src" / "socialbench"
#: Files that cannot change an output (the package marker, the entry point, exception classes).
NOT_CODE_DEPS = {
    "__init__.py",
    "__main__.py",
    "errors.py",
    "py.typed",
    # the results book reads the stages' outputs and writes none of them (rules/book.smk)
    "book.py",
    "book_cli.py",
}
PER_METHOD = ("methods", "templates")


def benchmark_packages() -> list[str]:
    return sorted(p.name for p in PKG.iterdir() if (p / "benchmark.py").is_file())


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _entries(folder: Path) -> list[Path]:
    # Empty folders (a git checkout has none) and bytecode are no deps.
    return sorted(
        p
        for p in folder.iterdir()
        if p.name != "__pycache__"
        and not p.name.endswith(".egg-info")
        and not (p.is_dir() and not any(f.name != "__pycache__" for f in p.iterdir()))
    )


def core_deps() -> list[str]:
    benches = set(benchmark_packages())
    return [rel(p) for p in _entries(PKG) if p.name not in benches and p.name not in NOT_CODE_DEPS]


def package_deps(benchmark: str) -> list[str]:
    pkg = PKG / benchmark
    out = [rel(p) for p in _entries(pkg) if p.name not in PER_METHOD]
    if (pkg / "methods" / "__init__.py").is_file():
        out.append(rel(pkg / "methods" / "__init__.py"))
    return sorted(out)


def run_variants(benchmark: str) -> bool:
    sys.path.insert(0, str(REPO / "src"))
    from socialbench.core.benchmarks import get_benchmark_class

    return bool(getattr(get_benchmark_class(benchmark), "run_variants", False))


def code_deps(stage: str, cmd: str) -> list[str]:
    benchmark = next((b for b in benchmark_packages() if stage == b or stage.startswith(b + "_")), None)
    if benchmark is None:
        raise SystemExit(f"dvc.yaml stage {stage}: no benchmark package src/socialbench/<name>/ matches its name")
    deps = core_deps() + package_deps(benchmark)
    if "${item.method}" in cmd and run_variants(benchmark):
        folders = [f"src/socialbench/{benchmark}/methods", f"src/socialbench/{benchmark}/templates"]
        deps = [d for d in deps if not d.startswith(folders[0] + "/")] + folders
    elif "${item.method}" in cmd:
        deps += [
            f"src/socialbench/{benchmark}/methods/${{item.method}}.py",
            f"src/socialbench/{benchmark}/templates/${{item.method}}",
        ]
    return deps


def rewrite(text: str) -> str:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc = yaml.load(text)
    for name, stage in doc["stages"].items():
        body = stage.get("do", stage)  # foreach stages keep their definition under `do`
        old = body.get("deps") or CommentedSeq()
        data = [d for d in old if not str(d).startswith("src/")]
        new = CommentedSeq(data + code_deps(name, str(body.get("cmd", ""))))
        body["deps"] = new
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue()


def main(argv: list[str]) -> int:
    path = REPO / "dvc.yaml"
    text = path.read_text("utf-8")
    new = rewrite(text)
    if "--check" in argv:
        if new != text:
            print("dvc.yaml's code deps are not current: run python scripts/dvc_code_deps.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        path.write_text(new, "utf-8")
        print("dvc.yaml: code deps rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
