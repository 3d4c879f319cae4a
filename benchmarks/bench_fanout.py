"""Large fan-outs: validate, collect-and-score, and re-score through the CLI.

Builds on disk, in a temp dir:

* the largest fixture a prompt can carry: json-events' questions over as many shards as fit
  Linux's one-argument limit for task.txt (the prompt is one argv argument);
* an honest prime-agent bundle for it (one child per shard, each with its session file and
  its reply in the parent transcript) whose ledger is filled to the product's cap of
  100,000 records with other roots' records (one ledger serves every root of a sessions dir),
  and a copy without its stdout stream, whose parent is found through the ledger;
* a synthetic bundle with 10,000 children (and a second with a quarter as many, so the
  scorer's growth shows), scored through the library.

Prints: fixture validation time, ``python -m harness score ITEM_DIR --fixture DIR`` wall
time (CLI start and validation included, median of a few) and verdicts; the library score
time of both synthetic items and the ratio (4x children should take ~4x time).

    uv run python benchmarks/bench_fanout.py [--tree DIR ...]

``--tree`` runs the CLI re-score against another checkout too (e.g. an older commit unpacked
with ``git archive``), side by side in one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.fixtures import FIXTURES_ROOT, MAX_TASK_BYTES, validate_fixture
from harness.fixtures.task_text import data_format_of, render_task
from harness.item.scoring import score_bundle

#: The product caps a ledger at 100,000 records (CONTRACT section 4).
LEDGER_RECORDS = 100_000
#: The synthetic fan-out the issue names, and a quarter of it to see the growth.
BIG_CHILDREN = 10_000
#: CLI re-scores timed per tree (the median is printed).
CLI_REPEATS = 3

SESSIONS = "/srv/evals/fanout/sessions"
ARTIFACTS = "/srv/evals/fanout/session-artifacts"
PARENT_FILE = f"{SESSIONS}/01a228ad-3d20-72ca-a542-e9a175e93c9e.jsonl"
OTHER_ROOT = f"{SESSIONS}/99999999-0000-0000-0000-000000000000.jsonl"
ROOT_ID = "01a228ad-465d-711e-a795-d3d4d68facdd"
AT = "2026-11-29T18:59:42.476Z"


def _line(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def _shards(count: int) -> list[dict[str, object]]:
    base = json.loads((FIXTURES_ROOT / "json-events" / "fixture.json").read_text())["shards"]
    return [
        {
            "file": f"e{i:05d}.jsonl",
            "worker": f"worker-e{i:05d}",
            "question": base[i % len(base)]["question"],
            "expected": i,
        }
        for i in range(1, count + 1)
    ]


def largest_fixture(path: Path) -> int:
    """Write the fixture with the most shards whose task.txt fits one argv argument."""
    fmt = data_format_of((FIXTURES_ROOT / "json-events" / "task.txt").read_text())
    low, high = 1, 10_000
    while low < high:  # the largest count whose prompt fits
        mid = (low + high + 1) // 2
        fits = len(render_task(_shards(mid), "combined-index.md", fmt).encode()) <= MAX_TASK_BYTES
        low, high = (mid, high) if fits else (low, mid - 1)
    shards = _shards(low)
    (path / "shards").mkdir(parents=True)
    (path / "task.txt").write_text(render_task(shards, "combined-index.md", fmt))
    manifest = {"name": "fanout", "artifact": "combined-index.md", "shards": shards}
    (path / "fixture.json").write_text(json.dumps(manifest, indent=1))
    for s in shards:
        (path / "shards" / str(s["file"])).write_text("{}\n")
    return low


def honest_bundle(item_dir: Path, shards: list[dict[str, object]], ledger_records: int) -> dict:
    """An honest item's bundle; the ledger padded with another root's records to the cap."""
    children = [(f"sub-{i:06x}", f"{i:06x}-session", s) for i, s in enumerate(shards)]
    ledger = [_line({"v": 1, "op": "meta", "at": AT, "sessionsDir": SESSIONS})]
    for child_id, session, s in children:
        child = f"{ARTIFACTS}/{ROOT_ID}/{child_id}/{session}.jsonl"
        spawn = {"v": 1, "op": "spawn", "at": AT, "childId": child_id, "parent": PARENT_FILE}
        ledger.append(_line(spawn | {"child": child, "depth": 1, "name": s["worker"]}))
    i = 0
    while len(ledger) < ledger_records:
        child_id = f"other-{i:08x}"
        child = f"{ARTIFACTS}/other/{child_id}/s.jsonl"
        spawn = {"v": 1, "op": "spawn", "at": AT, "childId": child_id, "parent": OTHER_ROOT}
        ledger.append(_line(spawn | {"child": child, "depth": 1, "name": f"helper-{i}"}))
        i += 1
    ledger_dir = item_dir / "agent-home" / "rlm-ledger"
    ledger_dir.mkdir(parents=True)
    name = hashlib.sha256(SESSIONS.encode()).hexdigest()[:16] + ".jsonl"
    (ledger_dir / name).write_text("".join(ledger))

    transcript = [_line({"type": "session", "version": 3, "id": ROOT_ID, "timestamp": AT})]
    for _, session, s in children:
        details = {
            "message": f"ANSWER::{s['file']}::{s['expected']}",
            "fromRelationship": "child",
            "from": {"sessionId": session},
        }
        reply = {"type": "custom_message", "customType": "agent_message", "details": details}
        transcript.append(_line(reply | {"timestamp": AT}))
    (item_dir / "sessions").mkdir()
    (item_dir / "sessions" / Path(PARENT_FILE).name).write_text("".join(transcript))

    for child_id, session, _ in children:
        folder = item_dir / "session-artifacts" / ROOT_ID / child_id
        folder.mkdir(parents=True)
        header = {"type": "session", "version": 3, "id": session, "timestamp": AT}
        header |= {"parentSession": PARENT_FILE, "rlmDepth": 1}
        task = {"type": "custom_message", "customType": "agent_message", "timestamp": AT}
        task["details"] = {
            "id": f"spawn:{child_id}",
            "from": {"sessionId": ROOT_ID},
            "fromRelationship": "parent",
        }
        turn = {"type": "message", "timestamp": AT}
        turn["message"] = {"role": "assistant", "stopReason": "stop", "usage": {"totalTokens": 9}}
        (folder / f"{session}.jsonl").write_text(_line(header) + _line(task) + _line(turn))

    (item_dir / "repo").mkdir()
    bullets = "".join(f"- {s['file']}: {s['expected']}\n" for s in shards)
    (item_dir / "repo" / "combined-index.md").write_text(bullets)
    message = {"role": "assistant", "stopReason": "stop", "usage": {"totalTokens": 1077}}
    stream = [_line({"type": "session", "version": 3, "id": ROOT_ID})]
    stream.append(_line({"type": "message_end", "message": message}))
    (item_dir / "stdout.jsonl").write_text("".join(stream))
    meta = {
        "schema_version": 2,
        "key": "fanout:bench/model:1",
        "fixture": "fanout",
        "model": "bench/model",
        "trial": 1,
        "agent_kind": "prime-agent",
        "sessions_dir": SESSIONS,
        "sessions_spellings": [SESSIONS],
        "killed_processes": [],
        "leftover_processes": 0,
        "collection": {"notes": [], "capped": [], "truncated": []},
        "manifest": {"name": "fanout", "artifact": "combined-index.md", "shards": shards},
        "start_error": None,
        "exit_code": 0,
        "timed_out": False,
        "cancelled": False,
        "wall_time_s": 1.0,
    }
    (item_dir / "item.json").write_text(json.dumps(meta))
    return meta


def without_stream(item_dir: Path, dest: Path) -> Path:
    """A copy of ``item_dir`` without its stdout stream: the collector must then find the
    parent through the ledger (the parent's own turn moves into its transcript)."""
    shutil.copytree(item_dir, dest)
    (dest / "stdout.jsonl").unlink()
    message = {"role": "assistant", "stopReason": "stop", "usage": {"totalTokens": 1077}}
    with (dest / "sessions" / Path(PARENT_FILE).name).open("a") as fh:
        fh.write(_line({"type": "message", "timestamp": AT, "message": message}))
    return dest


def cli_rescore(tree: Path, item_dir: Path, fixture: Path) -> tuple[float, str]:
    """Median wall time of ``python -m harness score`` run from ``tree``, and the status."""
    times, status = [], "?"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for _ in range(CLI_REPEATS):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "harness", "score", str(item_dir), "--fixture", str(fixture)],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - start)
        try:
            status = json.loads(done.stdout)["status"]
        except (ValueError, KeyError):
            status = f"exit {done.returncode}: {done.stderr.strip()[-200:]}"
    return statistics.median(times), status


def library_score(item_dir: Path, meta: dict) -> tuple[float, bool]:
    start = time.perf_counter()
    score = score_bundle(item_dir, meta)
    return time.perf_counter() - start, score.resolved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tree", action="append", type=Path, default=[], help="another checkout to compare"
    )
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp:
        root = Path(tmp)
        count = largest_fixture(root / "fixture")
        start = time.perf_counter()
        problems = validate_fixture(root / "fixture")
        validate_s = time.perf_counter() - start
        print(
            f"fixture: {count} shards, task.txt {(root / 'fixture' / 'task.txt').stat().st_size:,} "
            f"bytes; validation {validate_s:.3f} s ({len(problems)} problems)"
        )
        shards = json.loads((root / "fixture" / "fixture.json").read_text())["shards"]
        honest_bundle(root / "honest", shards, LEDGER_RECORDS)
        no_stream = without_stream(root / "honest", root / "honest-no-stream")
        for tree in (here, *args.tree):
            wall, status = cli_rescore(tree, root / "honest", root / "fixture")
            print(f"score ITEM_DIR --fixture ({tree}): {wall:.3f} s median, {status}")
            wall, status = cli_rescore(tree, no_stream, root / "fixture")
            print(
                f"  the same without stdout (parent found through the ledger): "
                f"{wall:.3f} s median, {status}"
            )
        sizes = (BIG_CHILDREN // 4, BIG_CHILDREN)
        timings = []
        for size in sizes:
            item = root / f"big-{size}"
            meta = honest_bundle(item, _shards(size), max(LEDGER_RECORDS, size + 1))
            wall, resolved = library_score(item, meta)
            timings.append(wall)
            print(f"{size:,} children (library score_bundle): {wall:.3f} s, resolved={resolved}")
        print(f"growth: {sizes[1] / sizes[0]:.0f}x children -> {timings[1] / timings[0]:.1f}x time")


if __name__ == "__main__":
    main()
