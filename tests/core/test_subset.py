"""core/subset.py: the stratified, reproducible sample of params <benchmark>.subset."""

import random

from socialbench.core.subset import allocate, stratified_subset


def _insts(sizes):
    return [{"id": f"{g}-{i}", "g": g} for g, n in sizes.items() for i in range(n)]


def test_allocation_is_proportional_and_sums_to_n():
    assert allocate({"a": 50, "b": 30, "c": 20}, 10) == {"a": 5, "b": 3, "c": 2}
    counts = allocate({"a": 7, "b": 7, "c": 7}, 10)
    assert sum(counts.values()) == 10 and sorted(counts.values()) == [3, 3, 4]


def test_each_stratum_keeps_its_share():
    chosen, info = stratified_subset(_insts({"a": 60, "b": 30, "c": 10}), 20, 1, lambda i: i["g"], "g")
    taken = {g: sum(1 for i in chosen if i["g"] == g) for g in "abc"}
    assert taken == {"a": 12, "b": 6, "c": 2}
    assert info.strata == {"a": [12, 60], "b": [6, 30], "c": [2, 10]} and info.taken == 20 and not info.whole


def test_the_sample_does_not_depend_on_the_file_order_and_keeps_its_order():
    insts = _insts({"a": 40, "b": 40})
    shuffled = insts[:]
    random.Random(0).shuffle(shuffled)
    one, _ = stratified_subset(insts, 10, 7, lambda i: i["g"])
    two, _ = stratified_subset(shuffled, 10, 7, lambda i: i["g"])
    assert sorted(i["id"] for i in one) == sorted(i["id"] for i in two)
    assert [i["id"] for i in two] == [i["id"] for i in shuffled if i in two]


def test_another_seed_draws_another_sample():
    insts = _insts({"a": 100})
    one, _ = stratified_subset(insts, 10, 1, lambda i: i["g"])
    two, _ = stratified_subset(insts, 10, 2, lambda i: i["g"])
    assert one != two


def test_a_subset_larger_than_the_data_is_the_whole_data():
    insts = _insts({"a": 3, "b": 2})
    chosen, info = stratified_subset(insts, 50, 1, lambda i: i["g"])
    assert chosen == insts and info.whole and "all 5 instances ran" in info.note()


def test_the_note_says_it_is_no_full_run():
    _, info = stratified_subset(_insts({"a": 30}), 5, 3, lambda i: i["g"], "g")
    assert "5 of 30 instances" in info.note() and "not full-run numbers" in info.note()
