"""The package's size: features are added by removing machinery, not by growing it (issue 42, point 8)."""

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
#: Lines of src/ (the test command checks it is ruff-formatted at line length 120), as `wc -l` counts them.
LIMIT = 35_000


def test_src_holds_fewer_than_35000_lines():
    lines = sum(p.read_bytes().count(b"\n") for p in SRC.rglob("*.py"))
    assert lines < LIMIT, f"src/ holds {lines} lines of Python, the limit is {LIMIT}"
