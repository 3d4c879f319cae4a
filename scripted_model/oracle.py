"""The answer key the scripted model plays from: shard file name -> expected answer, and for
an edit fixture's shards the honest change (the manifest's ``solution``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple


class Edit(NamedTuple):
    """One exact replacement of a shard's honest change: ``old`` occurs once in ``path``
    (repo-relative) as shipped and becomes ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Oracle:
    """Expected answers by bare shard file name, merged over every loaded fixture."""

    answers: Mapping[str, int | str] = field(default_factory=dict)
    #: Shard file name -> the fixture it belongs to (to count requests per fixture).
    fixtures: Mapping[str, str] = field(default_factory=dict)
    #: Shard file name -> its honest change, for the shards of edit fixtures (``kind:
    #: "edit"``) only: the replacements that make its hidden checks pass.
    solutions: Mapping[str, tuple[Edit, ...]] = field(default_factory=dict)
    #: Shard file name -> the files only it may change (edit fixtures' shards only).
    owns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_manifests(cls, manifests: Iterable[Mapping[str, Any]]) -> Oracle:
        answers: dict[str, int | str] = {}
        fixtures: dict[str, str] = {}
        solutions: dict[str, tuple[Edit, ...]] = {}
        owns: dict[str, tuple[str, ...]] = {}
        for manifest in manifests:
            edit = manifest.get("kind") == "edit"
            for shard in manifest["shards"]:
                answers[str(shard["file"])] = shard["expected"]
                fixtures[str(shard["file"])] = str(manifest["name"])
                if edit:
                    owns[str(shard["file"])] = tuple(str(p) for p in shard.get("owns") or ())
                    solutions[str(shard["file"])] = tuple(
                        Edit(str(r["path"]), str(r["old"]), str(r["new"]))
                        for r in shard.get("solution") or ()
                    )
        return cls(answers, fixtures, solutions, owns)

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

    def solution(self, shard_file: str) -> tuple[Edit, ...] | None:
        """The honest change of an edit fixture's shard; ``None`` for a read fixture's."""
        return self.solutions.get(_bare(shard_file))

    def next_shard(self, shard_file: str) -> str | None:
        """The shard after this one in its fixture's manifest (the last one's is the first);
        ``None`` when its fixture has no other shard."""
        fixture = self.fixture_of(shard_file)
        siblings = [f for f, of in self.fixtures.items() if of == fixture]
        if fixture is None or len(siblings) < 2:
            return None
        return siblings[(siblings.index(_bare(shard_file)) + 1) % len(siblings)]

    def owned_edits(self, shard_file: str | None) -> list[Edit]:
        """The replacements of a shard's solution in the files it owns (not the shared)."""
        if shard_file is None:
            return []
        owned = set(self.owns.get(_bare(shard_file), ()))
        return [e for e in self.solution(shard_file) or () if e.path in owned]


#: The folder every shard lives in; the manifest names shards by their path below it.
SHARDS_PREFIX = "shards/"


def shard_key(path: str) -> str:
    """A shard as the manifest names it: its path below shards/ (``shards/region-a/x.csv``
    -> ``region-a/x.csv``; a bare name stays as it is)."""
    return path.removeprefix("./").removeprefix(SHARDS_PREFIX)


def _bare(shard_file: str) -> str:
    return shard_key(shard_file)
