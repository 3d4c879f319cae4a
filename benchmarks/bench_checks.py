"""What an edit item's hidden checks cost the harness, per item, beside the agent's own time.

Builds an edit fixture of 12 and of 48 shards (``tests/harness/editkit.py``: one module per
shard plus a shared CHANGELOG.md, two unittest checks per shard) and an honest final tree
for each, then times, median of several runs each:

* ``run_checks``: the fresh shipped copy, the declared files taken over it, the checks
  copied beside it, the one runner process (``python -I -S -B``) running every shard, and
  the sweep of what it left; with the process's own share (start to exit) and the sum of
  the shards' own times as the runner measured them;
  and the CPU time it used, harness and runner together (load-independent);
* ``collect_tree``: the whole ``checks`` phase of an item (the above, plus each declared
  file's diff, the walk for undeclared paths and writing edits.json);
* an item of the honest simulated agent on the same fixture through ``run_item``: its
  ``agent`` phase (the sim's own time, the stand-in for a model's) beside its ``checks``
  phase, as item.json records them.

The target (issue 39) is <= 1 s per item for 12 shards.

    uv run python benchmarks/bench_checks.py [--repeats 7] [--sizes 12,48]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "harness"))  # the test's own fixture builder

from editkit import agent_repo, make_edit_fixture  # noqa: E402 -- after the path above

from harness.agents import parse_agent  # noqa: E402
from harness.fixtures import Fixture  # noqa: E402
from harness.item.checks import run_checks  # noqa: E402
from harness.item.lifecycle import ItemOptions, run_item  # noqa: E402
from harness.item.tree import collect_tree  # noqa: E402
from harness.plan import WorkItem  # noqa: E402

#: Enough runs for a stable median on a shared 2-core machine, in well under a minute.
DEFAULT_REPEATS = 7
#: The issue's target size (12) and a wide fixture's (48).
DEFAULT_SIZES = (12, 48)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def cpu_s() -> float:
    """CPU seconds this process and its reaped children have used (user + system): what the
    checks cost a loaded machine, whatever the wall clock says there."""
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def measure(shards: int, repeats: int, scratch: Path) -> dict[str, list[float]]:
    """``repeats`` timings of each step for a fixture of ``shards`` shards."""
    fixture = make_edit_fixture(scratch / f"fx{shards}", shards=shards)
    repo = agent_repo(fixture, scratch / f"repo{shards}")
    times: dict[str, list[float]] = {
        "run_checks": [],
        "cpu": [],
        "shards": [],
        "collect_tree": [],
        "agent": [],
        "item_checks": [],
    }
    run_checks(fixture.path, fixture.manifest, repo, scratch / f"warm{shards}")  # page cache, pyc
    for i in range(repeats):
        work = scratch / f"w{shards}-{i}"
        start, cpu = time.perf_counter(), cpu_s()
        run = run_checks(fixture.path, fixture.manifest, repo, work)
        times["run_checks"].append(time.perf_counter() - start)
        times["cpu"].append(cpu_s() - cpu)
        if run.error or {s.outcome for s in run.shards} != {"passed"}:
            raise SystemExit(f"{shards} shards: the honest tree did not pass: {run}")
        times["shards"].append(sum(s.seconds for s in run.shards))
        item = scratch / f"item{shards}-{i}"
        item.mkdir()
        start = time.perf_counter()
        collect_tree(fixture, repo, item, scratch / f"t{shards}-{i}")
        times["collect_tree"].append(time.perf_counter() - start)
        shutil.rmtree(work)
        phases = sim_item(fixture, scratch / f"sim{shards}-{i}")
        times["agent"].append(phases["agent"])
        times["item_checks"].append(phases["checks"])
    return times


def sim_item(fixture: Fixture, item_dir: Path) -> dict[str, float]:
    """The phases (seconds) of one honest sim item on ``fixture``, as its item.json says."""
    work = WorkItem(fixture=fixture, agent=parse_agent("sim"), model="sim/honest", trial=1)
    run_item(work, ItemOptions(timeout_s=120), item_dir)
    meta = json.loads((item_dir / "item.json").read_text())
    return {k: float(v) for k, v in meta["phases_s"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"hidden checks per item, median of {args.repeats} (ms)")
    print(
        "shards  run_checks  (its CPU)  (shards' own)  collect_tree   | a sim item: agent  checks"
    )
    with tempfile.TemporaryDirectory(prefix="bench-checks-") as tmp:
        for n in sizes:
            t = measure(n, args.repeats, Path(tmp))
            med = {k: statistics.median(v) for k, v in t.items()}
            print(
                f"{n:6d}  {ms(med['run_checks'])}     {ms(med['cpu'])}  {ms(med['shards'])}      "
                f"{ms(med['collect_tree'])}      | {ms(med['agent'])}  {ms(med['item_checks'])}"
            )


if __name__ == "__main__":
    main()
