"""Reading result files back for the stages after scoring (tables, track): score files ``{group: {metric: value, "n":
N}}`` and outcomes files, one object per instance; cheap checks tie them to the instances."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import Benchmark
from socialbench.core.errors import DataError
from socialbench.core.io import brief, read_file_bytes, write_json
from socialbench.core.paths import remove_inside


def read_score_files(
    benchmark: Benchmark, scores: list[Path], p: dict[str, Any], params: Path
) -> dict[tuple[str, str], dict[str, Any]]:
    """{(model, method): scores} from score files, each checked by ``parse_scores``, then together."""
    entries = []
    for path in scores:
        data = read_file_bytes(path, "score file")  # missing, a folder or a FIFO: a DataError naming it
        entries.append((str(path), path.parent.name, path.stem, benchmark.eval.parse_scores(data, str(path))))
    return collect_scores(
        entries, {m: row_category(e) for m, e in p["models"].items()}, str(params), group_size=benchmark.group_size
    )


#: What the tables add to the category of a model declared text-only (``modalities: []``): it saw the text
#: (and transcript) of each instance, never its images, frames or video.
TEXT_ONLY = "text-only"


def row_category(entry: dict[str, Any]) -> str:
    """A model's category in table rows: params' ``category``, ``(text-only)`` when ``modalities: []``."""
    category = str(entry.get("category") or "")
    if entry.get("modalities") == [] and TEXT_ONLY not in category:
        return f"{category} ({TEXT_ONLY})" if category else TEXT_ONLY
    return category


def collect_scores(
    entries: list[tuple[str, str, str, dict[str, dict[str, Any]]]],
    categories: dict[str, str],
    params_source: str,
    group_size: Callable[[dict[str, Any]], int] | None = None,
) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """{(model, method): scores} from (source path, model, method, checked scores) entries; models must be in
    ``categories``, pairs unique, and files cover the same groups with the same sizes."""
    size = group_size or (lambda m: m["n"])
    out: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    first_source: dict[tuple[str, str], str] = {}
    ref: tuple[str, dict[str, Any]] | None = None
    for source, model, method, sc in entries:
        if model not in categories:
            raise DataError(
                source,
                f"model {model!r} (the score file's folder) is not under models: in {params_source};"
                f" known: {', '.join(categories)}",
            )
        if (model, method) in out:
            raise DataError(
                source, f"a second score file for {model}/{method} (the first is {first_source[(model, method)]})"
            )
        ns = {s: size(m) for s, m in sc.items()}
        if ref is None:
            ref = (source, ns)
        elif set(ns) != set(ref[1]):
            raise DataError(source, f"groups {sorted(ns)} differ from {sorted(ref[1])} in {ref[0]}")
        else:
            for s in sorted(ns):
                if ns[s] != ref[1][s]:
                    raise DataError(
                        source,
                        f"n = {ns[s]} differs from n = {ref[1][s]} in {ref[0]} (scored on other instances?)",
                        record=f"group {s!r}",
                        field="n",
                    )
        out[(model, method)] = sc
        first_source[(model, method)] = source
    return out


def run_metrics_files(headline: dict[str, Any]) -> dict[str, Any]:
    """The headline metrics ``{"<model>.<method>": metrics}`` as one file per run (`dvc metrics` prints a
    row per file), ``{"<model>/<method>.json": metrics}``; method names hold no dot, model names may."""
    out = {}
    for key, metrics in headline.items():
        model, sep, method = key.rpartition(".")
        if not sep or not model or not method:
            raise ValueError(f"headline key {key!r} is not <model>.<method>")
        out[f"{model}/{method}.json"] = metrics
    return out


def write_run_metrics(folder: Path, headline: dict[str, Any]) -> list[Path]:
    """Rewrite ``folder`` whole with :func:`run_metrics_files` (a dropped run leaves no file); returns them."""
    if folder.is_symlink() or folder.is_dir():
        remove_inside(folder, folder.parent)  # a link goes as a link, never followed
    written = []
    for rel, metrics in sorted(run_metrics_files(headline).items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, metrics)
        written.append(path)
    return written


# ---- outcomes files (issue 42, point 3.5) ----------------------------------------------------------
RESCORE = "rerun socialbench score"


def check_outcomes(
    rows: Sequence[dict[str, Any]],
    lines: Sequence[int],
    source: str,
    instance_ids: Sequence[str],
    sizes: Mapping[str, int],
    scores_source: str,
) -> None:
    """``rows`` (``lines[k]``: ``rows[k]``'s file line) against the instances' ids and the score file's ``sizes``."""
    if len(rows) != len(instance_ids):
        raise DataError(
            source, f"{len(rows)} outcome(s) for {len(instance_ids)} instances: written for other instances ({RESCORE})"
        )
    for row, line, iid in zip(rows, lines, instance_ids):
        if row.get("id") != iid:
            got = brief(repr(row["id"])) if "id" in row else "none"
            raise DataError(
                source,
                f"the outcome of {got} where the instances have {iid!r}: written for other instances ({RESCORE})",
                record=f"line {line}",
                field="id",
            )
        if not isinstance(row.get("group"), str):
            got = brief(repr(row["group"])) if "group" in row else "none"
            raise DataError(
                source, f"must be the instance's group (a string), got {got}", record=f"line {line}", field="group"
            )
    counts = Counter(row["group"] for row in rows)
    for group in sorted(set(counts) | set(sizes)):
        if counts.get(group, 0) != sizes.get(group, 0):
            raise DataError(
                source,
                f"{counts.get(group, 0)} outcome(s) in the group but {sizes.get(group, 0)} in the score file"
                f" {scores_source}: the two come from different scorings ({RESCORE})",
                record=f"group {group!r}",
                field="group",
            )


def value(row: dict[str, Any], path: str, ok: Callable[[Any], bool], want: str, source: str) -> Any:
    """The value at ``path`` (keys joined by dots) of an outcome row, which ``ok`` accepts; otherwise a
    DataError naming ``source``, the row's instance and the path (``want``: what it must be)."""
    v: Any = row
    for key in path.split("."):
        if not isinstance(v, dict) or key not in v:
            raise DataError(source, f"missing (must be {want})", record=f"instance {row.get('id')!r}", field=path)
        v = v[key]
    if not ok(v):
        raise DataError(
            source, f"must be {want}, got {brief(repr(v))}", record=f"instance {row.get('id')!r}", field=path
        )
    return v


def is_flag(v: Any) -> bool:
    return isinstance(v, bool)
