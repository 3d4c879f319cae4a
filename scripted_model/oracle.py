"""The answer key the scripted model plays from: shard file name -> expected answer."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Oracle:
    """Expected answers by bare shard file name, merged over every loaded fixture."""

    answers: Mapping[str, int | str] = field(default_factory=dict)
    #: Shard file name -> the fixture it belongs to (to count requests per fixture).
    fixtures: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_manifests(cls, manifests: Iterable[Mapping[str, Any]]) -> Oracle:
        answers: dict[str, int | str] = {}
        fixtures: dict[str, str] = {}
        for manifest in manifests:
            for shard in manifest["shards"]:
                answers[str(shard["file"])] = shard["expected"]
                fixtures[str(shard["file"])] = str(manifest["name"])
        return cls(answers, fixtures)

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


#: The folder every shard lives in; the manifest names shards by their path below it.
SHARDS_PREFIX = "shards/"


def shard_key(path: str) -> str:
    """A shard as the manifest names it: its path below shards/ (``shards/region-a/x.csv``
    -> ``region-a/x.csv``; a bare name stays as it is)."""
    return path.removeprefix("./").removeprefix(SHARDS_PREFIX)


def _bare(shard_file: str) -> str:
    return shard_key(shard_file)
