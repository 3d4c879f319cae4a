"""The Ray executor on a real local cluster (``-m distributed``): placement, bundles, scoring
on the head, interruption and node loss, with the simulated agent.

One cluster (a head and a worker node, see ``ray_cluster``) serves the module; node loss
kills the worker, so it runs last.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ray_cluster import Cluster, local_cluster
from test_reliability import token_processes

pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray)")

pytestmark = pytest.mark.distributed

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
#: A sim item run this long is surely mid-agent when the test acts on it.
SLOW_S = 30
#: How long the harness gets to finish after an interrupt (cancel grace included).
STOP_TIMEOUT_S = 90


def node_dirs() -> set[Path]:
    """The executor's per-item scratch dirs on this machine's nodes."""
    from harness.executors.ray import NODE_TMP_PREFIX
    from harness.item.leftovers import temp_roots

    return {p for root in temp_roots() for p in root.glob(NODE_TMP_PREFIX + "*")}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    before = node_dirs()
    with local_cluster() as started:
        yield started
    # Items cancelled by force or lost with their node never clean up after themselves;
    # their dirs name their (now dead) owner, and the clean-up every run starts with (and
    # `clean`) removes them: the tier leaves nothing behind.
    subprocess.run([sys.executable, "-m", "harness", "clean"], cwd=REPO, check=True, timeout=120)
    left = node_dirs() - before
    assert left == set(), {str(p): sorted(c.name for c in p.iterdir()) for p in left}


def harness(cluster: Cluster, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable, "-m", "harness", "run", "--runs-dir", str(tmp_path / "runs"),
            "--json", "--executor", "ray", "--ray-address", cluster.address, *args,
        ],
        cwd=REPO,
        env=cluster.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=timeout)
    assert out, err
    return proc.returncode, json.loads(out), err


def wait_for(predicate, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)


def test_items_run_on_the_node_with_the_resource(cluster: Cluster, tmp_path: Path) -> None:
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim", "--trials", "3",
                "--concurrency", "2", "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    assert [i["status"] for i in report["items"]] == ["resolved"] * 3
    runs = tmp_path / "runs"
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    nodes = set()
    for item in report["items"]:
        folder = run / "items" / item["item_dir"]
        meta = json.loads((folder / "item.json").read_text())
        assert meta["executor"]["name"] == "ray"
        nodes.add(meta["executor"]["node_id"])
        assert meta["fixture_path"] == TINY  # the head's fixture, not the node's temp copy
        # Where the task's time went beside the item's phases, one clock per side.
        timing = meta["executor"]["timing_s"]
        assert set(timing) == {"unpack", "item", "pack", "task", "ray"}
        assert all(v >= 0 for v in timing.values()), timing
        assert timing["task"] >= timing["item"] >= meta["phases_s"]["agent"], timing
        # The bundle is whole and re-scores on the head to the same verdict.
        rescored = subprocess.run(
            [sys.executable, "-m", "harness", "score", str(folder)],
            cwd=REPO, capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert json.loads(rescored.stdout)["status"] == "resolved"
    assert not list((run / "items").glob(".incoming-*"))
    assert "ray: 2 of 2 workers warmed in " in err  # before the first item
    head = cluster_head_node(cluster)
    assert head not in nodes and len(nodes) == 1  # only the worker offers sim-worker


#: Run in a process of its own (a Ray driver): warm the workers the resource sim-worker
#: offers (two, on the worker node), then ask one of them what it has loaded.
WARM_PROBE = """
import json, os, sys, threading
import ray
from harness.agents import parse_agent
from harness.executors.ray import RayExecutor
from harness.plan import ExecutorSettings

def loaded():
    wanted = ("harness.executors.ray", "harness.agents.sim", "genai_prices")
    return os.getpid(), [m for m in wanted if m in sys.modules]

settings = ExecutorSettings(name="ray", ray_address=sys.argv[1], ray_resource="sim-worker")
with RayExecutor(settings) as executor:
    note = executor.warm_up([parse_agent("sim")], 4, threading.Event())
    probe = ray.remote(num_cpus=0, resources={"sim-worker": 1})(loaded)
    pid, modules = ray.get(probe.remote())
print(json.dumps({"note": note, "modules": modules}))
"""


def test_workers_are_warm_before_the_first_item(cluster: Cluster) -> None:
    """A cold worker starts Python, imports Ray, the item task's module, the agent's adapter
    and the price library while the first item's slot waits (seconds each, tens on a loaded
    node): the warm-up starts one per unit the resource offers (at most as many as items
    can run at once) with all of that loaded, and the items' tasks land in them."""
    done = subprocess.run(
        [sys.executable, "-c", WARM_PROBE, cluster.address],
        cwd=REPO, env={**cluster.env(), "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["note"].startswith("ray: 2 of 2 workers warmed in "), got
    assert got["modules"] == ["harness.executors.ray", "harness.agents.sim", "genai_prices"]


def test_slots_bound_agents_and_nodes_prepare_while_they_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    """As locally, a slot is held from the agent's launch to its exit: with one slot and
    two units, the second item's task prepares its workspace while the first item's agent
    runs, asks the head for the slot and launches its agent once the first one has exited
    (it held the slot through its own preparation and clean-up before: a fifth of the
    slots' time at two-second agents)."""
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim:slow=3", "--trials", "2",
                "--concurrency", "1", "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    (run,) = [d for d in (tmp_path / "runs").iterdir() if d.is_dir()]
    agents = []
    for item in report["items"]:
        meta = json.loads((run / "items" / item["item_dir"] / "item.json").read_text())
        phases = meta["phases_s"]
        launched = meta["started_at"] + phases["workspace"] + phases["slot_wait"]
        agents.append((launched, launched + phases["agent"], phases["slot_wait"]))
    first, second = sorted(agents)
    assert second[0] >= first[1] - 0.1  # one agent at a time (clocks rounded to ms)
    assert second[2] > 1.0, agents  # it was ready well before the slot was free


def test_items_the_provider_failed_are_retried_on_the_cluster(
    cluster: Cluster, tmp_path: Path
) -> None:
    """``--retries`` wraps each attempt's task: a provider error runs again on a node, its
    earlier attempts' bundles kept under the item on the head."""
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim:throttled=0.5",
                "--trials", "6", "--retries", "6", "--retry-backoff", "0", "--concurrency", "2",
                "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    assert [i["status"] for i in report["items"]] == ["resolved"] * 6
    retried = [i for i in report["items"] if i["attempts"] > 1]
    assert retried  # P = 0.5 over 6 items, seed 0
    (run,) = [d for d in (tmp_path / "runs").iterdir() if d.is_dir()]
    for item in retried:
        for attempt in item["earlier"]:
            kept = run / "items" / item["item_dir"] / attempt["dir"]
            assert json.loads((kept / "item.json").read_text())["executor"]["name"] == "ray"
    assert not list((run / "items").glob(".attempts-*")) and not list(
        (run / "items").glob(".incoming-*")
    )


def test_solo_twins_run_on_the_cluster_and_pair_with_their_items(
    cluster: Cluster, tmp_path: Path
) -> None:
    """``--solo`` on Ray: each twin is an item a node runs like any other, and the report
    pairs it with its swarm item."""
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim", "--solo", "--trials", "2",
                "--concurrency", "2", "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    agents = sorted(i["agent"] for i in report["items"])
    assert agents == ["sim", "sim", "sim+solo", "sim+solo"]
    assert all(i["status"] == "resolved" for i in report["items"])
    (run,) = [d for d in (tmp_path / "runs").iterdir() if d.is_dir()]
    for item in report["items"]:
        meta = json.loads((run / "items" / item["item_dir"] / "item.json").read_text())
        assert meta["executor"]["name"] == "ray"
        assert meta["arm"] == ("solo" if item["agent"] == "sim+solo" else "swarm")
    (overall,) = [o for o in report["overall"] if o["swarm_vs_solo"] is not None]
    assert overall["swarm_vs_solo"]["pairs"] == 2


def test_trials_auto_runs_its_sequences_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """``--trials auto`` hands out trials as results come back from the nodes."""
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim", "--trials", "auto",
                "--max-trials", "30", "--precision", "0.2", "--concurrency", "2",
                "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    (summary,) = report["summary"]
    assert summary["stop_reason"] == "precise", summary["sequential"]
    trials = sorted(i["trial"] for i in report["items"])
    assert trials == list(range(1, len(trials) + 1)) and len(trials) < 30


def test_an_edit_item_runs_its_hidden_checks_on_the_node(cluster: Cluster, tmp_path: Path) -> None:
    """An edit fixture's item on a node: the node's copy of the fixture brings the hidden
    checks (never into the agent's repo), they run there after the agent, and the bundle
    brings edits.json to the head, where it re-scores to the same verdict."""
    code, report, err = finish(
        harness(cluster, tmp_path, "--fixture", "edit-smoke", "--agent", "sim",
                "--ray-resource", "sim-worker")
    )  # fmt: skip
    assert code == 0, err
    (item,) = report["items"]
    assert item["status"] == "resolved"
    (run,) = [d for d in (tmp_path / "runs").iterdir() if d.is_dir()]
    folder = run / "items" / item["item_dir"]
    assert json.loads((folder / "item.json").read_text())["executor"]["name"] == "ray"
    edits = json.loads((folder / "edits.json").read_text())
    assert edits["checks"]["error"] is None and edits["undeclared"] == []
    assert [s["outcome"] for s in edits["checks"]["shards"]] == ["passed"] * 3
    rescored = subprocess.run(
        [sys.executable, "-m", "harness", "score", str(folder)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(rescored.stdout)["status"] == "resolved"


def cluster_head_node(cluster: Cluster) -> str:
    out = subprocess.run(
        [sys.executable, "-c",
         f"import ray, json; ray.init(address={cluster.address!r}, log_to_driver=False);"
         "print(json.dumps([n['NodeID'] for n in ray.nodes() if n['Alive'] "
         "and 'sim-worker' not in n['Resources']]))"],
        env={**cluster.env(), "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"},
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    (head,) = json.loads(out.strip().splitlines()[-1])
    return str(head)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupt_cancels_remote_items_and_their_processes(
    cluster: Cluster, tmp_path: Path, sig: signal.Signals
) -> None:
    proc = harness(cluster, tmp_path, "--fixture", TINY, "--agent", f"sim:slow={SLOW_S}",
                   "--trials", "3", "--concurrency", "3")  # fmt: skip
    runs = tmp_path / "runs"
    wait_for(lambda: runs.is_dir() and len(token_processes(runs)) >= 2, timeout=120)
    started = time.monotonic()
    proc.send_signal(sig)
    code, report, err = finish(proc, timeout=STOP_TIMEOUT_S)
    assert code == 130, err
    assert report["interrupted"] is True
    assert time.monotonic() - started < SLOW_S  # stopped, not waited out
    assert all(i["status"] == "error" for i in report["items"])
    wait_for(lambda: token_processes(runs) == [], timeout=10)
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    assert not list((run / "items").glob(".incoming-*"))


def test_node_loss_errors_its_item_siblings_go_on_resume_reruns(
    cluster: Cluster, tmp_path: Path
) -> None:
    # Two items: one on the head (sim: 1), one on the worker; the worker's raylet dies.
    proc = harness(cluster, tmp_path, "--fixture", TINY, "--agent", "sim:slow=6",
                   "--trials", "2", "--concurrency", "2")  # fmt: skip
    runs = tmp_path / "runs"
    # The worker's item must still be running when its node dies: wait until an item's
    # process runs there (a process count alone could be two processes of the head's item,
    # the worker's not yet started, and then both items ran on the head: issue 20).
    wait_for(lambda: runs.is_dir() and cluster.on_worker(token_processes(runs)), timeout=120)
    cluster.kill_worker_node()
    code, report, err = finish(proc)
    statuses = sorted(i["status"] for i in report["items"])
    assert statuses == ["error", "resolved"], err
    (lost,) = [i for i in report["items"] if i["status"] == "error"]
    assert "lost with its Ray node" in lost["facts"]["error"], lost["facts"]["error"]
    assert code == 3 or code == 1, err
    # The dead node's agent (same machine here) is ended by its own clock; do not wait for it.
    for leftover in token_processes(runs):
        leftover.kill()
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    resumed = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--runs-dir", str(runs), "--json",
         "--resume", str(run), "--executor", "ray", "--ray-address", cluster.address],
        cwd=REPO, env=cluster.env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert [i["status"] for i in again["items"]] == ["resolved", "resolved"]
