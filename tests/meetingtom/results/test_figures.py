"""Figure 4 (socialbench.meetingtom.results.figures): the gold label distribution per task, counted from the
instances and drawn with the same bytes every time."""

from socialbench.meetingtom.results.figures import distribution, label_distribution


def inst(i, task, answer, values, source="demo"):
    return {
        "id": f"i{i}",
        "task": task,
        "source": source,
        "answer": answer,
        "options": [{"label": "ABCD"[k], "value": v} for k, v in enumerate(values)],
    }


CONSENSUS = ["genuine_consensus", "pseudo_consensus", "no_consensus"]
INSTANCES = [
    inst(0, "task3_1", "A", CONSENSUS),
    inst(1, "task3_1", "A", CONSENSUS[::-1]),  # genuine, then no_consensus
    inst(2, "task3_1", "C", CONSENSUS[::-1]),
    inst(3, "task2_1", "B", ["A", "C", "D"], source="ami"),
    inst(4, "task3_2", ["A", "C"], ["A", "B", "C", "D"]),
    inst(5, "task2_1", "A", ["B", "C"]),
]


def test_counts_are_gold_values_per_task_and_source_in_option_order():
    d = distribution(INSTANCES)
    assert list(d) == ["task2_1", "task3_1", "task3_2"]
    assert d["task3_1"] == {"genuine_consensus": {"demo": 2}, "no_consensus": {"demo": 1}}
    assert d["task2_1"] == {"B": {"demo": 1}, "C": {"ami": 1}}
    assert d["task3_2"] == {"2": {"demo": 1}}  # two dissenters


def test_the_figure_is_the_same_bytes_every_time():
    a, b = label_distribution(INSTANCES), label_distribution(list(INSTANCES))
    assert a == b and a["figures/figure4_label_distribution.png"].startswith(b"\x89PNG")
    assert (
        a["figures/figure4_label_distribution.pdf"].startswith(b"%PDF")
        and b"CreationDate" not in a["figures/figure4_label_distribution.pdf"]
    )


def test_the_figure_data_is_written_as_csv():
    assert label_distribution(INSTANCES)["figures/figure4.csv"].splitlines()[:2] == [
        "task,value,source,count",
        "task2_1,B,demo,1",
    ]
