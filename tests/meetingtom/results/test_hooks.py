"""MeetingToM's results hooks (src/socialbench/meetingtom/results/hooks.py): the viewer's default rows (it
has no rows of its own); its tables are tested through the hook in tests/meetingtom/results/test_stability.py
and tests/stages/test_tables.py."""

from socialbench.core.benchmarks import get_benchmark


def test_it_leaves_the_viewers_rows_to_the_default():
    assert get_benchmark("meetingtom").results.viewer_rows([], {}, {}) is None
