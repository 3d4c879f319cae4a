"""``export`` and ``score --trajectory`` end to end on real sim runs: every plan's items
exported as ATIF, valid by the ``atif`` models, re-scored from the file alone to the verdict
the run gave them; forged trajectories caught by the same rules; another tool's trajectory
(no harness fields) scored, and unscorable where it lacks what a criterion needs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from atif import Trajectory

from harness.export.atif import MAX_TEXT_CHARS, ItemFacts, write_trajectory
from harness.export.rescore import score_trajectory
from harness.model.trajectory import Call, Result, Swarm, Thread, Turn
from scorers.records import LedgerParse, RunEvidence
from scorers.tokens import TokenUsage
from sim_agent import config as sim_config

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"
#: Every plan of the sim that spawns or answers, and wrong answers.
PLANS = (  # every plan a read fixture plays (the edit-only ones are refused on it)
    *(
        p
        for p in sim_config.PLANS
        if p not in (*sim_config.REFUSED_PLANS, *sim_config.EDIT_ONLY, "noop")
    ),
    "wrong-answer",
)

pytestmark = pytest.mark.slow


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One sim run of every plan on smoke-orders, exported (the run directory)."""
    runs = tmp_path_factory.mktemp("export") / "runs"
    models = [arg for plan in PLANS for arg in ("--model", f"sim/{plan}")]
    done = _harness(
        "run", "--fixture", "smoke-orders", "--agent", "sim", *models,
        "--runs-dir", str(runs), "--concurrency", "2", "--max-provider-errors", "0",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    done = _harness("export", str(run))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split()) == len(PLANS)
    return run


def _documents(run: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Item key -> (its trajectory, its result.json)."""
    out = {}
    for path in sorted((run / "trajectories").glob("*/trajectory.json")):
        result = json.loads((run / "items" / path.parent.name / "result.json").read_text())
        out[result["key"]] = (json.loads(path.read_text()), result)
    return out


def test_every_item_is_valid_atif_with_its_subagents_linked(exported: Path) -> None:
    docs = _documents(exported)
    assert len(docs) == len(PLANS)
    for key, (doc, result) in docs.items():
        Trajectory.model_validate(doc)  # raises on anything the format's models refuse
        assert doc["schema_version"] == "ATIF-v1.8"
        ours = doc["extra"]["swarm_harness"]
        assert ours["item_key"] == key and ours["run_id"] == exported.name
        checks = {c["name"]: c["passed"] for c in result["score"]["checks"]}
        assert {k: v["passed"] for k, v in ours["verdicts"].items()} == checks
        embedded = {s["trajectory_id"] for s in doc.get("subagent_trajectories", ())}
        refs = [
            ref
            for step in doc["steps"]
            for res in step.get("observation", {}).get("results", ())
            for ref in res.get("subagent_trajectory_ref", ())
            if ref["extra"]["swarm_harness"]["role"] == "spawn"
        ]
        assert len(refs) == result["score"]["total_spawns"], key
        # A spawn with a session links to its embedded child, from the call that made it.
        for ref in refs:
            assert (ref["trajectory_id"] in embedded) == ref["extra"]["swarm_harness"][
                "has_session"
            ]
        if key.endswith("sim/honest:1"):
            assert len(refs) == 3 and embedded == {r["trajectory_id"] for r in refs}
            spawning = [s for s in doc["steps"] if any(
                r.get("subagent_trajectory_ref") and r.get("source_call_id")
                for r in s.get("observation", {}).get("results", ()))]  # fmt: skip
            assert spawning and all(s["tool_calls"] for s in spawning)


def test_final_metrics_equal_the_items_usage(exported: Path) -> None:
    for key, (doc, result) in _documents(exported).items():
        total = result["score"]["usage"]["total"]
        final = doc["final_metrics"]
        prompt = total["input_tokens"] + total["cache_read_tokens"] + total["cache_write_tokens"]
        assert final["total_prompt_tokens"] == prompt, key
        assert final["total_completion_tokens"] == total["output_tokens"], key
        assert final["total_cached_tokens"] == total["cache_read_tokens"], key
        assert final["total_steps"] == len(doc["steps"])
        children = sum(
            s["final_metrics"]["total_completion_tokens"]
            for s in doc.get("subagent_trajectories", ())
        )
        if key.endswith("sim/hollow-children:1"):
            # Its children's sessions hold no model turns while the parent's transcript
            # attributes usage to them: each subagent says what its own session shows.
            assert children == 0 < result["score"]["usage"]["children"]["output_tokens"]
        else:
            assert children == result["score"]["usage"]["children"]["output_tokens"], key


def test_read_back_gives_every_item_its_verdict(exported: Path) -> None:
    seen = set()
    for key, (_, result) in _documents(exported).items():
        path = exported / "trajectories" / result["item_dir"] / "trajectory.json"
        verdict = score_trajectory(path, None, [FIXTURES])
        checks = {c["name"]: c["passed"] for c in result["score"]["checks"]}
        got = {name: v["verdict"] == "pass" for name, v in verdict["criteria"].items()}
        assert got == checks, (key, verdict["criteria"])
        assert all(verdict["as_exported"].values())
        seen.add(tuple(sorted(checks.items())))
    assert len(seen) >= 5  # the plans fail different criteria: the read-back is not trivial


def test_the_report_links_each_item_to_its_trajectory(exported: Path) -> None:
    page = (exported / "report.html").read_text()
    for _, (_, result) in _documents(exported).items():
        assert f'href="trajectories/{result["item_dir"]}/trajectory.json"' in page


def _honest(run: Path) -> tuple[dict[str, Any], Path]:
    (path,) = (run / "trajectories").glob("*sim_honest*/trajectory.json")
    return json.loads(path.read_text()), path


def _verdict(doc: dict[str, Any], tmp_path: Path, fixture: str = "smoke-orders") -> dict[str, str]:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    done = score_trajectory(path, fixture, [FIXTURES])
    return {name: v["verdict"] for name, v in done["criteria"].items()}


def _receipt_refs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        ref
        for step in doc["steps"]
        for res in step.get("observation", {}).get("results", ())
        for ref in res.get("subagent_trajectory_ref", ())
        if ref["extra"]["swarm_harness"]["role"] == "reply"
    ]


def test_a_childs_answer_moved_to_another_child_fails_provenance(
    exported: Path, tmp_path: Path
) -> None:
    doc, _ = _honest(exported)
    assert set(_verdict(doc, tmp_path).values()) == {"pass"}
    forged = copy.deepcopy(doc)
    replies = [
        res
        for step in forged["steps"]
        for res in step.get("observation", {}).get("results", ())
        if any(
            r["extra"]["swarm_harness"]["role"] == "reply"
            for r in res.get("subagent_trajectory_ref", ())
        )
    ]
    assert len(replies) == 3
    replies[0]["content"], replies[1]["content"] = replies[1]["content"], replies[0]["content"]
    verdict = _verdict(forged, tmp_path)
    assert verdict["provenance"] == "fail" and verdict["coverage"] == "pass"


def test_a_spawn_without_its_subagent_trajectory_fails_delegation(
    exported: Path, tmp_path: Path
) -> None:
    doc, _ = _honest(exported)
    forged = copy.deepcopy(doc)
    forged["subagent_trajectories"] = forged["subagent_trajectories"][1:]
    verdict = _verdict(forged, tmp_path)
    assert verdict["delegation"] == "fail" and verdict["provenance"] == "fail"
    assert verdict["receipts"] == "pass"  # its reply is still there: only the session is gone


def _foreign(doc: dict[str, Any]) -> dict[str, Any]:
    """The honest trajectory as another tool would write it: no harness fields, each child
    spawned by a Task call with its worker as the description and its reply as that call's
    result, the answer written by a Write call."""
    children = []
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": doc["steps"][0]["message"]}
    ]
    calls, results = [], []
    for index, sub in enumerate(doc["subagent_trajectories"], start=1):
        spawn = next(
            ref for step in doc["steps"] for res in step.get("observation", {}).get("results", ())
            for ref in res.get("subagent_trajectory_ref", ())
            if ref["trajectory_id"] == sub["trajectory_id"] and ref["extra"]["swarm_harness"]["role"] == "spawn"
        )  # fmt: skip
        reply = next(r for r in _receipt_refs(doc) if r["trajectory_id"] == sub["trajectory_id"])
        final = [s for s in sub["steps"] if s["source"] == "agent"][-1]
        final = {**final, "message": "ANSWER " + _reply_text(doc, reply)}
        task = {k: v for k, v in sub["steps"][0].items() if k != "extra"}
        child = {
            "schema_version": "ATIF-v1.8",
            "trajectory_id": sub["trajectory_id"],
            "agent": {"name": "other", "version": "1"},
            "steps": [task, {k: v for k, v in final.items() if k != "extra"} | {"step_id": 2}],
        }
        children.append(child)
        call_id = f"toolu_{index}"
        calls.append({
            "tool_call_id": call_id, "function_name": "Task",
            "arguments": {"description": spawn["extra"]["swarm_harness"]["worker"], "prompt": "..."},
        })  # fmt: skip
        results.append({
            "source_call_id": call_id, "content": final["message"],
            "subagent_trajectory_ref": [{"trajectory_id": sub["trajectory_id"]}],
        })  # fmt: skip
    stamp = doc["steps"][-1].get("timestamp")
    steps.append({
        "step_id": 2, "source": "agent", "message": "", "tool_calls": calls,
        "observation": {"results": results}, "timestamp": doc["steps"][1]["timestamp"],
    })  # fmt: skip
    bullets = "".join(
        f"- {f}: {a}\n" for f, a in doc["extra"]["swarm_harness"]["answer"]["bullets"]
    )
    steps.append({
        "step_id": 3, "source": "agent", "message": "", "timestamp": stamp,
        "tool_calls": [{"tool_call_id": "w", "function_name": "Write",
                        "arguments": {"file_path": "/repo/combined-index.md", "content": bullets}}],
    })  # fmt: skip
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": "elsewhere",
        "agent": {"name": "other", "version": "1"},
        "steps": steps,
        "subagent_trajectories": children,
    }


def _reply_text(doc: dict[str, Any], ref: dict[str, Any]) -> str:
    for step in doc["steps"]:
        for res in step.get("observation", {}).get("results", ()):
            if ref in res.get("subagent_trajectory_ref", ()):
                return str(res["content"])
    raise AssertionError("no reply")


def test_another_tools_trajectory_is_scored_and_unscorable_where_it_lacks_evidence(
    exported: Path, tmp_path: Path
) -> None:
    doc, _ = _honest(exported)
    foreign = _foreign(doc)
    Trajectory.model_validate(foreign)
    assert set(_verdict(foreign, tmp_path).values()) == {"pass"}
    no_answer = copy.deepcopy(foreign)
    no_answer["steps"] = no_answer["steps"][:-1]
    verdict = _verdict(no_answer, tmp_path)
    assert verdict["coverage"] == verdict["provenance"] == "unscorable"
    assert verdict["delegation"] == "pass"
    unnamed = copy.deepcopy(foreign)
    for call in unnamed["steps"][1]["tool_calls"]:
        del call["arguments"]["description"]
    verdict = _verdict(unnamed, tmp_path)
    assert verdict["delegation"] == verdict["dedup"] == verdict["provenance"] == "unscorable"
    assert verdict["coverage"] == "pass"
    helper = copy.deepcopy(foreign)  # named, but not as the workers: a plain failure
    helper["steps"][1]["tool_calls"][0]["arguments"]["description"] = "helper"
    assert _verdict(helper, tmp_path)["delegation"] == "fail"


def test_a_large_output_is_cut_with_its_size() -> None:
    big = "x" * (MAX_TEXT_CHARS * 3)
    turn = Turn("agent", "", calls=(Call("c1", "Read", {"path": "a"}),),
                results=(Result("c1", big),), usage=TokenUsage(10, 2, 5, 1, 1))  # fmt: skip
    evidence = RunEvidence((), LedgerParse(()), None, None, None, (), 0)
    facts = ItemFacts(
        "r", "k", "f", 1, "resolved", "sim", None, "sim/honest", {}, (), {}, None, "a.md"
    )
    doc = write_trajectory(Swarm(Thread("p", (Turn("user", "task"), turn))), evidence, facts)
    Trajectory.model_validate(doc)
    (result,) = doc["steps"][1]["observation"]["results"]
    assert (
        len(result["content"]) < MAX_TEXT_CHARS + 100
        and "cut by swarm-harness" in result["content"]
    )
    assert result["extra"]["swarm_harness"]["cut_from_chars"] == len(big)
    assert doc["steps"][1]["metrics"] == {
        "prompt_tokens": 16, "completion_tokens": 2, "cached_tokens": 5,
        "extra": {"cache_write_tokens": 1, "reasoning_tokens": 1},
    }  # fmt: skip


def test_export_refuses_an_unknown_item_and_score_needs_one_input(exported: Path) -> None:
    done = _harness("export", str(exported), "--item", "nope:sim/x:1")
    assert done.returncode == 2 and "no item nope:sim/x:1" in done.stderr
    done = _harness("score")
    assert done.returncode == 2 and "--trajectory" in done.stderr


def test_a_credential_in_the_agents_records_is_redacted_in_the_export(tmp_path: Path) -> None:
    """A credential's value that reached the agent's transcript (here: the prompt's first
    words, so every parent transcript holds it) is redacted in the bundle, and so in the
    trajectory, like any file the harness writes."""
    secret = "coordinate a team of subagents"
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--fixture", "smoke-orders", "--agent", "sim",
         "--runs-dir", str(runs)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "DEMO_API_KEY": secret},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    assert _harness("export", str(run)).returncode == 0
    (path,) = (run / "trajectories").glob("*/trajectory.json")
    text = path.read_text(encoding="utf-8")
    assert secret not in text and "[REDACTED]" in json.loads(text)["steps"][0]["message"]


def test_score_trajectory_says_when_the_run_counted_the_item_an_error(tmp_path: Path) -> None:
    """An item the provider ended is an infrastructure error in its run (left out of its
    rates), whatever the rules say of what its trajectory shows: ``score --trajectory``
    says how the run counted it, and notes the error on stderr too."""
    runs = tmp_path / "runs"
    done = _harness(
        "run", "--fixture", "smoke-orders", "--agent", "sim", "--model", "sim/provider-down",
        "--model", "sim/honest", "--retries", "0", "--runs-dir", str(runs),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # exit 3: an infrastructure error
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    assert _harness("export", str(run)).returncode == 0
    down = run / "trajectories" / "smoke-orders__sim_provider-down__1" / "trajectory.json"
    done = _harness("score", "--trajectory", str(down))
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["as_run"]["status"] == "error"
    assert verdict["as_run"]["error"].startswith("provider: ")
    assert verdict["note"].startswith("the run counted this item as an infrastructure error (")
    assert done.stderr.startswith("note: the run counted this item as an infrastructure error")
    honest = run / "trajectories" / "smoke-orders__sim_honest__1" / "trajectory.json"
    done = _harness("score", "--trajectory", str(honest))
    verdict = json.loads(done.stdout)
    assert verdict["as_run"] == {"status": "resolved", "error": None}
    assert "note" not in verdict and done.stderr == ""
