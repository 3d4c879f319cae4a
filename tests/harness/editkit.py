"""A small edit fixture built in a test's tmp_path: a package with one module per shard, a
shared CHANGELOG.md, and unittest checks (the tests of the hidden checks and the final
tree, and ``benchmarks/bench_checks.py``, build theirs with it)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.fixtures import Fixture
from harness.item.workspace import copy_shipped_tree
from scorers.types import Manifest

CHECK = """\
import pathlib
import unittest

from pkg import {stem}


class Test{cls}(unittest.TestCase):
    def test_rate(self):
        self.assertEqual({stem}.rate(), {value})

    def test_changelog(self):
        text = pathlib.Path("CHANGELOG.md").read_text()
        self.assertIn("- {stem}: rate {value}", text)
"""


def stem(i: int) -> str:
    return f"s{i:02d}"


def make_edit_fixture(root: Path, shards: int = 3, name: str = "edit-kit") -> Fixture:
    """An edit fixture of ``shards`` shards under ``root/name``: shard ``sNN`` owns
    ``pkg/sNN.py`` (``RATE = 0``; the change makes it ``37 + NN``) and its line of the
    shared ``CHANGELOG.md``; its checks test both."""
    fx = root / name
    for d in ("shards", "pkg", "checks"):
        (fx / d).mkdir(parents=True)
    (fx / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    rows, bullets, slots = [], [], []
    for i in range(shards):
        s, value = stem(i), 37 + i
        (fx / "pkg" / f"{s}.py").write_text(
            "RATE = 0\n\n\ndef rate():\n    return RATE\n", encoding="utf-8"
        )
        (fx / "shards" / f"{s}.md").write_text(f"Set pkg/{s}.py's RATE to {value}.\n")
        (fx / "checks" / f"test_{s}.py").write_text(
            CHECK.format(stem=s, cls=s.upper(), value=value), encoding="utf-8"
        )
        slots.append(f"<!-- {s} -->")
        bullets.append(f"- shards/{s}.md: what does rate() return? (worker: worker-{s})")
        rows.append(
            {
                "file": f"{s}.md",
                "worker": f"worker-{s}",
                "question": "What does rate() return after your change?",
                "expected": value,
                "owns": [f"pkg/{s}.py"],
                "checks": [f"checks/test_{s}.py"],
                "solution": [
                    {"path": f"pkg/{s}.py", "old": "RATE = 0", "new": f"RATE = {value}"},
                    {"path": "CHANGELOG.md", "old": f"<!-- {s} -->", "new": f"- {s}: rate {value}"},
                ],
            }
        )
    (fx / "CHANGELOG.md").write_text("# Changelog\n\n" + "\n".join(slots) + "\n")
    data = {
        "name": name,
        "artifact": "answers.md",
        "kind": "edit",
        "shared": ["CHANGELOG.md"],
        "shards": rows,
    }
    (fx / "fixture.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    task = "Carry out every ticket.\n" + "\n".join(bullets) + "\n"
    (fx / "task.txt").write_text(task, encoding="utf-8")
    manifest = Manifest.from_dict(data)
    paths = tuple(fx / "shards" / r["file"] for r in rows)
    return Fixture(path=fx, manifest=manifest, task_text=task, shard_paths=paths)


def agent_repo(fixture: Fixture, dest: Path, solved: tuple[str, ...] | None = None) -> Path:
    """The repo an agent starts from, with the solutions of the shards ``solved`` (their
    files; None: every shard) applied: a final tree as an honest agent leaves it."""
    copy_shipped_tree(fixture.path, dest)
    for shard in fixture.manifest.shards:
        if solved is not None and shard.file not in solved:
            continue
        for r in shard.solution:
            path = dest / r.path
            text = path.read_text(encoding="utf-8")
            assert text.count(r.old) == 1, (r.path, r.old)
            path.write_text(text.replace(r.old, r.new), encoding="utf-8")
    return dest
