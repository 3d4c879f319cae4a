"""The runs index at realistic sizes: how long writing ``index.html`` takes (every run
does it at its end) and how big the page is, for runs dirs of 10 to 400 runs.

One real sim run (``--trials`` items on the tiny fixture, two models) is made once and
copied under new run ids with spread-out start times, so each size is a runs dir a team
could have after weeks of CI. Each size is timed ``--repeat`` times; the median is printed.

    uv run python benchmarks/bench_index.py [--sizes 10,100,400] [--trials 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.agents import parse_agent  # noqa: E402
from harness.plan import RunConfig  # noqa: E402
from harness.run.execute import execute_run  # noqa: E402
from harness.runs.index import write_index  # noqa: E402

TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


def seed_run(root: Path, trials: int) -> Path:
    config = RunConfig(
        fixtures=(TINY,),
        models=("sim/honest", "sim/flaky=0.5"),
        agent=parse_agent("sim"),
        trials=trials,
        concurrency=2,
        runs_dir=root / "seed",
    )
    return execute_run(config).run_dir


def fill(runs: Path, seed: Path, count: int) -> None:
    """``count`` copies of ``seed`` (run.json and report.json, which is all the index
    reads, plus report.html for the link), a day apart."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for i in range(count):
        when = start + dt.timedelta(hours=6 * i)
        run_id = f"{when:%Y%m%dT%H%M%SZ}-{i:06x}"
        target = runs / run_id
        target.mkdir(parents=True)
        for name in ("report.json", "report.html", "run.json"):
            data = (seed / name).read_text(encoding="utf-8")
            if name.endswith(".json"):
                doc = json.loads(data)
                doc["run_id"] = run_id
                doc["created_at"] = when.isoformat()
                doc.pop("owner", None)
                data = json.dumps(doc)
            (target / name).write_text(data, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,400")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        root = Path(tmp)
        seed = seed_run(root, args.trials)
        size_kb = (seed / "report.json").stat().st_size / 1e3
        print(f"each run: {2 * args.trials} items, report.json {size_kb:.0f} KB")
        print(f"{'runs':>6} {'median s':>9} {'ms/run':>7} {'index KB':>9}")
        for size in (int(s) for s in args.sizes.split(",")):
            runs = root / f"runs-{size}"
            fill(runs, seed, size)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                page = write_index(runs)
                times.append(time.perf_counter() - t0)
            median = statistics.median(times)
            kb = page.stat().st_size / 1e3
            print(f"{size:>6} {median:>9.3f} {1e3 * median / size:>7.2f} {kb:>9.0f}")
            shutil.rmtree(runs)


if __name__ == "__main__":
    main()
