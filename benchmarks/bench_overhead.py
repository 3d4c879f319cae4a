"""What the harness itself costs per item, apart from the agent's own time.

Runs items whose agent does nothing but exit (``sim:noop``: the simulated prime-agent's
executable, started and gone) and, for comparison, honest ``sim`` items, and reads where
each item's time went from its ``item.json`` ``phases_s`` (workspace and git set-up, the
agent's life, the daemon stop, collection, clean-up, scoring). The harness's overhead of an
item is everything but the agent's own life and the wait for a slot; the noop agent's life
is the cost of starting a process at all (its Python start is the sim's, not the harness's).
At ``--concurrency 1`` an item's clean-up and scoring overlap the next item's agent, so on 2
cores a phase beside a busy agent reads longer than it costs; the run's wall time per item
less the agent's life is what the harness adds to a run's length.

Prints, side by side in one run:

* per fixture size (3 to 120 shards), ``--concurrency 1``, noop and honest sim items: the
  median and p95 overhead, the agent's life, and the run's wall time per item (CLI start
  included). A noop item ends as an error (no model reply) but passes every phase; the
  honest items' collection and scoring grow with their children, one per shard;
* per run size (10 to 2,000 honest sim items over the 3-shard test fixture),
  ``--concurrency 4``: wall time per item (linear in items means it stays flat), then for the
  finished run: ``report.json`` + ``report.md`` + ``report.html`` written again from the
  items' results (what the run's last step does; median of 3), the runs index, and
  ``runs list`` through the CLI.

    uv run python benchmarks/bench_overhead.py [--items 30] [--sizes 10,100,500,2000]
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

from harness.item.scoring import read_result
from harness.model.report import load_report
from harness.report.write import write_report
from harness.runs.index import write_index
from harness.stats.build import build_report

REPO = Path(__file__).resolve().parents[1]
#: 3 to 120 shards: the smallest and the widest fixtures the project ships, and between.
FIXTURES = ("smoke-orders", "json-events", "python-modules", "wide-text", "widest-120")
#: The harness's own phases (the agent's life and the slot wait are not its cost).
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
OWN = ("workspace", "stop", "collect", "cleanup", "score")
REPORT_REPEATS = 3


def run(runs: Path, fixture: str, agent: str, items: int, concurrency: int) -> Path:
    """One ``harness run`` of ``items`` trials; its run dir (raises on a harness failure)."""
    argv = [
        sys.executable, "-m", "harness", "run", "--fixture", fixture, "--agent", agent,
        "--trials", str(items), "--concurrency", str(concurrency), "--runs-dir", str(runs),
        "--json",
    ]  # fmt: skip
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 3):  # 3: the noop items' errors (no model reply)
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return runs / json.loads(done.stdout)["run_id"]


def phases(run_dir: Path) -> list[dict[str, float]]:
    return [
        json.loads(p.read_text())["phases_s"] for p in sorted(run_dir.glob("items/*/item.json"))
    ]


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def by_fixture(tmp: Path, items: int) -> None:
    print(f"\nper fixture, {items} items each at --concurrency 1 (ms per item)")
    print(f"{'fixture':<16}{'shards':>7}{'agent':>6}  {'own med':>8}{'own p95':>8}"
          f"{'agent med':>10}{'wall/item':>10}{'- agent':>9}   own phases (median)")  # fmt: skip
    for fixture in FIXTURES:
        shards = len(list((REPO / "fixtures" / fixture / "shards").iterdir()))
        for agent in ("sim:noop", "sim"):
            started = time.perf_counter()
            run_dir = run(tmp / f"{fixture}-{agent}", fixture, agent, items, 1)
            wall = time.perf_counter() - started
            rows = phases(run_dir)
            own = [sum(r[k] for k in OWN) for r in rows]
            life = [r["agent"] for r in rows]
            parts = " ".join(f"{k} {statistics.median(r[k] for r in rows) * 1000:.0f}" for k in OWN)
            print(f"{fixture:<16}{shards:>7}{agent.removeprefix('sim:'):>6}  "
                  f"{ms(statistics.median(own))} {ms(p95(own))}{ms(statistics.median(life)):>10}"
                  f"{ms(wall / items):>10}{ms(wall / items - statistics.median(life)):>9}   {parts}")  # fmt: skip


def report_times(run_dir: Path) -> float:
    """Median seconds to build and write the run's report files from its items again."""
    saved = load_report(run_dir / "report.json")
    results = [read_result(p.parent) for p in sorted(run_dir.glob("items/*/result.json"))]
    times = []
    for _ in range(REPORT_REPEATS):
        started = time.perf_counter()
        report = build_report(
            run_id=saved.run_id, results=results, interrupted=False, options=saved.options
        )
        write_report(run_dir, report)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def by_run_size(tmp: Path, sizes: list[int]) -> None:
    print("\nper run size, honest sim items over the 3-shard test fixture at --concurrency 4")
    print(
        f"{'items':>6}{'wall s':>9}{'ms/item':>9}{'report s':>10}{'index s':>9}{'runs list s':>13}"
    )
    runs = tmp / "sizes"
    for size in sizes:
        started = time.perf_counter()
        run_dir = run(runs, TINY, "sim", size, 4)
        wall = time.perf_counter() - started
        report_s = report_times(run_dir)
        started = time.perf_counter()
        write_index(runs)
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "harness", "runs", "list", "--runs-dir", str(runs)],
            cwd=REPO, capture_output=True, check=True,
        )  # fmt: skip
        list_s = time.perf_counter() - started
        print(
            f"{size:>6}{wall:>9.1f}{ms(wall / size):>9}{report_s:>10.2f}{index_s:>9.2f}{list_s:>13.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=30, help="items per fixture size")
    parser.add_argument("--sizes", default="10,100,500,2000", help="run sizes, comma-separated")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="swh-bench-overhead-") as tmp:
        by_fixture(Path(tmp), args.items)
        by_run_size(Path(tmp), [int(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
