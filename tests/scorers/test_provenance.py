"""Provenance: one synthetic run per cheat, each failing provenance and nothing else."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from scorer_builders import (
    ANSWERS,
    CORRECT_ARTIFACT,
    OTHER_PARENT_FILE,
    SHARDS,
    WORKERS,
    Run,
    Transcript,
    child_session,
    honest_run,
)

from scorers import Shard
from scorers.provenance import CLOCK_TOLERANCE_S, AnswerValue, answer_values, states_value

A, B, C = WORKERS


def _replies(**messages: str | None) -> Transcript:
    """Replies from the three workers (their honest answers unless given; ``None``: none)."""
    transcript = Transcript()
    for worker in WORKERS:
        message = messages.get(worker.removeprefix("worker-").replace("-", "_"), ANSWERS[worker])
        if message is not None:
            transcript.reply(f"sub-{worker}", message=message)
    return transcript


def _with_child(run: Run, worker: str, data: bytes) -> Run:
    """``run`` with ``worker``'s collected session file replaced by ``data``."""
    run.children = [c for c in run.children if c.subdirs != (f"sub-{worker}",)]
    return run.present(f"sub-{worker}", data=data)


def self_answer() -> Run:
    """Children end without replying (the runtime notices them) and the parent answers."""
    run = honest_run()
    transcript = Transcript()
    for worker in WORKERS:
        transcript.notice(f"sub-{worker}")
    run.transcript = transcript
    return run


def answer_mismatch() -> Run:
    """Child b replies 4; the index states the expected 5."""
    run = honest_run()
    run.transcript = _replies(shard_b=ANSWERS[B].replace("5", "4"))
    return run


def borrowed_reply() -> Run:
    """Child a replies with shard c's answer too; child c only ever fails."""
    run = honest_run()
    transcript = _replies(shard_a=f"{ANSWERS[A]} and {ANSWERS[C]}", shard_c=None)
    run.transcript = transcript.failure(f"sub-{C}")
    return run


def value_in_file_name() -> Run:
    """Child c's reply names a file holding the digit 6 but states no count."""
    run = honest_run()
    run.transcript = _replies(shard_c="Looked at depot-06.tsv and shard-6.txt; done.")
    return run


def hollow_children() -> Run:
    run = honest_run()
    for worker in WORKERS:
        _with_child(run, worker, child_session(f"sub-{worker}", hollow=True))
    return run


def copied_from_another_run() -> Run:
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", parent=OTHER_PARENT_FILE))


def copied_from_a_sibling() -> Run:
    """Child a's file holds the task addressed to child b."""
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", task_for=f"sub-{B}"))


def task_from_someone_else() -> Run:
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", task_from="01zz-other-root"))


def grandchild_session() -> Run:
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", depth=2))


def every_turn_failed() -> Run:
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", stops=("error", "aborted")))


def unreadable_child_file() -> Run:
    run = honest_run()
    return _with_child(run, A, b"\x00\xff not a session\n")


def backdated_reply() -> Run:
    run = honest_run()
    transcript = Transcript().reply(f"sub-{A}", message=ANSWERS[A], at="2026-11-29T17:00:00Z")
    run.transcript = transcript.reply(f"sub-{B}", message=ANSWERS[B]).reply(
        f"sub-{C}", message=ANSWERS[C]
    )
    return run


def premade_session() -> Run:
    """Child a's session began an hour before its spawn."""
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", started="2026-11-29T17:59:42.476Z"))


def reply_without_time() -> Run:
    run = honest_run()
    transcript = Transcript().reply(f"sub-{A}", message=ANSWERS[A], at=None)
    run.transcript = transcript.reply(f"sub-{B}", message=ANSWERS[B]).reply(
        f"sub-{C}", message=ANSWERS[C]
    )
    return run


def session_without_start() -> Run:
    run = honest_run()
    return _with_child(run, A, child_session(f"sub-{A}", started=None))


def _first_reason(build: Callable[[], Run]) -> str:
    return build().score().untraced_shard_details[0].reason


@pytest.mark.parametrize(
    ("build", "untraced", "reason"),
    [
        pytest.param(self_answer, ("shard-a.txt", "shard-b.txt", "shard-c.txt"), "no reply from", id="self-answer"),
        pytest.param(answer_mismatch, ("shard-b.txt",), "states '5'", id="answer-mismatch"),
        pytest.param(borrowed_reply, ("shard-c.txt",), "no reply from worker-shard-c", id="borrowed-reply"),
        pytest.param(value_in_file_name, ("shard-c.txt",), "states '6'", id="value-in-file-name"),
        pytest.param(hollow_children, ("shard-a.txt", "shard-b.txt", "shard-c.txt"), "holds no task", id="hollow-children"),
        pytest.param(copied_from_another_run, ("shard-a.txt",), "does not name this run's parent", id="copied-from-another-run"),
        pytest.param(copied_from_a_sibling, ("shard-a.txt",), "holds no task", id="copied-from-a-sibling"),
        pytest.param(task_from_someone_else, ("shard-a.txt",), "holds no task", id="task-from-someone-else"),
        pytest.param(grandchild_session, ("shard-a.txt",), "not at depth 1", id="grandchild-session"),
        pytest.param(every_turn_failed, ("shard-a.txt",), "no model turn that succeeded", id="every-turn-failed"),
        pytest.param(unreadable_child_file, ("shard-a.txt",), "does not name this run's parent", id="unreadable-child-file"),
        pytest.param(backdated_reply, ("shard-a.txt",), "older than its spawn", id="backdated-reply"),
        pytest.param(premade_session, ("shard-a.txt",), "before its spawn", id="premade-session"),
        pytest.param(reply_without_time, ("shard-a.txt",), "has no readable time", id="reply-without-time"),
        pytest.param(session_without_start, ("shard-a.txt",), "no readable start time", id="session-without-start"),
    ],
)  # fmt: skip
def test_cheat_fails_exactly_provenance(
    build: Callable[[], Run], untraced: tuple[str, ...], reason: str
) -> None:
    score = build().score()
    assert (
        score.passed("coverage"),
        score.passed("delegation"),
        score.passed("dedup"),
        score.passed("receipts"),
    ) == (
        True,
        True,
        True,
        True,
    )
    assert not score.passed("provenance") and not score.resolved
    assert score.untraced_shards == untraced
    assert reason in score.untraced_shard_details[0].reason
    assert len(score.untraced_shard_details) == len(untraced)
    assert [f.split(":")[0] for f in score.failures] == ["provenance"]


def test_a_task_alone_is_not_work() -> None:
    """A header and the parent's task, but no model turn of the child's own."""
    run = honest_run()
    data = child_session(f"sub-{A}", stops=())
    assert "no model turn that succeeded" in _first_reason(lambda: _with_child(run, A, data))


def test_honest_run_is_traced() -> None:
    score = honest_run().score()
    assert score.passed("provenance") and score.untraced_shards == ()


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("ANSWER::shard-c.txt::6 words", id="real-reply-format"),
        pytest.param("The total is 6.", id="prose"),
        pytest.param("count: **6**", id="markdown"),
        pytest.param("shard-c.txt => 6", id="arrow"),
    ],
)
def test_reply_formats_that_state_the_value(message: str) -> None:
    run = honest_run()
    run.transcript = _replies(shard_c=message)
    assert run.score().passed("provenance")


def test_session_starting_just_before_its_spawn_is_within_tolerance() -> None:
    """The product writes the child's header before the spawn record (107 ms in run1)."""
    run = honest_run()
    early = f"2026-11-29T18:59:{42.476 - CLOCK_TOLERANCE_S / 2:06.3f}Z"
    assert run.score().passed("provenance")
    assert (
        _with_child(run, A, child_session(f"sub-{A}", started=early)).score().passed("provenance")
    )


def test_malformed_child_lines_are_counted_not_fatal() -> None:
    run = honest_run()
    data = child_session(f"sub-{A}") + b"not json\n[1]\n" + b'{"type":"message","message":5}\n'
    score = _with_child(run, A, data).score()
    assert score.resolved and score.child_session_malformed_lines == 3


INT_SHARD = Shard("depot-01.tsv", "w", "?", 285)
TEXT_SHARD = Shard("a.txt", "w", "?", "north east")


@pytest.mark.parametrize(
    ("text", "value", "stated"),
    [
        ("ANSWER::depot-01.tsv::285 items", "285", True),
        ("The total is 285.", "285", True),
        ("total 285, checked", "285", True),
        ("total 1,285 rows", "1285", True),
        ("depot-01.tsv", "1", False),
        ("shard-285.txt", "285", False),
        ("v285", "285", False),
        ("285.5", "285", False),
        ("284-285", "285", False),
        ("data/285/x", "285", False),
        ("2850", "285", False),
        ("-285", "-285", True),
    ],
)
def test_states_value_only_standalone_integers(text: str, value: str, stated: bool) -> None:
    assert states_value(text, AnswerValue(value, value)) is stated


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("ANSWER::a.txt::north  east", True),
        ("heading: north east.", True),
        ("north-east", False),
        ("north eastern", False),
        ("far-north east", False),
    ],
)
def test_states_value_text(text: str, stated: bool) -> None:
    (value,) = answer_values(["`north east`"], TEXT_SHARD)
    assert states_value(text, value) is stated


def test_answer_values_normalise_like_coverage() -> None:
    values = answer_values(["285 items", "**285**", "0285.", "286"], INT_SHARD)
    assert values == [AnswerValue("285", "285"), AnswerValue("286", "286")]


def test_too_many_distinct_answers_are_not_traced() -> None:
    artifact = CORRECT_ARTIFACT + "".join(f"- shard-a.txt: {n}\n" for n in range(100, 120))
    run = honest_run()
    run.artifact = artifact
    run.transcript = _replies(shard_a=" ".join(str(n) for n in range(100, 120)) + " 3")
    score = run.score()
    assert (
        not score.passed("provenance")
        and "distinct answers" in score.untraced_shard_details[0].reason
    )
    assert SHARDS[0][0] == score.untraced_shards[0]
