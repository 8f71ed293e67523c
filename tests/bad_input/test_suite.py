"""The bad-input suite as a whole (docs/bad-input.md): its cases, gathered from every module of this
package, counted by class in the docs, each class in one module, and every command held to three
cases or more."""

from __future__ import annotations

import importlib
import shutil
from collections import Counter
from pathlib import Path

from tests.bad_input.cases import REPO, Case


def case_modules() -> dict[str, list[Case]]:
    """The ``CASES`` table of every module of this package, by the module's file name."""
    out = {}
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        module = importlib.import_module(f"tests.bad_input.{path.stem}")
        if hasattr(module, "CASES"):
            out[path.name] = module.CASES
    return out


def all_cases() -> list[Case]:
    """Every case of the suite (the DVC scripts' table aside: it has a runner and a table of its own)."""
    return [case for cases in case_modules().values() for case in cases]


ALL_CASES = all_cases()


def test_the_suite_has_at_least_sixty_cases_across_the_commands():
    commands = {c.id.split("-", 1)[0] for c in ALL_CASES}
    assert len(ALL_CASES) >= 60 and len({c.id for c in ALL_CASES}) == len(ALL_CASES)
    assert {
        "infer",
        "score",
        "prepare",
        "tables",
        "track",
        "frames",
        "params",
        "taxonomy",
        "cache",
        "audio",
        "cut",
        "demo",
        "meetingtom",
    } <= commands


def test_the_suite_is_counted_by_class_in_the_docs():
    """Each class's row says how many cases it has and the one module that holds them all."""
    doc = (REPO / "docs" / "bad-input.md").read_text("utf-8")
    modules = {}
    for name, cases in case_modules().items():
        for kind, n in Counter(c.kind for c in cases).items():
            assert kind not in modules, f"class {kind!r} has cases in {modules[kind]} and {name}: keep it in one"
            modules[kind] = name
            row = f"| {kind} | {n} | `{name}` |"
            assert row in doc, f"docs/bad-input.md: the row of {kind!r} should begin {row}"
    assert f"| total | {len(ALL_CASES)} | |" in doc


def leaf_commands() -> list[tuple[str, ...]]:
    """Every command a user can run, as its words (``("moca", "annotate", "export")``): the cli's
    COMMANDS and SUB_APPS tables and the benchmarks' own commands, groups walked down to their leaves."""
    from socialbench.cli import COMMANDS, SUB_APPS, benchmark_apps, load_command

    out: list[tuple[str, ...]] = []

    def walk(cmd, words: tuple[str, ...]) -> None:
        if getattr(cmd, "commands", None):  # a group (typer's own click, not click's classes)
            for name, sub in cmd.commands.items():
                walk(sub, (*words, name))
        else:
            out.append(words)

    for name in [*COMMANDS, *SUB_APPS, *benchmark_apps()]:
        walk(load_command(name), (name,))
    return out


def test_every_command_has_at_least_three_cases(tmp_path, ws_template, monkeypatch):
    """Point 9: each command (subcommands included) is held to the rules by three cases or more; a
    case's command is read from the command line its setup returns."""
    leaves = leaf_commands()
    counts: Counter[tuple[str, ...]] = Counter()
    for k, case in enumerate(ALL_CASES):
        root = shutil.copytree(ws_template, tmp_path / str(k), symlinks=True)
        monkeypatch.chdir(root)
        argv = case.setup(root)
        matches = [c for c in leaves if tuple(argv[: len(c)]) == c]
        assert matches, f"{case.id}: {argv[:3]} is no command"
        counts[max(matches, key=len)] += 1
    short = {" ".join(c): counts[c] for c in leaves if counts[c] < 3}
    assert not short
