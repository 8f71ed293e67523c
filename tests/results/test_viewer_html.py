"""The viewer's row HTML (socialbench.results.viewer_html): the calls, and a method's trace section
drawn as blocks (titles, marks, folded inputs, escaped text) or, without a section, as a tree."""

from __future__ import annotations

from socialbench.core.traces import TracePass, TraceSection
from socialbench.results.viewer_html import calls_html, section_html
from tests.helpers.html_tree import parse


def test_a_stage_called_again_is_marked_as_a_rerun():
    calls = [
        {"round": r, "stage": s, "text": "{}", "finish_reason": "stop"}
        for r, s in enumerate(["observer", "checker", "observer", "checker", "checker"])
    ]
    heads = [d.text for d in parse(calls_html(calls)).find_all("div", "call-head")]
    assert [("rerun 1" in h, "rerun 2" in h) for h in heads] == [(False, False)] * 2 + [(True, False)] * 2 + [
        (False, True)
    ]


def test_a_failed_or_truncated_call_is_marked_with_its_error():
    calls = [
        {"round": 0, "stage": "answer", "text": "", "finish_reason": "error", "error": "HTTP 500"},
        {"round": 0, "stage": "answer", "text": "{", "finish_reason": "length"},
    ]
    root = parse(calls_html(calls))
    assert [("bad" in d.classes) for d in root.find_all("div", "call")] == [True, True]
    assert "error: HTTP 500" in root.text


SECTION = TraceSection(
    passes=(
        TracePass("observer · pass 1", body={"output": "Two people <em>argue</em>."}),
        TracePass("checker · pass 1", body={"output": "x"}, given={"caption": "c"}, marks=(("REJECTED", "bad"),)),
    ),
    rest={"retrieval": "none: answer from model prior"},
    title="method trace (2 stage passes)",
    title_marks=(("REJECTED", "bad"),),
)


def test_each_pass_of_a_section_is_its_own_block_titled_and_marked():
    root = parse(section_html({"any": 1}, SECTION))
    titles = [d.find_all("summary")[0].text for d in root.find_all("details", "stage")]
    assert titles == ["observer · pass 1", "checker · pass 1 REJECTED"]
    assert root.find_all("summary")[0].text.startswith("method trace (2 stage passes) REJECTED")


def test_what_a_pass_was_given_is_folded_and_the_rest_drawn_as_escaped_text():
    root = parse(section_html({"any": 1}, SECTION))
    (inputs,) = root.find_all("details", "inputs")
    assert "open" not in inputs.attrs and "c" in inputs.text
    assert root.find_all("em") == [] and "Two people <em>argue</em>." in root.text
    assert "none: answer from model prior" in root.text


def test_without_a_section_the_trace_is_a_tree_and_an_empty_trace_draws_nothing():
    root = parse(section_html({"stages": [{"stage": "a"}], "note": "<b>x</b>"}, None))
    assert root.find_all("details", "stage") == [] and root.find_all("b") == [] and "<b>x</b>" in root.text
    assert section_html({}, None) == "" and section_html(None, SECTION) == ""


def test_answers_under_each_order_are_the_same_only_when_every_field_is():
    from socialbench.results.viewer_html import same_answer

    def order(k, label):
        return {"order": k, "fields": [{"name": "label", "pred": label, "correct": None}], "correct": None}

    assert same_answer([order(0, "joy"), order(1, "joy")])
    assert not same_answer([order(0, "joy"), order(1, "anger")])


def test_one_order_draws_no_orders_table_and_markup_in_an_answer_stays_text():
    from socialbench.results.viewer_html import orders_html

    one = [{"order": 0, "fields": [{"name": "a", "pred": "x", "correct": True}], "correct": True}]
    assert orders_html(one) == "" and orders_html(None) == ""
    two = one + [{"order": 1, "fields": [{"name": "a", "pred": "<b>y</b>", "correct": False}], "correct": False}]
    html = orders_html(two)
    assert "&lt;b&gt;y&lt;/b&gt;" in html and "<b>" not in html
