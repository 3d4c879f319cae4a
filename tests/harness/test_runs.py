"""Past runs: statuses, resolved rates and `latest`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sim_runs import sim_run

from harness.errors import UsageError
from harness.runs.catalog import list_runs, owner_alive, owner_record, resolve_run


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _dead_owner() -> dict[str, object]:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    record = {"pid": proc.pid, "started": 0.0}
    proc.wait()
    return record


def _run_json(run_id: str, owner: object) -> dict[str, object]:
    options = {
        "agent": "sim:honest",
        "models": ["sim/oracle"],
        "trials": 2,
        "fixture_paths": ["/x/tiny"],
    }
    return {
        "run_id": run_id,
        "created_at": "2026-01-01T00:00:00+00:00",
        "options": options,
        "owner": owner,
    }


def test_statuses_from_what_is_on_disk(tmp_path: Path) -> None:
    # running: run.json owned by a live process (this one), no report yet
    _write(
        tmp_path / "20260101T000001Z-a" / "run.json",
        _run_json("20260101T000001Z-a", owner_record()),
    )
    # killed before its report: shown as interrupted
    _write(
        tmp_path / "20260101T000002Z-b" / "run.json", _run_json("20260101T000002Z-b", _dead_owner())
    )
    _write(
        tmp_path / "20260101T000002Z-b" / "items" / "x" / "result.json",
        {"key": "tiny:sim/oracle:1", "fixture": "tiny", "status": "resolved", "resolved": True},
    )
    (tmp_path / "not-a-run").mkdir()
    runs = {r.run_id: r for r in list_runs(tmp_path)}
    assert set(runs) == {"20260101T000001Z-a", "20260101T000002Z-b"}
    assert runs["20260101T000001Z-a"].status == "running"
    killed = runs["20260101T000002Z-b"]
    assert killed.status == "interrupted" and (killed.resolved, killed.scored) == (1, 1)
    assert killed.fixtures == ("tiny",) and killed.trials == 2


def test_owner_alive_refuses_a_reused_pid() -> None:
    me = owner_record()
    assert owner_alive(me)
    assert not owner_alive({**me, "started": me["started"] - 3600})
    assert not owner_alive(None) and not owner_alive({"pid": "1"})


@pytest.mark.e2e
def test_complete_runs_and_latest(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no finished run"):
        resolve_run("latest", tmp_path)
    first = sim_run(tmp_path, "honest")
    second = sim_run(tmp_path, "wrong-answer")
    runs = list_runs(tmp_path)
    assert [r.path for r in runs] == [first, second]
    assert [r.status for r in runs] == ["complete", "complete"]
    assert [r.resolved_rate for r in runs] == [1.0, 0.0]
    assert runs[0].agent == "sim:honest" and runs[0].models == ("sim/honest",)
    assert resolve_run("latest", tmp_path) == second
    assert resolve_run(str(first), tmp_path) == first
