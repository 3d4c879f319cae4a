"""The Gemini CLI captures (tests/data/gemini-runs) as the scorer's inputs, as the collector
hands them over, and copies of them to damage or forge."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from scorers.gemini import GeminiInputs
from scorers.types import Manifest, Opener, Shard

RUNS = Path(__file__).resolve().parents[2] / "data" / "gemini-runs"
WORKERS = ("w1", "w2", "w3")


def manifest(shards: int) -> Manifest:
    """The fixture the captures ran: shard ``s<k>.txt`` for worker ``w<k>``, answer 42."""
    return Manifest(
        "gemini-capture",
        "ANSWERS.md",
        tuple(Shard(f"s{k}.txt", f"w{k}", "q", 42) for k in range(1, shards + 1)),
    )


def opener(path: Path) -> Opener | None:
    return (lambda: path.open("rb")) if path.is_file() else None


def inputs_of(run: Path, model: str = "", workers: tuple[str, ...] = WORKERS) -> GeminiInputs:
    """The scorer's inputs for the bundle ``run``."""
    chats = run / "gemini-home" / "chats"
    files = sorted(chats.rglob("*.jsonl")) if chats.is_dir() else []
    return GeminiInputs(
        chats=tuple((p.relative_to(chats).as_posix(), lambda p=p: p.open("rb")) for p in files),
        stdout=opener(run / "stdout.jsonl"),
        log=opener(run / "stderr.txt"),
        artifact=opener(run / "repo" / "ANSWERS.md"),
        workers=workers,
        model=model,
    )


def copy_run(name: str, tmp: Path) -> Path:
    target = tmp / name
    shutil.copytree(RUNS / name, target)
    return target


def chat_files(run: Path) -> dict[str, Path]:
    """Each chat record of a bundle by its path below ``chats/``."""
    chats = run / "gemini-home" / "chats"
    return {p.relative_to(chats).as_posix(): p for p in sorted(chats.rglob("*.jsonl"))}


def parent_file(run: Path) -> Path:
    return next(p for rel, p in chat_files(run).items() if "/" not in rel)


def child_file(run: Path, worker: str) -> Path:
    """The first subagent record whose task names ``worker``."""
    for rel, path in chat_files(run).items():
        if "/" in rel and f"Worker: {worker}\\n" in path.read_text():
            return path
    raise LookupError(worker)


def edit_lines(path: Path, change: Callable[[dict[str, object]], dict[str, object] | None]) -> None:
    """Rewrite each JSON line of ``path`` through ``change`` (None drops the line)."""
    out = []
    for line in path.read_text().splitlines():
        value = change(json.loads(line))
        if value is not None:
            out.append(json.dumps(value))
    path.write_text("\n".join(out) + "\n")
