"""The answer key the scripted model plays from: shard file name -> expected answer, and for
an edit fixture (``"kind": "edit"``) each shard's owned files and honest solution."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Edit:
    """One replacement of a shard's honest solution: ``old`` occurs once in the shipped
    ``path`` (repo-relative) and becomes ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Oracle:
    """Expected answers by bare shard file name, merged over every loaded fixture."""

    answers: Mapping[str, int | str] = field(default_factory=dict)
    #: Shard file name -> the fixture it belongs to (to count requests per fixture).
    fixtures: Mapping[str, str] = field(default_factory=dict)
    #: Shard file name -> its honest solution, for the shards of edit fixtures only.
    solutions: Mapping[str, tuple[Edit, ...]] = field(default_factory=dict)
    #: Shard file name -> the repo files only its child may change (edit fixtures).
    owned: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_manifests(cls, manifests: Iterable[Mapping[str, Any]]) -> Oracle:
        answers: dict[str, int | str] = {}
        fixtures: dict[str, str] = {}
        solutions: dict[str, tuple[Edit, ...]] = {}
        owned: dict[str, tuple[str, ...]] = {}
        for manifest in manifests:
            edit = manifest.get("kind") == "edit"
            for shard in manifest["shards"]:
                file = str(shard["file"])
                answers[file] = shard["expected"]
                fixtures[file] = str(manifest["name"])
                if edit:
                    solutions[file] = tuple(
                        Edit(str(r["path"]), str(r["old"]), str(r["new"]))
                        for r in shard.get("solution") or ()
                    )
                    owned[file] = tuple(str(p) for p in shard.get("owns") or ())
        return cls(answers, fixtures, solutions, owned)

    @classmethod
    def from_fixture_dirs(cls, dirs: Iterable[Path]) -> Oracle:
        """Read ``fixture.json`` of each fixture directory."""
        return cls.from_manifests(
            json.loads((d / "fixture.json").read_text(encoding="utf-8")) for d in dirs
        )

    def answer(self, shard_file: str) -> int | str | None:
        """The expected answer of a shard, by its manifest name or with ``shards/`` before."""
        return self.answers.get(_bare(shard_file))

    def fixture_of(self, shard_file: str) -> str | None:
        return self.fixtures.get(_bare(shard_file))

    def is_edit(self, shard_file: str) -> bool:
        """Whether the shard belongs to an edit fixture (its child changes the repo)."""
        return _bare(shard_file) in self.solutions

    def solution(self, shard_file: str) -> tuple[Edit, ...]:
        """The shard's honest solution (empty for a read fixture's shard)."""
        return self.solutions.get(_bare(shard_file), ())

    def owns(self, shard_file: str) -> tuple[str, ...]:
        """The repo files the shard owns (empty for a read fixture's shard)."""
        return self.owned.get(_bare(shard_file), ())


#: The folder every shard lives in; the manifest names shards by their path below it.
SHARDS_PREFIX = "shards/"


def shard_key(path: str) -> str:
    """A shard as the manifest names it: its path below shards/ (``shards/region-a/x.csv``
    -> ``region-a/x.csv``; a bare name stays as it is)."""
    return path.removeprefix("./").removeprefix(SHARDS_PREFIX)


def _bare(shard_file: str) -> str:
    return shard_key(shard_file)
