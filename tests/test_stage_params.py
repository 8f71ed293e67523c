"""Params keys, checked on the demo run: editing any params key a stage declares reruns the same stages
under Snakemake (`snakemake -n`) and under DVC (`dvc repro --dry`), because one declaration per stage
gives both the rule's rerun triggers and the DVC stage's params (rules/common.smk: `stage`;
docs/dvc-and-snakemake.md).

`dvc repro --dry` names the stages whose own deps or params changed, while `snakemake -n` names every
job that would run, those downstream of a rerun job too: the stages DVC names are compared together
with the stages downstream of them in DVC's graph (what `dvc repro` reruns when their outputs change).
One edit per key and per dry-run pair, in one copy of the session's demo run; keys whose edits touch the
same kinds of declaring stage (a model's inference stage standing for every model's, a MeetingToM
source's for both) are checked once, by the first key of each set: 27 pairs on the demo's params.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from socialbench.core.config import validate_params
from socialbench.core.errors import ConfigError
from tests.helpers.pipeline import run

#: Keys whose leaves cannot be edited generically (a flag flipped, a number moved, a list reordered, a
#: free-text label changed), each with an edit that stays valid and names no file the demo lacks: the
#: path edited and its new value.
EDITS: dict[str, tuple[str, Any]] = {
    "media.on_error": ("media.on_error", "fail"),
    "media.clip_preset": ("media.clip_preset", "fast"),
    "media.image_format": ("media.image_format", "jpg"),
    "media.mosaic_panel": ("media.mosaic_panel", [80, 60]),
    "meetingtom.ami.url": ("meetingtom.ami.url", "https://example.org/ami_public_manual.zip"),
    "meetingtom.ami.mirror": ("meetingtom.ami.mirror", None),
    "meetingtom.ami.sha256": ("meetingtom.ami.sha256", "0" * 64),
    "meetingtom.ami.modality": ("meetingtom.ami.modality", "both"),
    "meetingtom.annotation.demo": ("meetingtom.annotation.demo", None),  # not simulated: no sheets, gold says so
    "meetingtom.demo.clips_per_task": ("meetingtom.demo.clips_per_task", 2),
    "meetingtom.demo.modality": ("meetingtom.demo.modality", "utterances"),
    "meetingtom.dev_meetings": ("meetingtom.dev_meetings", ["ES9000b"]),
    "meetingtom.mining": ("meetingtom.mining", {"you": {"window": {"preferred_s": 51}}}),
    "meetingtom.subset": ("meetingtom.subset", {"n": 12, "seed": 1}),
    "meetingtom.tables": ("meetingtom.tables.prompting_models", ["minilm", "prior"]),
    "mlflow": ("mlflow.experiment", "socialbench-edited"),
    "moca.subset": ("moca.subset", {"n": 12, "seed": 1}),
    # the methods' order: the inference and score jobs take their runs sorted, so reordering reruns
    # neither under either tool (it reruns the stages whose outputs follow the order: tables, viewer)
    "moca": ("moca.methods", ["codar", "direct", "codar__wo_step2", "codar__wo_steps34", "codar__wo_step5"]),
}


def lookup(raw: dict, path: str) -> Any:
    value: Any = raw
    for part in path.split("."):
        value = value[part]
    return value


def assign(raw: dict, path: str, value: Any) -> dict:
    out = copy.deepcopy(raw)
    *parents, last = path.split(".")
    node = out
    for part in parents:
        node = node[part]
    node[last] = value
    return out


def _leaves(value: Any, path: str):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}")
    else:
        yield path, value


def _edited(value: Any) -> list[Any]:
    """Generic edits of a leaf, the plainest first: a flag flipped, a number moved, a list reordered."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1]
    if isinstance(value, float):
        return [round(value - 0.1 if value > 0.15 else value + 0.1, 6)]
    if isinstance(value, list) and list(reversed(value)) != value:
        return [list(reversed(value))]
    if isinstance(value, str):
        return [f"{value} (edited)"]
    return []


def leaves_of(raw: dict, key: str, declared: set[str]) -> list[tuple[str, Any]]:
    """(path, value) of the leaves at or under ``key`` that no other declared key holds or lies under."""
    others = [k for k in declared if k != key and not key.startswith(k + ".")]
    return [
        (p, v) for p, v in _leaves(lookup(raw, key), key) if not any(p == o or p.startswith(o + ".") for o in others)
    ]


def candidate_edits(raw: dict, key: str, declared: set[str]):
    """(path, value) edits of ``key``: its own entry in EDITS, else a leaf at or under it that no other
    declared key holds or lies under (so the edit touches this key's stages), the plainest leaf first."""
    if key in EDITS:
        yield EDITS[key]
        return
    others = [k for k in declared if k != key and not key.startswith(k + ".")]
    leaves = [
        (p, v) for p, v in _leaves(lookup(raw, key), key) if not any(p == o or p.startswith(o + ".") for o in others)
    ]
    for kinds in ((bool,), (int, float), (list,), (str,)):
        for path, value in leaves:
            if isinstance(value, kinds) and not (kinds == (int, float) and isinstance(value, bool)):
                for new in _edited(value):
                    yield path, new


def valid_edit(raw: dict, key: str, declared: set[str]) -> tuple[str, Any] | None:
    """The first edit of ``key`` that params validation accepts; None where there is none."""
    for path, value in candidate_edits(raw, key, declared):
        try:
            validate_params(assign(raw, path, value))
        except ConfigError:
            continue
        return path, value
    return None


def declared_keys(dvc: dict, raw: dict) -> dict[str, set[str]]:
    """{params key: the DVC stages (base names) declaring it}, from dvc.yaml (the declarations' keys that
    params.yaml holds); a templated key (${item.x}, ${key}) for each item of its matrix or foreach."""
    out: dict[str, set[str]] = {}
    for name, spec in dvc["stages"].items():
        body = spec.get("do", spec)
        items: list[dict[str, str]] = [{}]
        if "matrix" in spec:
            ((var, over),) = spec["matrix"].items()
            items = [{f"item.{var}": i} for i in lookup(raw, over.strip("${}")) or []]
        elif "foreach" in spec:
            items = [{"key": i} for i in lookup(raw, spec["foreach"].strip("${}")) or []]
        for key in body.get("params") or []:
            for item in items if "${" in key else [{}]:
                resolved = re.sub(r"\$\{([\w.]+)\}", lambda m, item=item: str(item[m.group(1)]), key)
                out.setdefault(resolved, set()).add(name)
    return out


def stage_kind(stage: str) -> str:
    """A stage's kind: the stages one declaration makes per model or per MeetingToM source are one."""
    return re.sub(r"_infer_.*", "_infer_*", re.sub(r"^meetingtom_(demo|ami)_", "meetingtom_*_", stage))


def touched_stages(keys: dict[str, set[str]], path: str) -> frozenset[str]:
    """The stages that declare the edited path, a key above it or a key under it."""
    return frozenset(
        s
        for k, stages in keys.items()
        if path == k or path.startswith(k + ".") or k.startswith(path + ".")
        for s in stages
    )


# ---- what each tool would rerun ----------------------------------------------------------------------


def snakemake_stages(work: Path, env: dict, dvc: dict) -> set[str]:
    """The DVC stages whose rules have a job in `snakemake -n` (rules of no DVC stage left out)."""
    out = run(["snakemake", "-n", "--cores", "1"], work, env)
    stage_rules = {
        name: spec.get("do", spec)["desc"].removeprefix("runs ").split(", ") for name, spec in dvc["stages"].items()
    }
    found: set[str] = set()
    rule = None
    for line in out.splitlines():
        if re.match(r"^(local)?rule \S+:$", line):
            rule = line.split(" ", 1)[1][:-1]
            wildcards: dict[str, str] = {}
            stages = [s for s, rules in stage_rules.items() if rule in rules]
            if len(stages) == 1:
                found.add(stages[0])
                rule = None
        elif rule and line.strip().startswith("wildcards:"):
            wildcards = dict(w.split("=", 1) for w in line.split(":", 1)[1].strip().split(", "))
            stages = [s for s, rules in stage_rules.items() if rule in rules]
            found |= {s for s in stages if any(f"_{v}_" in s for v in wildcards.values())}
            rule = None
    return found


def dvc_graph(work: Path, env: dict) -> dict[str, set[str]]:
    """{stage: the stages that read its outputs} (base names), from `dvc dag --dot`."""
    out = run(["dvc", "dag", "--dot"], work, env)
    edges: dict[str, set[str]] = {}
    for a, b in re.findall(r'"([^"]+)" -> "([^"]+)"', out):
        edges.setdefault(a.split("@")[0], set()).add(b.split("@")[0])
    return edges


def dvc_stages(work: Path, env: dict, graph: dict[str, set[str]]) -> set[str]:
    """The stages `dvc repro --dry` would run, with every stage downstream of them."""
    out = run(["dvc", "repro", "--dry"], work, env)
    todo = [s.split("@")[0] for s in re.findall(r"Running stage '([^']+)'", out)]
    found: set[str] = set()
    while todo:
        stage = todo.pop()
        if stage not in found:
            found.add(stage)
            todo += graph.get(stage, ())
    return found


@pytest.mark.slow
@pytest.mark.drift
def test_every_declared_params_key_reruns_the_same_stages_under_snakemake_and_dvc(demo_pipeline_copy):
    work, env, _ = demo_pipeline_copy
    params_file, dvc_file = work / "params.yaml", work / "dvc.yaml"
    original_params, original_dvc = params_file.read_text(), dvc_file.read_text()
    raw, dvc = yaml.safe_load(original_params), yaml.safe_load(original_dvc)
    keys = declared_keys(dvc, raw)
    assert {"moca.answer", "models.random", "meetingtom.mining", "mlflow", "moca.subset"} <= set(keys)
    edits: dict[frozenset[str], tuple[str, str, Any]] = {}
    no_edit = []
    for key in sorted(keys):
        found = valid_edit(raw, key, set(keys))
        if found is None:
            no_edit.append(key)
        else:
            edits.setdefault(frozenset(map(stage_kind, touched_stages(keys, found[0]))), (key, *found))
    # a key with no edit of its own is checked through a key of the same kinds of stage (or, wholly
    # made of declared keys, through theirs); any other needs an entry in EDITS
    kinds = {k: frozenset(map(stage_kind, touched_stages(keys, k))) for k in no_edit}
    assert not [k for k in no_edit if kinds[k] not in edits and leaves_of(raw, k, set(keys))], no_edit
    graphs: dict[str, dict[str, set[str]]] = {}
    drift = {}
    for key, path, value in edits.values():
        params_file.write_text(yaml.safe_dump(assign(raw, path, value), sort_keys=False))
        try:
            snake = snakemake_stages(work, env, yaml.safe_load(dvc_file.read_text()))  # rewrites dvc.yaml
            text = dvc_file.read_text()
            if text not in graphs:
                graphs[text] = dvc_graph(work, env)
            by_dvc = dvc_stages(work, env, graphs[text])
        finally:
            params_file.write_text(original_params)
            dvc_file.write_text(original_dvc)
        assert snake, f"editing {path} reruns nothing under Snakemake"
        if snake != by_dvc:
            drift[f"{key} (edited {path})"] = {
                "snakemake only": sorted(snake - by_dvc),
                "dvc only": sorted(by_dvc - snake),
            }
    assert not drift, drift
    assert len(edits) >= 20


def test_a_params_edit_is_found_for_a_number_a_flag_and_a_list_under_a_key():
    raw = {"seed": 1, "m": {"a": {"on": True, "xs": [1, 2]}, "b": 0.5}}
    assert list(candidate_edits(raw, "m", {"m", "m.b"})) == [("m.a.on", False), ("m.a.xs", [2, 1])]
    assert list(candidate_edits(raw, "m.b", {"m", "m.b"})) == [("m.b", 0.4)]


def test_declared_keys_resolve_a_matrix_item_and_a_stage_declaring_a_key_above_the_edit_is_touched():
    dvc = {
        "stages": {
            "a": {"matrix": {"source": "${m.sources}"}, "desc": "runs a", "params": ["m.sources.${item.source}"]},
            "b": {"desc": "runs b", "params": ["m"]},
        }
    }
    keys = declared_keys(dvc, {"m": {"sources": {"x": {}, "y": {}}}})
    assert keys == {"m.sources.x": {"a"}, "m.sources.y": {"a"}, "m": {"b"}}
    assert touched_stages(keys, "m.sources.x.n") == {"a", "b"}
    assert stage_kind("meetingtom_ami_instances") == stage_kind("meetingtom_demo_instances")
    assert stage_kind("moca_infer_codar-check") == stage_kind("moca_infer_random") != stage_kind("moca_tables")
