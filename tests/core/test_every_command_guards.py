"""Every command that writes goes through the one guard (:func:`socialbench.core.paths.check_io`)
before it reads anything: a command function calls it, itself or through a helper of its module."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "socialbench"
MODULES = [
    *sorted((SRC / "stages").glob("*.py")),
    SRC / "moca" / "cli.py",
    SRC / "meetingtom" / "cli.py",
    SRC / "media" / "cli.py",
]
#: Commands mounted as plain functions (not through a Typer app's ``command``), by module and name.
FUNCTIONS = {("book.py", "book")}
#: Commands that write no file (they print, serve or only read), by module and function name.
READ_ONLY = {
    ("params.py", "benchmarks"),
    ("ui.py", "ui"),
    ("cache.py", "stats"),
    ("cache.py", "explain"),
    ("prune.py", "prune_lock"),  # rewrites dvc.lock in place, refused when it leads out of the repository
    ("commit.py", "commit"),  # DVC rewrites dvc.lock in place: the same refusal (results.prune.dvc_lock)
    ("cli.py", "sources_cmd"),
    ("cli.py", "_group"),
}


def _commands(tree: ast.Module) -> list[ast.FunctionDef]:
    def is_command(dec: ast.expr) -> bool:
        return isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "command"

    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and any(is_command(d) for d in n.decorator_list)]


def _entry_points(module: Path, tree: ast.Module) -> list[ast.FunctionDef]:
    plain = [n for n in tree.body if isinstance(n, ast.FunctionDef) and (module.name, n.name) in FUNCTIONS]
    return _commands(tree) + plain


def _called_names(fn: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _guards(fn: ast.FunctionDef, functions: dict[str, ast.FunctionDef], seen: set[str]) -> bool:
    names = _called_names(fn)
    if "check_io" in names:
        return True
    seen.add(fn.name)
    return any(_guards(functions[n], functions, seen) for n in names if n in functions and n not in seen)


def test_every_command_that_writes_calls_the_guard():
    missing = []
    for module in MODULES:
        tree = ast.parse(module.read_text("utf-8"))
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        for fn in _entry_points(module, tree):
            if (module.name, fn.name) not in READ_ONLY and not _guards(fn, functions, set()):
                missing.append(f"{module.relative_to(SRC)}:{fn.name}")
    assert not missing, f"commands that write without check_io: {missing}"


def test_the_check_finds_the_commands():
    found = {fn.name for m in MODULES for fn in _entry_points(m, ast.parse(m.read_text("utf-8")))}
    assert {"infer", "score", "frames", "consolidate_cmd", "prune_outputs", "stats_cmd", "audio_cmd", "book"} <= found


#: Calls that write a file; a script that makes one checks its outputs with check_io first.
WRITERS = {"write_text", "write_bytes", "write_text_atomic", "write_bytes_atomic", "write_json", "write_jsonl"}


def _writes(tree: ast.Module) -> bool:
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        if name in WRITERS:
            return True
        modes = [a for a in n.args[1:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name == "open" and any(set(a.value) & set("wax+") for a in modes):
            return True
    return False


def test_every_python_script_that_writes_calls_the_guard():
    scripts = sorted((SRC.parents[1] / "scripts").glob("*.py"))
    missing = []
    for script in scripts:
        tree = ast.parse(script.read_text("utf-8"))
        if _writes(tree) and "check_io" not in _called_names(tree):
            missing.append(script.name)
    assert scripts and not missing, f"scripts that write without check_io: {missing}"


def test_the_script_check_sees_a_write():
    assert _writes(ast.parse("Path('x').write_text('y')")) and _writes(ast.parse("open('x', 'w')"))
    assert not _writes(ast.parse("open('x')"))
