"""Where fixtures are looked up, and making new ones: ``fixtures new`` and ``fixtures task``."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.errors import FixtureError, UsageError
from harness.fixtures import (
    FIXTURES_ROOT,
    MANIFEST_NAME,
    SAFE_NAME,
    TASK_NAME,
    FixtureProblem,
    load_fixture,
    resolve_fixture,
)
from harness.task_text import stated_counts, task_for_manifest

#: A team's own fixtures, looked for in the working directory before the bundled ones.
LOCAL_FIXTURES = Path("fixtures")


def fixtures_root(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """The one folder fixture names are looked up in: ``--fixtures-dir``, else ``./fixtures``
    when it holds at least one fixture, else the fixtures bundled with the harness."""
    if explicit is not None:
        if not explicit.is_dir():
            raise UsageError(f"--fixtures-dir {explicit}: no such directory")
        return explicit.resolve()
    local = (cwd or Path.cwd()) / LOCAL_FIXTURES
    if local.is_dir() and any((d / MANIFEST_NAME).is_file() for d in local.iterdir()):
        return local.resolve()
    return FIXTURES_ROOT


def fixture_warnings(path: Path) -> list[FixtureProblem]:
    """Problems that do not stop a run but are probably mistakes: a prompt stating a shard
    count other than the manifest's (a copied fixture whose task.txt was not regenerated)."""
    try:
        manifest = json.loads((path / MANIFEST_NAME).read_text(encoding="utf-8"))
        task = (path / TASK_NAME).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return []  # the validator reports unreadable files as errors
    shards = manifest.get("shards") if isinstance(manifest, dict) else None
    if not isinstance(shards, list):
        return []
    wrong = [phrase for count, phrase in stated_counts(task) if count != len(shards)]
    if not wrong:
        return []
    stated = ", ".join(repr(p) for p in dict.fromkeys(wrong))
    message = (
        f"states {stated} but fixture.json has {len(shards)} shard(s); "
        f"regenerate it with `fixtures task {path} --write`"
    )
    return [FixtureProblem(path / TASK_NAME, "$", message)]


@dataclass(frozen=True)
class NewFixture:
    path: Path
    source: Path


def new_fixture(name: str, source: str, root: Path) -> NewFixture:
    """Copy fixture ``source`` to ``root/name`` and rename it in its fixture.json."""
    if not SAFE_NAME.match(name):
        raise UsageError(f"fixture name {name!r}: use letters, digits, '.', '_' and '-'")
    try:
        src = resolve_fixture(source, root if root.is_dir() else FIXTURES_ROOT)
    except FixtureError:
        src = resolve_fixture(source, FIXTURES_ROOT)  # a bundled fixture as the template
    load_fixture(src)  # never scaffold from a broken fixture
    dest = root / name
    if dest.exists():
        raise UsageError(f"{dest}: already exists")
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, symlinks=True)
    manifest_file = dest / MANIFEST_NAME
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    manifest["name"] = name
    manifest.pop("generated_by", None)  # the copy is hand-made from now on
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return NewFixture(dest, src)


def regenerated_task(fixture_dir: Path) -> str:
    """task.txt rendered from the fixture's fixture.json (the fixture must be loadable up to
    its task.txt: the manifest is what counts)."""
    manifest_file = fixture_dir / MANIFEST_NAME
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FixtureError(str(manifest_file), f"cannot be read ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shards"), list):
        raise FixtureError(str(manifest_file), "must be an object with a shards array")
    task_file = fixture_dir / TASK_NAME
    current = task_file.read_text(encoding="utf-8") if task_file.is_file() else None
    try:
        return task_for_manifest(manifest, current)
    except (KeyError, TypeError, ValueError) as exc:
        raise FixtureError(str(manifest_file), f"cannot render task.txt ({exc})") from exc
