"""Scheduler benchmark: wall time and efficiency of N sim items at several concurrencies.

    uv run python benchmarks/bench_scheduler.py [--items 32] [--slow 1] [--fixture tiny]

Efficiency = ideal wall / actual wall, with ideal = ceil(items / concurrency) x slow seconds.
It also measures the per-item harness overhead (fixture copy, git, launch, daemon shutdown,
sweep, collection, scoring) with ``slow=0``, serially: the median wall time of one item.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

from harness.agents import parse_agent
from harness.plan import RunConfig
from harness.run.execute import execute_run

REPO = Path(__file__).resolve().parent.parent
FIXTURES = {"tiny": str(REPO / "tests" / "data" / "fixtures" / "tiny")}


def run(
    fixture: str, behaviour: str, items: int, concurrency: int, runs_dir: Path
) -> tuple[float, int, list[float]]:
    config = RunConfig(
        fixtures=(fixture,),
        models=(),
        agent=parse_agent(f"sim:{behaviour}"),
        trials=items,
        concurrency=concurrency,
        runs_dir=runs_dir,
    )
    start = time.monotonic()
    outcome = execute_run(config)
    wall = time.monotonic() - start
    resolved = sum(1 for i in outcome.report.items if i.resolved)
    return wall, resolved, [i.facts.wall_time_s for i in outcome.report.items]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--slow", type=float, default=1.0)
    parser.add_argument("--fixture", default="tiny", help="tiny, or a fixture name/path")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 4, 8])
    parser.add_argument("--overhead-items", type=int, default=8)
    args = parser.parse_args()
    fixture = FIXTURES.get(args.fixture, args.fixture)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        root = Path(tmp)
        walls, _, agent_walls = run(fixture, "slow=0", args.overhead_items, 1, root / "overhead")
        per_item = walls / args.overhead_items
        print(
            f"per-item harness overhead (slow=0, serial, {args.overhead_items} items): "
            f"{per_item:.3f} s per item wall; agent itself median {statistics.median(agent_walls):.3f} s; "
            f"harness share {per_item - statistics.median(agent_walls):.3f} s"
        )
        print(
            f"{'concurrency':>11} {'items':>5} {'wall_s':>8} {'ideal_s':>8} {'efficiency':>10} {'resolved':>8}"
        )
        for c in args.concurrency:
            wall, resolved, _ = run(fixture, f"slow={args.slow:g}", args.items, c, root / f"c{c}")
            ideal = math.ceil(args.items / c) * args.slow
            print(
                f"{c:>11} {args.items:>5} {wall:>8.2f} {ideal:>8.2f} {ideal / wall:>10.3f} {resolved:>8}"
            )


if __name__ == "__main__":
    main()
