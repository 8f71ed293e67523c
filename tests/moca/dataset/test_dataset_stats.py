"""Dataset statistics in the style of Tables 1 and 11 and Figure 3."""

import json

from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.moca.dataset.dataset_stats import compute, figure_png, labels_table, table1, table11
from tests.conftest import make_instance


def instances():
    out = [make_instance(f"i{k}", "intent") for k in range(3)]
    out += [
        make_instance("a1", "affection", modality="video_text", media=["c.mp4"], domain="familial"),
        make_instance("s1", "stance", label="supportive", culture="east asian"),
    ]
    return out


def test_distributions_count_every_category_in_taxonomy_order(taxonomy):
    stats = compute(instances(), taxonomy)
    assert [(d["name"], d["count"], d["percent"]) for d in stats["scenario"]] == [
        ("affection", 1, 20.0),
        ("intent", 3, 60.0),
        ("stance", 1, 20.0),
    ]
    assert [d["name"] for d in stats["domain"]] == list(taxonomy.domains)
    assert {d["name"]: d["count"] for d in stats["culture"]}["east asian"] == 1
    assert stats["field_values"] == 35


def test_label_composition_is_given_within_each_scenario(taxonomy):
    labels = compute(instances(), taxonomy)["labels"]
    mock = next(r for r in labels if r["scenario"] == "intent" and r["label"] == "mock")
    assert (mock["count"], mock["percent_of_scenario"], mock["percent_of_all"]) == (3, 100.0, 60.0)
    assert [r["label"] for r in labels if r["scenario"] == "stance"] == taxonomy.label_names("stance")


def test_table11_crosses_scenario_and_modality_and_sums_to_the_total(taxonomy):
    t = table11(compute(instances(), taxonomy))
    assert "| Affection | 0 | 1 | 1 | 20.00 |" in t["md"] and "| All | 4 | 1 | 5 | 100.00 |" in t["md"]
    assert "Field values: 35 (7 fields x 5 instances)." in t["md"]
    assert t["tex"].count(r"\toprule") == 1 and t["csv"].splitlines()[0] == "Scenario,Image-text,Video-text,Total,%"


def test_table1_and_label_tables_render_in_three_formats(taxonomy):
    stats = compute(instances(), taxonomy)
    for t in (table1(stats), labels_table(stats)):
        assert set(t) == {"md", "csv", "tex"} and r"\bottomrule" in t["tex"]
    assert "| Scenario | Intent | 3 | 60.00 |" in table1(stats)["md"]


def test_the_figure_has_the_same_bytes_each_time(taxonomy):
    stats = compute(instances(), taxonomy)
    png = figure_png(stats)
    assert png.startswith(b"\x89PNG") and figure_png(stats) == png


def test_an_empty_benchmark_still_gives_tables_and_a_figure(taxonomy):
    stats = compute([], taxonomy)
    assert stats["scenario"][0]["percent"] is None and "| Total | instances | 0 | – |" in table1(stats)["md"]
    assert figure_png(stats).startswith(b"\x89PNG")


def test_the_stats_command_writes_every_table_and_the_figure(tmp_path):
    path = tmp_path / "moca.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in instances()))
    res = CliRunner().invoke(app, ["moca", "stats", "--instances", str(path), "--out-dir", str(tmp_path / "stats")])
    assert res.exit_code == 0, (res.output, res.exception)
    names = sorted(p.name for p in (tmp_path / "stats").iterdir())
    assert names == [
        "figure3.png",
        "labels.csv",
        "labels.md",
        "labels.tex",
        "stats.json",
        "table1.csv",
        "table1.md",
        "table1.tex",
        "table11.csv",
        "table11.md",
        "table11.tex",
    ]
