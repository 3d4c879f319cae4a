"""Re-scoring a saved item through the CLI: 1,800 shards in a 100,000-record spawn ledger.

Builds, in a temp dir, a fixture of 1,800 shards (short questions, so its task.txt still
fits one argv argument) and an honest prime-agent bundle for it: one child per shard with
its session file and its reply in the parent transcript, the ledger padded to the
product's cap of 100,000 spawn records with another root's children (one ledger serves
every root of a sessions dir). Then times, process start included:

* ``python -m harness score ITEM_DIR`` (against the manifest the item saved), and
* ``python -m harness score ITEM_DIR --fixture DIR`` (loading and validating the fixture),

``--repeats`` times each, alternating, with bytecode cached (as an installed harness runs),
and prints the median, the fastest and the slowest wall time, the median CPU time (user +
system: less sensitive to a shared machine's load than the wall) and the verdict. ``--tree DIR`` times another checkout too (an older
commit, e.g. from ``git worktree add``), interleaved with this one, so both see the same
machine load.

    uv run python benchmarks/bench_rescore.py [--repeats 9] [--tree DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_fanout import LEDGER_RECORDS, honest_bundle

from harness.fixtures import MAX_TASK_BYTES
from harness.fixtures.task_text import render_task

#: The fan-out the target is stated for (issue 38): 1,800 shards, 100,000 ledger records.
SHARDS = 1_800
#: Runs per command and tree: enough for a median that holds on a shared 2-core machine.
DEFAULT_REPEATS = 9
#: The target: a re-score at this size, CLI start included.
TARGET_S = 0.5
#: The data-format paragraph of the rendered task (the bundle is synthetic, so any will do).
DATA_FORMAT = "Each shard is a JSON Lines file of events."


def build_fixture(path: Path, count: int) -> list[dict[str, object]]:
    """A fixture of ``count`` shards whose task.txt fits one argv argument."""
    shards: list[dict[str, object]] = [
        {
            "file": f"e{i:05d}.jsonl",
            "worker": f"worker-e{i:05d}",
            "question": "How many events?",
            "expected": i,
        }
        for i in range(1, count + 1)
    ]
    task = render_task(shards, "combined-index.md", DATA_FORMAT)
    if len(task.encode()) > MAX_TASK_BYTES:
        raise SystemExit(f"{count} shards: task.txt over {MAX_TASK_BYTES} bytes")
    (path / "shards").mkdir(parents=True)
    (path / "task.txt").write_text(task)
    manifest = {"name": "rescore", "artifact": "combined-index.md", "shards": shards}
    (path / "fixture.json").write_text(json.dumps(manifest, indent=1))
    for s in shards:
        (path / "shards" / str(s["file"])).write_text("{}\n")
    return shards


def time_score(tree: Path, args: list[str]) -> tuple[float, float, str]:
    """One ``python -m harness score ...`` from ``tree``: wall and CPU time, and the item's
    status."""
    # With bytecode cached, as an install has it (`uv tool install --compile-bytecode`): a
    # PYTHONDONTWRITEBYTECODE environment (CI, this repo's dev shells) compiles every
    # module on every start, which is not the re-score's own time.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    start, before = time.perf_counter(), os.times()
    done = subprocess.run(
        [sys.executable, "-m", "harness", "score", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, after = time.perf_counter() - start, os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    try:
        status = str(json.loads(done.stdout)["status"])
    except (ValueError, KeyError):
        status = f"exit {done.returncode}: {done.stderr.strip()[-200:]}"
    return wall, cpu, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument(
        "--tree", action="append", type=Path, default=[], help="another checkout to time"
    )
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees = [here, *(t.resolve() for t in args.tree)]
    with tempfile.TemporaryDirectory(prefix="bench-rescore-") as tmp:
        root = Path(tmp)
        shards = build_fixture(root / "fixture", SHARDS)
        honest_bundle(root / "item", shards, LEDGER_RECORDS)
        ledger = next((root / "item" / "agent-home" / "rlm-ledger").iterdir())
        print(
            f"{SHARDS:,} shards, ledger of {LEDGER_RECORDS:,} records "
            f"({ledger.stat().st_size / 1e6:.1f} MB); {args.repeats} runs each, "
            f"target {TARGET_S} s"
        )
        commands = {
            "score ITEM_DIR": [str(root / "item")],
            "score ITEM_DIR --fixture DIR": [
                str(root / "item"),
                "--fixture",
                str(root / "fixture"),
            ],
        }
        for tree in trees:  # warm the disk cache and each tree's bytecode
            time_score(tree, commands["score ITEM_DIR"])
        walls: dict[tuple[str, Path], list[float]] = {}
        cpus: dict[tuple[str, Path], list[float]] = {}
        statuses: dict[tuple[str, Path], str] = {}
        for _ in range(args.repeats):
            for name, argv in commands.items():
                for tree in trees:
                    wall, cpu, statuses[name, tree] = time_score(tree, argv)
                    walls.setdefault((name, tree), []).append(wall)
                    cpus.setdefault((name, tree), []).append(cpu)
        for name in commands:
            print(name)
            for tree in trees:
                times = walls[name, tree]
                print(
                    f"  {statistics.median(times):.3f} s median "
                    f"({min(times):.3f}-{max(times):.3f}), CPU "
                    f"{statistics.median(cpus[name, tree]):.3f} s, {statuses[name, tree]}: {tree}"
                )


if __name__ == "__main__":
    main()
