"""Tests mirror src/ (docs/architecture.md): every module of src/socialbench with logic has a test module
of the same name in the mirrored folder, ``tests/<folder>/test_<module>.py``, where its behaviours are
tested once. A package's ``__init__.py`` with logic is the module named after the package: its tests
are ``tests/<parent>/test_<package>.py`` or ``tests/<package>/test_<package>.py``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "socialbench"
TESTS = ROOT / "tests"

#: Modules without a test module of their own, each with why. Keep it short: a module here is a thin
#: stage entry point exercised only end to end.
WITHOUT_TEST_MODULE = {
    "stages/demo.py": "a stage entry point over each benchmark's demo writer; run end to end by tests/test_pipeline.py",
    "stages/serve.py": "a stage entry point: tests/backends/test_vllm_servers.py, tests/bad_input/ (serve)",
}


def has_logic(path: Path) -> bool:
    """A function, or a class with a method: constants, data classes without methods and re-exports
    are not logic."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return True
        if isinstance(node, ast.ClassDef) and any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in node.body
        ):
            return True
    return False


def modules_with_logic() -> list[str]:
    """Paths relative to src/socialbench, ``__main__.py`` aside (it only calls the CLI)."""
    return sorted(
        p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if p.name != "__main__.py" and has_logic(p)
    )


def test_modules(module: str) -> list[Path]:
    """Where the tests of ``module`` (relative to src/socialbench) may be."""
    rel = Path(module)
    if rel.name == "__init__.py":
        package = rel.parent
        return [TESTS / package.parent / f"test_{package.name}.py", TESTS / package / f"test_{package.name}.py"]
    return [TESTS / rel.parent / f"test_{rel.stem}.py"]


test_modules.__test__ = False  # a helper, not a test


def without_test_module() -> list[str]:
    return [m for m in modules_with_logic() if not any(p.is_file() for p in test_modules(m))]


def test_the_logic_check_tells_functions_from_constants(tmp_path):
    constants = tmp_path / "constants.py"
    constants.write_text('"""Names."""\nNAMES = ("a", "b")\n\n\nclass Point:\n    x: int = 0\n')
    function = tmp_path / "function.py"
    function.write_text("def f():\n    return 1\n")
    method = tmp_path / "method.py"
    method.write_text("class C:\n    def m(self):\n        return 1\n")
    assert (has_logic(constants), has_logic(function), has_logic(method)) == (False, True, True)


def test_every_module_with_logic_has_a_test_module():
    missing = [m for m in without_test_module() if m not in WITHOUT_TEST_MODULE]
    assert not missing, "modules with logic but no tests/<folder>/test_<module>.py:\n" + "\n".join(missing)


def test_the_list_of_modules_without_a_test_module_holds_only_such_modules():
    """An entry goes once its module has a test module, or is gone: the list cannot grow stale."""
    stale = sorted(set(WITHOUT_TEST_MODULE) - set(without_test_module()))
    assert not stale, f"remove from WITHOUT_TEST_MODULE (a test module exists or the module is gone): {stale}"


def test_every_entry_without_a_test_module_says_why():
    assert all(reason.strip() for reason in WITHOUT_TEST_MODULE.values())


#: The most lines a Python file under tests/ may have (issue 42, point 7): a longer one is split by
#: what it tests (as tests/bad_input/ is, by the classes docs/bad-input.md counts).
MAX_TEST_MODULE_LINES = 1000


def test_no_test_module_exceeds_a_thousand_lines():
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in sorted(TESTS.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_TEST_MODULE_LINES
    }
    assert not long, f"test modules over {MAX_TEST_MODULE_LINES} lines (split them): {long}"
