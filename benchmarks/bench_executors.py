"""The local and the Ray executor side by side on the same work: ``sim:slow=N`` items.

Starts a local Ray cluster (the head plus one worker node, each one CPU, offering between
them as many ``sim`` units as the run holds items at once: ``--concurrency`` agents and a
wave prepared ahead, as a local run holds them), runs the same items with ``--executor
local`` and ``--executor ray`` at the same ``--concurrency``, alternating, and prints for
each:

* efficiency: the ideal wall time (items x agent seconds / concurrency) over the measured
  one, CLI start (and, for Ray, joining the cluster and warming its workers) included;
* busy: the items' agents' wall times over the slots' time (concurrency x the span from
  the first item's start to the last item's end, from item.json's ``started_at`` and
  ``phases_s``), so the CLI's start is set aside;
* where the rest went: from the CLI's start to the first item's start (for Ray: joining the
  cluster and warming a worker per unit), and from the last item's end to the CLI's exit; and
  per item (medians, ms) its phases and, for Ray, what its task spent outside them
  (item.json's ``executor.timing_s``: unpacking the fixture, packing the bundle, and Ray's
  own share of the round trip: submission, scheduling, a worker, the transfer).

The cluster is stopped at the end, whatever happens.

    uv run --extra ray python benchmarks/bench_executors.py [--items 32] [--concurrency 4]
        [--repeats 3] [--agent-seconds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.run.scheduler import Scheduler

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "harness"))

from ray_cluster import local_cluster  # noqa: E402 (the test helper owns cluster start/stop)

#: Seconds each simulated agent works by default (the issue's sim:slow=2).
AGENT_S = 2
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


def run(
    executor: str, items: int, concurrency: int, agent_s: int, env: dict[str, str]
) -> tuple[float, float, float, float, str]:
    """One run: its wall time, the items' span, the agents' seconds, the time before the
    first item started, and how its items ended."""
    with tempfile.TemporaryDirectory(prefix="bench-exec-") as runs:
        argv = [
            sys.executable, "-m", "harness", "run", "--fixture", TINY,
            "--agent", f"sim:slow={agent_s}", "--trials", str(items),
            "--concurrency", str(concurrency), "--executor", executor,
            "--runs-dir", runs, "--json",
        ]  # fmt: skip
        start, started_at = time.perf_counter(), time.time()
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        own, starts, ends = 0.0, [], []
        parts: dict[str, list[float]] = {}
        for meta_file in Path(runs).glob("*/items/*/item.json"):
            meta = json.loads(meta_file.read_text())
            phases = meta["phases_s"]
            own += phases["agent"]
            starts.append(meta["started_at"])
            timing = meta.get("executor", {}).get("timing_s", {})
            for name, seconds in {**phases, **timing}.items():
                parts.setdefault(name, []).append(seconds)
            ends.append(meta["started_at"] + sum(phases.values()))
        span = max(ends) - min(starts) if starts else float("nan")
        lead = min(starts) - started_at if starts else float("nan")
        try:
            statuses = [i["status"] for i in json.loads(done.stdout)["items"]]
            summary = f"{statuses.count('resolved')}/{len(statuses)} resolved"
            summary += ";" + "".join(
                f" {name} {statistics.median(values) * 1000:.0f}"
                for name, values in parts.items()
                if name not in ("item", "task", "slot_wait")
            )
        except (ValueError, KeyError):
            summary = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    return wall, span, own, lead, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--agent-seconds", type=int, default=AGENT_S, help="how long each agent works"
    )
    args = parser.parse_args()
    ideal = args.items * args.agent_seconds / args.concurrency
    held = Scheduler[Any, Any](args.concurrency).in_flight_limit
    head_units = max(1, held // 2)
    worker_units = max(1, held - head_units)
    print(
        f"{args.items} items of sim:slow={args.agent_seconds}, concurrency {args.concurrency} "
        f"({head_units} units on the head, {worker_units} on the worker): ideal {ideal:.1f} s"
    )
    with local_cluster({"sim": head_units}, {"sim": worker_units}) as cluster:
        runs: dict[str, list[tuple[float, float]]] = {"local": [], "ray": []}
        for repeat in range(args.repeats):
            for executor in ("local", "ray"):
                wall, span, own, lead, summary = run(
                    executor, args.items, args.concurrency, args.agent_seconds, cluster.env()
                )
                busy = own / (args.concurrency * span)
                runs[executor].append((ideal / wall, busy))
                print(
                    f"  #{repeat + 1} {executor:>5}: wall {wall:5.1f} s = {lead:4.1f} s to the "
                    f"first item + {span:5.1f} s of items + {wall - lead - span:4.1f} s after; "
                    f"efficiency {ideal / wall:5.1%}, busy {busy:5.1%} ({summary})"
                )
        print("medians:")
        for executor, rows in runs.items():
            efficiency = statistics.median(e for e, _ in rows)
            busy = statistics.median(b for _, b in rows)
            print(f"  {executor:>5}: efficiency {efficiency:5.1%}, busy {busy:5.1%}")


if __name__ == "__main__":
    main()
