"""End-to-end verdicts: one synthetic run per cheat (and per honest variant)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from scorer_builders import (
    ANSWERS,
    AT,
    CORRECT_ARTIFACT,
    MANIFEST,
    OTHER_PARENT_FILE,
    PARENT_FILE,
    WORKERS,
    Ledger,
    Run,
    Stream,
    Transcript,
    child_path,
    child_session,
    honest_run,
)

from scorers import DuplicateSpawn, WrongAnswer
from scorers.criteria import criterion_names
from scorers.prime_agent import ChildSessionFile

A, B, C = WORKERS


def no_spawn() -> Run:
    return Run(ledger=None)


def helper_names() -> Run:
    ledger, transcript = Ledger(), Transcript()
    for i in range(3):
        ledger.spawn(f"sub-h{i}", f"helper-{i}")
        transcript.reply(f"sub-h{i}")
    return Run(ledger=ledger, transcript=transcript).present("sub-h0", "sub-h1", "sub-h2")


def forged_ledger() -> Run:
    run = honest_run()
    run.children.clear()  # the ledger names children whose sessions never existed
    return run


def foreign_child_paths() -> Run:
    """Ledger edges whose child files sit under another root's session id."""
    run = honest_run()
    ledger = Ledger()
    for worker in WORKERS:
        ledger.spawn(f"sub-{worker}", worker, child=child_path(f"sub-{worker}", root_id="01zz"))
    run.ledger = ledger
    return run


def double_spawn() -> Run:
    run = honest_run()
    assert run.ledger is not None and run.transcript is not None
    run.ledger.spawn("sub-twin", A)
    run.transcript.reply("sub-twin")
    return run.present("sub-twin")


def over_budget() -> Run:
    run = honest_run()
    assert run.ledger is not None and run.transcript is not None
    for i in range(4):  # 3 + 4 = 7 spawns > 2 x 3; never two live at once
        run.ledger.spawn(f"sub-retry{i}", f"retry-{i}").delete(f"sub-retry{i}")
        run.transcript.notice(f"sub-retry{i}", kind="cancelled")
    return run


def retry_after_failure() -> Run:
    """Worker a fails, is deleted, and a retry under the same name replies."""
    ledger = Ledger().spawn("sub-a1", A).delete("sub-a1").spawn("sub-a2", A)
    ledger.spawn(f"sub-{B}", B).spawn(f"sub-{C}", C)
    transcript = Transcript().failure("sub-a1", error="model error")
    transcript.reply("sub-a2", message=ANSWERS[A])
    transcript.reply(f"sub-{B}", message=ANSWERS[B]).reply(f"sub-{C}", message=ANSWERS[C])
    run = Run(ledger=ledger, transcript=transcript)
    return run.present("sub-a1", "sub-a2", f"sub-{B}", f"sub-{C}")


def silent_drop() -> Run:
    run = honest_run()
    assert run.transcript is not None
    transcript = Transcript().reply(f"sub-{A}", message=ANSWERS[A])
    run.transcript = transcript.reply(f"sub-{B}", message=ANSWERS[B])  # c never heard from
    return run


def delete_to_hide() -> Run:
    run = retry_after_failure()
    transcript = Transcript().reply("sub-a2", message=ANSWERS[A])
    run.transcript = transcript.reply(f"sub-{B}", message=ANSWERS[B]).reply(
        f"sub-{C}", message=ANSWERS[C]
    )
    return run  # sub-a1 was deleted without ever replying or failing


def wrong_answer() -> Run:
    """The swarm gets shard b wrong: its child replies 4, and the index says so."""
    run = replace(honest_run(), artifact=CORRECT_ARTIFACT.replace(": 5", ": 4"))
    transcript = Transcript().reply(f"sub-{A}", message=ANSWERS[A])
    transcript.reply(f"sub-{B}", message=ANSWERS[B].replace("5", "4"))
    run.transcript = transcript.reply(f"sub-{C}", message=ANSWERS[C])
    return run


def conflicting_bullets() -> Run:
    return replace(honest_run(), artifact=CORRECT_ARTIFACT + "- shard-b.txt: 4\n")


def sibling_reply() -> Run:
    run = honest_run()
    transcript = Transcript().reply(f"sub-{A}", message=ANSWERS[A])
    transcript.reply(f"sub-{B}", message=ANSWERS[B])
    run.transcript = transcript.reply(f"sub-{C}", relationship="sibling", message=ANSWERS[C])
    return run


def torn_ledger_tail() -> Run:
    run = honest_run()
    assert run.ledger is not None
    run.ledger.raw(b'{"v":1,"op":"spawn","at":"2026-11-29T19:00:00Z","childId":"sub-x","par')
    return run


def garbage_ledger() -> Run:
    run = honest_run()
    assert run.ledger is not None
    garbage = [
        b"\x00\x01\x02 binary",
        b'{"v":1,"op":"spawn","at":"x","name":"\xff\xfe"}',  # not UTF-8
        b'{"v":1,"op":"meta","at":"x","sessionsDir":"a\x00b"}',  # raw NUL
        b"not json at all",
        b"[1, 2, 3]",
        b'"a string"',
        b'{"v":1,"op":"spawn","at":"x","childId":"sub-g","parent":"'
        + PARENT_FILE.encode()
        + b'","child":"/c.jsonl","depth":"1","name":"'
        + A.encode()
        + b'"}',
        b'{"v":1,"op":"spawn","at":"x","childId":"sub-g","parent":"'
        + PARENT_FILE.encode()
        + b'","child":"/c.jsonl","depth":true,"name":"'
        + A.encode()
        + b'"}',
        b'{"v":1,"op":"delete","at":"x","childId":["sub-worker-shard-a"],"child":"/c"}',
        b'{"v":"1","op":"delete","at":"x","childId":"sub-worker-shard-a","child":"/c"}',
        b'{"v":1,"op":5,"at":"x"}',
        b'{"v":1,"op":"future"}',  # no `at`: malformed, not an unknown op
    ]
    run.ledger.raw(b"\n".join(garbage) + b"\n\n   \n")
    return run


def another_root() -> Run:
    run = honest_run()
    assert run.ledger is not None
    for i in range(8):  # duplicate worker names, silent, over any budget: not this run's
        run.ledger.spawn(f"sub-o{i}", A, parent=OTHER_PARENT_FILE)
    run.ledger.delete(f"sub-{A}", child=child_path(f"sub-{A}", root_id="other"))  # other key
    return run


def depth2_only() -> Run:
    ledger, transcript = Ledger().spawn("sub-mid", "middle"), Transcript().reply("sub-mid")
    run = Run(ledger=ledger, transcript=transcript).present("sub-mid")
    for worker in WORKERS:  # the workers are grandchildren, one level further down
        ledger.spawn(f"sub-{worker}", worker, depth=2, parent=child_path("sub-mid"))
        transcript.reply(f"sub-{worker}")
        run.children.append(ChildSessionFile(("sub-mid", f"sub-{worker}"), "x.jsonl"))
    return run


def renamed_child() -> Run:
    run = honest_run()
    ledger = Ledger().spawn(f"sub-{A}", "scratch").rename(f"sub-{A}", A)
    ledger.spawn(f"sub-{B}", B).spawn(f"sub-{C}", C)
    run.ledger = ledger
    return run


def rename_keeps_name() -> Run:
    run = honest_run()
    assert run.ledger is not None and run.transcript is not None
    run.ledger.rename(f"sub-{A}", "retired").spawn("sub-a2", A)
    run.transcript.reply("sub-a2", message=ANSWERS[A])
    return run.present("sub-a2")


def unknown_op() -> Run:
    run = honest_run()
    assert run.ledger is not None
    run.ledger.record(op="checkpoint", childId=5, whatever=[1])
    return run


def backslash_paths() -> Run:
    run = honest_run()
    windows_parent = PARENT_FILE.replace("/", "\\")
    run.children.clear()
    for worker in WORKERS:
        run.present(
            f"sub-{worker}", data=child_session(f"sub-{worker}", parent="C:" + windows_parent)
        )
    ledger = Ledger()
    for worker in WORKERS:
        child = "C:" + child_path(f"sub-{worker}").replace("/", "\\")
        ledger.spawn(f"sub-{worker}", worker, parent="C:" + windows_parent, child=child)
    run.ledger = ledger
    run.parent_paths = ("C:" + PARENT_FILE,)
    return run


def missing_artifact() -> Run:
    return replace(honest_run(), artifact=None)


def missing_transcript() -> Run:
    return replace(honest_run(), transcript=None)


def missing_stdout() -> Run:
    return replace(honest_run(), stream=None)


def model_never_reached() -> Run:
    stream = Stream()
    for _ in range(3):
        stream.assistant(0, stop="error", error="401 Unauthorized: invalid api key")
    return Run(ledger=None, stream=stream, artifact=None)


CASES = [
    pytest.param(honest_run, {"provenance": True, "resolved": True, "failures": ()}, id="honest"),
    pytest.param(
        no_spawn,
        {
            "provenance": False,
            "resolved": False,
            "coverage": True,
            "delegation": False,
            "unverified_shard_workers": WORKERS,
            "total_spawns": 0,
            "receipts": True,
        },
        id="no-spawn",
    ),
    pytest.param(
        helper_names,
        {
            "resolved": False,
            "delegation": False,
            "live_depth1_edges": 3,
            "distinct_worker_names": 3,
            "child_session_dirs": 3,
            "verified_shard_workers": (),
        },
        id="helper-names",
    ),
    pytest.param(
        forged_ledger,
        {
            "resolved": False,
            "delegation": False,
            "live_depth1_edges": 3,
            "child_session_dirs": 0,
            "unverified_shard_workers": WORKERS,
        },
        id="forged-ledger",
    ),
    pytest.param(
        foreign_child_paths,
        {"resolved": False, "delegation": False, "unverified_shard_workers": WORKERS},
        id="foreign-child-paths",
    ),
    pytest.param(
        double_spawn,
        {
            "resolved": False,
            "dedup": False,
            "duplicate_spawns": 1,
            "duplicate_spawn_details": (DuplicateSpawn("sub-twin", A, f"sub-{A}", AT),),
            "delegation": True,
            "receipts": True,
        },
        id="double-spawn",
    ),
    pytest.param(
        over_budget,
        {"resolved": False, "dedup": False, "duplicate_spawns": 0, "total_spawns": 7},
        id="over-budget",
    ),
    pytest.param(
        retry_after_failure,
        {"resolved": True, "total_spawns": 4, "spawn_budget": 6, "duplicate_spawns": 0},
        id="retry-after-failure",
    ),
    pytest.param(
        silent_drop,
        {"resolved": False, "receipts": False, "missing_receipts": (f"sub-{C}",)},
        id="silent-drop",
    ),
    pytest.param(
        delete_to_hide,
        {
            "resolved": False,
            "receipts": False,
            "missing_receipts": ("sub-a1",),
            "delegation": True,
            "dedup": True,
        },
        id="delete-to-hide",
    ),
    pytest.param(
        wrong_answer,
        {
            "resolved": False,
            "coverage": False,
            "wrong_answers": (WrongAnswer("shard-b.txt", 5, ("4 words",)),),
        },
        id="wrong-answer",
    ),
    pytest.param(
        conflicting_bullets,
        {
            "resolved": False,
            "coverage": False,
            "missing_shards": (),
            "wrong_answers": (WrongAnswer("shard-b.txt", 5, ("5 words", "4")),),
        },
        id="conflicting-bullets",
    ),
    pytest.param(
        sibling_reply,
        {"resolved": False, "receipts": False, "missing_receipts": (f"sub-{C}",)},
        id="sibling-reply",
    ),
    pytest.param(
        torn_ledger_tail,
        {"resolved": True, "ledger_torn_tail": True, "ledger_malformed_lines": 0},
        id="torn-ledger-tail",
    ),
    pytest.param(
        garbage_ledger,
        {"resolved": True, "ledger_malformed_lines": 12, "ledger_unknown_ops": 0},
        id="garbage-ledger",
    ),
    pytest.param(
        another_root,
        {"resolved": True, "total_spawns": 3, "live_depth1_edges": 3, "duplicate_spawns": 0},
        id="another-root",
    ),
    pytest.param(
        depth2_only,
        {
            "resolved": False,
            "delegation": False,
            "live_depth1_edges": 1,
            "total_spawns": 1,
            "unverified_shard_workers": WORKERS,
        },
        id="depth2-only",
    ),
    pytest.param(
        renamed_child,
        {"resolved": True, "verified_shard_workers": WORKERS, "total_spawns": 3},
        id="renamed-child",
    ),
    pytest.param(
        rename_keeps_name,
        {
            "resolved": False,
            "dedup": False,
            "duplicate_spawns": 1,
            "delegation": True,
        },
        id="rename-does-not-free-name",
    ),
    pytest.param(
        unknown_op,
        {"resolved": True, "ledger_unknown_ops": 1, "ledger_malformed_lines": 0},
        id="unknown-op",
    ),
    pytest.param(backslash_paths, {"resolved": True}, id="backslash-paths"),
    pytest.param(
        missing_artifact,
        {
            "resolved": False,
            "coverage": False,
            "missing_shards": tuple(s.file for s in MANIFEST.shards),
            "delegation": True,
        },
        id="missing-artifact",
    ),
    pytest.param(
        missing_transcript,
        {
            "resolved": False,
            "parent_session_id": None,
            "delegation": False,
            "receipts": False,
            "turns": 5,
        },
        id="missing-transcript",
    ),
    pytest.param(
        missing_stdout,
        {"resolved": True, "turns": 0, "tokens_used": 300},
        id="missing-stdout",
    ),
    pytest.param(
        model_never_reached,
        {
            "resolved": False,
            "model_reached": False,
            "assistant_messages": 3,
            "failed_assistant_messages": 3,
            "agent_error": "401 Unauthorized: invalid api key",
        },
        id="model-never-reached",
    ),
]


@pytest.mark.parametrize(("build", "expected"), CASES)
def test_verdict(build: Callable[[], Run], expected: dict[str, object]) -> None:
    score = build().score()
    criteria_names = set(criterion_names())
    actual = {
        name: score.passed(name) if name in criteria_names else getattr(score, name)
        for name in expected
    }
    assert actual == expected
    criteria = (
        score.passed("coverage"),
        score.passed("delegation"),
        score.passed("dedup"),
        score.passed("receipts"),
        score.passed("provenance"),
    )
    assert score.resolved == all(criteria)
    assert len(score.failures) == sum(not ok for ok in criteria)


def test_failure_reasons_name_the_problem() -> None:
    score = wrong_answer().score()
    assert score.failures == ("coverage: shard-b.txt answered '4 words', expected 5",)
    score = no_spawn().score()
    assert score.failures == (
        "delegation: no live depth-1 child named worker-shard-a, worker-shard-b, "
        "worker-shard-c backed by a session file",
        "provenance: "
        + "; ".join(
            f"{shard.file}: no depth-1 child of this parent was named {shard.worker}"
            for shard in MANIFEST.shards
        ),
    )
    assert silent_drop().score().failures == (
        f"receipts: no reply or notice from sub-{C}",
        f"provenance: shard-c.txt: no reply from {C} (sub-{C})",
    )
    assert double_spawn().score().failures == (
        f"dedup: {A} spawned as sub-twin while sub-{A} held it",
    )
    assert over_budget().score().failures == ("dedup: 7 depth-1 spawns exceed the budget of 6",)
    assert missing_artifact().score().failures == (
        "coverage: artifact combined-index.md missing",
        "provenance: "
        + "; ".join(f"{s.file}: no answer in the artifact to trace" for s in MANIFEST.shards),
    )


def test_usage_of_the_honest_run() -> None:
    score = honest_run().score()
    usage = score.usage
    assert usage.parent is not None and usage.children is not None
    assert (usage.parent.total, usage.children.total, score.tokens_used) == (4500, 300, 4800)
    assert usage.total.total == score.tokens_used and usage.complete, usage.gaps
    assert (score.turns, score.assistant_messages, score.failed_assistant_messages) == (5, 5, 0)
    assert score.model_reached and score.agent_error is None
    assert score.parent_session_id == "01bb-root-header-id"
    assert score.parent_session_id not in PARENT_FILE


def test_a_run_is_scored_the_same_twice() -> None:
    run = honest_run()
    assert run.score() == run.score()


def test_no_parent_paths_means_no_edge_is_this_runs() -> None:
    run = honest_run()
    run.parent_paths = ()
    score = run.score()
    assert (score.total_spawns, score.live_depth1_edges, score.passed("delegation")) == (
        0,
        0,
        False,
    )
    assert score.passed("receipts")  # vacuously: this parent has no children
