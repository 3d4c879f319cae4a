"""The captured Codex runs (tests/data/codex-runs) as the scorer's inputs, built by hand the
way a collector would: openers over the rollouts, stdout, the log and the artifact.

Each run is a bundle made by ``scripts/capture_codex_runs.py``: the real client 0.171.0 on
the tiny fixture against the scripted Responses server, one scripted behaviour each, under
the first multi-agent protocol (``v1-*``) or the second (``v2-*``), two of them under
provider faults; ``capture.json`` holds the expected verdict and what the server billed.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorers.codex import CodexInputs
from scorers.types import Manifest, Opener

DATA = Path(__file__).resolve().parents[2] / "data"
RUNS = DATA / "codex-runs"
MANIFEST = Manifest.from_dict(json.loads((DATA / "fixtures" / "tiny" / "fixture.json").read_text()))
WORKERS = tuple(s.worker for s in MANIFEST.shards)
ALL_RUNS = tuple(sorted(p.name for p in RUNS.iterdir() if p.is_dir()))


def capture(run: str) -> dict[str, Any]:
    return json.loads((RUNS / run / "capture.json").read_text(encoding="utf-8"))


def rollouts(folder: Path) -> list[Path]:
    return sorted(folder.glob("codex-home/sessions/*/*/*/rollout-*.jsonl"))


def _file(path: Path) -> Opener | None:
    return (lambda: path.open("rb")) if path.is_file() else None


def _bytes(data: bytes) -> Opener:
    return lambda: io.BytesIO(data)


def inputs(
    folder: Path | str,
    *,
    edit: Callable[[Path, bytes], bytes | None] | None = None,
    log: bool = True,
    stdout: bool = True,
) -> CodexInputs:
    """A bundle's inputs (a run's name, or a folder); ``edit(path, bytes)`` may rewrite a
    rollout (``None`` drops it)."""
    folder = RUNS / folder if isinstance(folder, str) else folder
    openers: list[Opener] = []
    for path in rollouts(folder):
        if edit is None:
            openers.append(_bytes(path.read_bytes()))
            continue
        changed = edit(path, path.read_bytes())
        if changed is not None:
            openers.append(_bytes(changed))
    return CodexInputs(
        rollouts=tuple(openers),
        stdout=_file(folder / "stdout.jsonl") if stdout else None,
        log=_file(folder / "stderr.txt") if log else None,
        artifact=_file(folder / "repo" / MANIFEST.artifact),
        workers=WORKERS,
    )


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def root_rollout(folder: Path | str) -> Path:
    """The root thread's rollout (the one whose session_meta names no parent)."""
    folder = RUNS / folder if isinstance(folder, str) else folder
    for path in rollouts(folder):
        meta = lines(path.read_bytes())[0]["payload"]
        if "parent_thread_id" not in meta:
            return path
    raise AssertionError(f"no root rollout in {folder}")
