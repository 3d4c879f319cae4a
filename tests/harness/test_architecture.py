"""The house keeps its shape: imports go one way down the flow, and nothing imports in a
circle (``docs/concepts/architecture.md``).

Every import counts, wherever it is written (module level, a function's lazy import, an
``if TYPE_CHECKING:`` block): a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "scorers", "sim_agent", "scripted_model")

#: The layers of harness/, lowest first: a module may import its own layer and those below.
#: (The flow: fixtures -> plan -> an item through its agent's adapter -> statistics ->
#: reports; ``run`` conducts a whole run, ``cli`` and ``selftest`` sit on top.)
LAYERS = (
    ("harness.errors", "harness.files", "harness.__init__"),
    ("harness.model",),
    ("harness.fixtures", "harness.pricing"),
    ("harness.agents",),
    ("harness.plan",),
    ("harness.item",),
    ("harness.executors", "harness.stats"),
    ("harness.report", "harness.export"),
    ("harness.runs",),
    ("harness.run",),
    ("harness.selftest",),
    ("harness.cli", "harness.ci", "harness.__main__"),
)
#: What each independent package may import besides itself (the scorer is pure and stands
#: alone; the test doubles never import the harness).
ALLOWED = {
    "scorers": set(),
    "sim_agent": set(),
    "scripted_model": set(),
    "harness": {"scorers"},
}
#: Modules only the CLI entry and the selftest may name (the test doubles are products of
#: their own; the core never imports them).
DOUBLES = ("sim_agent", "scripted_model")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    """Parsed once per session: four tests read the same import graph."""
    modules = {module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}
    return {
        name: frozenset(m for m in imports(path) if m in modules and m != name)
        for name, path in modules.items()
    }


def graph() -> dict[str, set[str]]:
    return {name: set(targets) for name, targets in _graph().items()}


def layer(module: str) -> int:
    for rank, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    if module == "harness":
        return 0
    raise AssertionError(f"{module} belongs to no layer of docs/concepts/architecture.md")


def test_every_harness_module_has_a_layer() -> None:
    for module in graph():
        if module.startswith("harness"):
            layer(module)


def test_imports_only_go_down_the_flow() -> None:
    wrong = []
    for module, targets in graph().items():
        if not module.startswith("harness"):
            continue
        for target in targets:
            if target.startswith("harness") and layer(target) > layer(module):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_packages_import_only_what_they_may() -> None:
    wrong = []
    for module, targets in graph().items():
        top = module.split(".")[0]
        for target in targets:
            other = target.split(".")[0]
            if other == top:
                continue
            allowed = ALLOWED[top] | (
                set(DOUBLES)
                if module.startswith(("harness.cli", "harness.agents.sim", "harness.selftest"))
                else set()
            )
            if other not in allowed:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def package(module: str) -> str:
    """The package of harness/ a module lives in (``harness.agents.codex.x`` ->
    ``harness.agents``; a top-level module is its own)."""
    return ".".join(module.split(".")[:2])


def test_no_two_packages_point_at_each_other() -> None:
    """Module cycles are caught below; this catches the looser one, two packages each
    importing a module of the other (the agents' turn model once lived under
    ``harness.export`` while ``export`` imported the agents)."""
    arrows = {
        (package(module), package(target))
        for module, targets in graph().items()
        if module.startswith("harness.")
        for target in targets
        if target.startswith("harness.") and package(target) != package(module)
    }
    both_ways = sorted(f"{a} <-> {b}" for a, b in arrows if (b, a) in arrows and a < b)
    assert both_ways == []


def test_nothing_imports_in_a_circle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == [], [" -> ".join(c) for c in cycles]


@pytest.mark.parametrize(
    "name", ["prime-agent", "prime_agent", "claude-code", "claude_code", "opencode"]
)
def test_only_an_agents_own_packages_name_it(name: str) -> None:
    """The core, the reports and the statistics never name an agent (its adapter and its
    parsers do; the registry lists them)."""
    own = (f"harness/agents/{name.replace('-', '_')}", f"scorers/{name.replace('-', '_')}")
    registry = ("harness/agents/__init__.py", "harness/agents/sim")
    found = []
    for path in (REPO / "harness").rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(own) or rel.startswith(registry):
            continue
        text = path.read_text(encoding="utf-8")
        if f'"{name}"' in text or f".{name}" in text or f" {name}:" in text:
            found.append(rel)
    assert found == []
