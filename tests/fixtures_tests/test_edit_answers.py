"""The edit fixtures' expected answers recomputed apart from the generator: each shard's
question names the code to run; here every shard's solution is applied with the harness's
own ``apply_solutions`` (not ``edit_suite.py``'s) and that code is run in a fresh
interpreter at the solved repo's root, as a child would after its change."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.fixtures import FIXTURES_ROOT, load_fixture
from harness.item.verify import apply_solutions

EDIT_FIXTURES = sorted(p.name for p in FIXTURES_ROOT.iterdir() if p.name.startswith("edit-"))
#: "what does <expression> return after your change?" / "what number does bash <script>
#: print after your change?"
PYTHON_QUESTION = re.compile(r"what does (?P<code>.+) return after your change\?\Z")
BASH_QUESTION = re.compile(r"what number does (?P<command>bash .+) print after your change\?\Z")


#: Run at a solved repo's root: each shard's Python code (every module it names imported
#: first) or bash command, its integer result by shard.
EVALUATE = """
import importlib, json, re, subprocess, sys
from pathlib import Path

sys.path.insert(0, ".")
packages = [p.name for p in Path(".").iterdir() if (p / "__init__.py").is_file()]
out = {}
for shard, (kind, code) in json.loads(sys.argv[1]).items():
    if kind == "bash":
        done = subprocess.run(code.split(), capture_output=True, text=True, check=True)
        out[shard] = int(done.stdout)
        continue
    for dotted in re.findall(r"\\b(?:" + "|".join(packages) + r")(?:\\.\\w+)+", code):
        parts = dotted.split(".")
        for end in range(1, len(parts) + 1):
            try:
                importlib.import_module(".".join(parts[:end]))
            except ImportError:
                break
    out[shard] = eval(code, {p: importlib.import_module(p) for p in packages})
print(json.dumps(out))
"""


def _answers(repo: Path, questions: dict[str, str]) -> dict[str, int]:
    codes = {}
    for shard, question in questions.items():
        if found := PYTHON_QUESTION.search(question):
            codes[shard] = ("python", found.group("code"))
        elif found := BASH_QUESTION.search(question):
            codes[shard] = ("bash", found.group("command"))
        else:
            raise AssertionError(f"{shard}: the question names no code: {question!r}")
    done = subprocess.run(
        [sys.executable, "-I", "-c", EVALUATE, json.dumps(codes)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {k: int(v) for k, v in json.loads(done.stdout).items()}


@pytest.mark.slow  # a process per fixture
@pytest.mark.parametrize("name", EDIT_FIXTURES)
def test_each_answer_is_what_the_changed_code_gives(name: str, tmp_path: Path) -> None:
    fixture = load_fixture(FIXTURES_ROOT / name)
    repo = tmp_path / "repo"
    # every repo file as shipped, then the declared ones solved
    for path in FIXTURES_ROOT.joinpath(name).rglob("*"):
        rel = path.relative_to(FIXTURES_ROOT / name).as_posix()
        if path.is_file() and rel.split("/")[0] not in ("checks", "fixture.json", "task.txt"):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_bytes(path.read_bytes())
    assert apply_solutions(fixture, repo) == []
    got = _answers(repo, {s.file: s.question for s in fixture.manifest.shards})
    assert got == {s.file: s.expected for s in fixture.manifest.shards}
    manifest = json.loads((FIXTURES_ROOT / name / "fixture.json").read_text())
    assert len(got) == len(manifest["shards"])
