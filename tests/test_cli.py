"""The ``socialbench`` command (src/socialbench/cli.py): errors are one line and exit 2, and every
command's options have help that lists their choices. Each stage's own behaviours are tested in
tests/stages/test_<stage>.py."""

import atexit
import contextlib
import gc
import sys
from pathlib import Path

import pytest

from socialbench.cli import APPS, app, command_help, load_command, main


def test_main_turns_errors_into_exit_2_without_traceback(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "i.jsonl"
    bad.write_text("{oops\n")
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "socialbench",
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(bad),
            "--predictions",
            str(bad),
            "--out",
            str(tmp_path / "s.json"),
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "i.jsonl, record line 1" in err and "Traceback" not in err


def test_a_command_skips_the_interpreters_closing_collections(monkeypatch, capsys):
    registered = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(sys, "argv", ["socialbench", "benchmarks"])
    with contextlib.suppress(SystemExit):
        main()
    assert "moca" in capsys.readouterr().out and gc.freeze in registered


def test_main_names_a_path_that_cannot_be_read_or_written(tmp_path, monkeypatch, capsys):
    missing = tmp_path / "nowhere" / "i.jsonl"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "socialbench",
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(missing),
            "--predictions",
            str(missing),
            "--out",
            str(tmp_path / "s.json"),
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {missing}" in err and "Traceback" not in err


def cli_options():
    """(command path, option) of every option of every `socialbench` command, sub-apps included."""
    import typer

    def walk(cmd, path, ctx):
        if hasattr(cmd, "list_commands"):  # a group: the root loads each command's module when asked for it
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                yield from walk(sub, [*path, name], sub.context_class(sub, parent=ctx, info_name=name))
        else:
            yield from ((" ".join(path), p) for p in cmd.params if getattr(p, "param_type_name", "") == "option")

    root = typer.main.get_command(app)
    return list(walk(root, [], root.context_class(root)))


def test_every_cli_option_has_help_text():
    options = cli_options()
    assert len(options) > 50  # the walk reached the sub-apps
    assert [f"{c} {p.opts[0]}" for c, p in options if not (p.help or "").strip()] == []


def test_benchmark_and_method_options_list_their_choices():
    from socialbench.core.benchmarks import get_benchmark

    # The packages the help was built from (tests may register the test-only toybench later).
    src = Path(__file__).resolve().parents[1] / "src" / "socialbench"
    names = sorted(p.name for p in src.iterdir() if (p / "benchmark.py").is_file())
    methods = [m for n in names for m in get_benchmark(n).method_names()]
    for cmd, opt in cli_options():
        if opt.name == "benchmark":
            assert all(n in opt.help for n in names), f"{cmd} --benchmark: {opt.help}"
        if opt.name == "method" and cmd != "score":  # score's --method is a check on the records, any name
            assert all(m in opt.help for m in methods), f"{cmd} --method: {opt.help}"


def test_moca_source_options_list_every_source():
    from socialbench.moca.cli import SOURCES_HELP
    from socialbench.moca.dataset.sources import SOURCE_NAMES

    assert SOURCES_HELP == ", ".join(SOURCE_NAMES)
    found = [p for c, p in cli_options() if c.startswith("moca ") and p.name == "source"]
    assert found and all(SOURCES_HELP in p.help for p in found)


@pytest.mark.parametrize(
    "option, choices",
    [
        ("source", ["demo", "ami"]),
        ("on_invalid", ["drop", "fail"]),
        ("on_error", ["skip", "fail"]),
        ("task", ["state", "you", "consensus"]),
    ],
)
def test_options_with_fixed_values_list_them(option, choices):
    found = [
        (c, p) for c, p in cli_options() if p.name == option and not (option == "source" and c.startswith("moca "))
    ]
    assert found and all(all(ch in p.help for ch in choices) for _, p in found), [(c, p.help) for c, p in found]


def test_every_command_comes_from_the_one_registry_type():
    assert set(command_help()) == set(APPS.names())
    assert load_command("no-such-command") is None
