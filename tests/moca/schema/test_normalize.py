"""How MoCA compares answer strings and prints percentages."""

from socialbench.moca.schema.normalize import normalize, percent


def test_answers_are_compared_lowercase_with_separators_as_single_spaces():
    assert normalize("  Self_Deprecating--Humor ") == "self deprecating humor"


def test_no_answer_stays_none():
    assert normalize(None) is None


def test_a_percentage_has_two_decimals_rounded_half_up_and_none_of_nothing():
    assert (percent(1, 8), percent(0, 0)) == (12.5, None)
    assert percent(2, 3) == 66.67
