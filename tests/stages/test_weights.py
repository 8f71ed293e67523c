"""``socialbench weights`` (src/socialbench/stages/weights.py): its options and one-line errors; the
conversion itself is tested in tests/core/test_weights.py and, on SmolLM2, tests/test_real_model.py."""

from socialbench.cli import app
from tests.stages.conftest import runner


def test_convert_needs_exactly_one_source(tmp_path):
    res = runner.invoke(app, ["weights", "convert", "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "give exactly one of --gguf FILE and --package NAME" in str(
        res.exception or res.output
    )


def test_a_missing_gguf_file_is_named(tmp_path):
    res = runner.invoke(app, ["weights", "convert", "--gguf", str(tmp_path / "no.gguf"), "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "no.gguf: no such file" in str(res.exception or res.output)
