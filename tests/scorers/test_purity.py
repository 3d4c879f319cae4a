"""The scorer stays pure: standard library only, no harness, no processes, no filesystem."""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

import pytest

SCORERS = Path(__file__).parents[2] / "scorers"
SOURCES = sorted(SCORERS.rglob("*.py"))

#: Calls a pure scorer never makes: it reads only through the openers it is handed.
FORBIDDEN_CALLS = {"open", "realpath", "resolve", "exists", "is_file", "listdir", "scandir"}
FORBIDDEN_WORDS = ("subprocess", "realpath", "socket", "requests", "urllib")


def imported_roots(tree: ast.AST) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(SCORERS)))
def test_imports_only_the_standard_library_and_itself(source: Path) -> None:
    roots = imported_roots(ast.parse(source.read_text()))
    outside = {r for r in roots if r != "scorers" and r not in sys.stdlib_module_names}
    assert outside == set()
    assert not roots & {"harness", "os", "pathlib", "shutil", "io", "glob"}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(SCORERS)))
def test_makes_no_filesystem_calls(source: Path) -> None:
    called = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Call)
    }
    assert called & FORBIDDEN_CALLS == set()


def code_names(text: str) -> set[str]:
    """Every name the code uses (prose in docstrings and comments is not code: a docstring
    may speak of model requests)."""
    return {
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.NAME
    }


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(SCORERS)))
def test_never_mentions_process_or_network_modules(source: Path) -> None:
    names = code_names(source.read_text())
    assert [word for word in FORBIDDEN_WORDS if word in names] == []


def test_a_mention_in_code_is_caught() -> None:
    assert "socket" in code_names("import socket\n")
    assert "requests" not in code_names('"""model requests"""\n')


def test_modules_stay_small() -> None:
    # Keyed by the path below scorers/: several modules share a name (evidence.py).
    sizes = {
        str(source.relative_to(SCORERS)): len(source.read_text().splitlines()) for source in SOURCES
    }
    assert max(sizes.values()) <= 300, sizes
