"""The scripted opencode model on an edit fixture: who makes which change with ``edit``.

Each test plays one conversation turn by turn, feeding every tool call back as succeeded,
the way the real client would (``tests/data/opencode-edit-runs`` shows what it records).
"""

from __future__ import annotations

from typing import Any

from harness.agents.opencode import OpenCodeAdapter
from harness.selftest import cases_for
from scripted_model.claude_scripts import Reply
from scripted_model.messages_conversation import MessagesConversation
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS, next_opencode_action
from scripted_model.oracle import Oracle

CWD = "/work/repo"
SHARDS = (("alpha", 37), ("beta", 12))


def _shard(name: str, rate: int) -> dict[str, Any]:
    return {
        "file": f"{name}.md",
        "worker": f"worker-{name}",
        "question": f"Carry out the ticket; what does pkg.{name}.rate() return?",
        "expected": rate,
        "owns": [f"pkg/{name}.py"],
        "checks": [f"checks/test_{name}.py"],
        "solution": [
            {"path": f"pkg/{name}.py", "old": "RATE = 0", "new": f"RATE = {rate}"},
            {"path": "CHANGELOG.md", "old": f"<!-- {name} -->", "new": f"- {name}: {rate}"},
        ],
    }


EDIT = Oracle.from_manifests(
    [{"name": "edit-two", "kind": "edit", "artifact": "combined-index.md",
      "shared": ["CHANGELOG.md"], "shards": [_shard(n, r) for n, r in SHARDS]}]
)  # fmt: skip
READ = Oracle.from_manifests(
    [{"name": "read-two", "artifact": "combined-index.md",
      "shards": [{"file": f"{n}.md", "worker": f"worker-{n}", "expected": r} for n, r in SHARDS]}]
)  # fmt: skip
TASK = "Write the file combined-index.md.\n" + "".join(
    f"- shards/{n}.md: what is the rate? (worker: worker-{n})\n" for n, _ in SHARDS
)


def _child_prompt(name: str, index: int, attempt: int = 1) -> str:
    return f"Do the ticket.\nSHARD=shards/{name}.md INDEX={index} ATTEMPT={attempt}"


def play(script: str, first: str, oracle: Oracle, limit: int = 12) -> list[Reply]:
    """Every answer of one conversation until its turn ends (no tool call), each tool call
    answered as succeeded (a task with the child's answer line for the parent)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    answers: list[Reply] = []
    for turn in range(limit):
        body = {"model": script, "system": f"Working directory: {CWD}", "tools": [{"name": "x"}],
                "messages": messages}  # fmt: skip
        action = next_opencode_action(
            OPENCODE_SCRIPTS[script], MessagesConversation.from_request(body), oracle
        )
        assert isinstance(action, Reply)
        answers.append(action)
        if not action.calls:
            return answers
        uses: list[dict[str, Any]] = [
            {"type": "tool_use", "id": f"t{turn}-{n}", "name": c.name, "input": dict(c.input)}
            for n, c in enumerate(action.calls)
        ]
        results = [
            {"type": "tool_result", "tool_use_id": use["id"], "content": _result(use["input"])}
            for use in uses
        ]
        messages += [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]
    raise AssertionError("the conversation never ended")


def _result(call: dict[str, Any]) -> str:
    prompt = str(call.get("prompt", ""))
    for name, rate in SHARDS:
        if f"shards/{name}.md" in prompt:
            return f"<task_result>\nANSWER::{name}.md::{rate}\n</task_result>"
    return "ok"


def edits(answers: list[Reply]) -> list[tuple[str, str, str]]:
    return [
        (c.input["filePath"], c.input["oldString"], c.input["newString"])
        for a in answers
        for c in a.calls
        if c.name == "edit"
    ]


def test_honest_child_makes_its_change_with_edit_then_answers() -> None:
    answers = play("honest", _child_prompt("alpha", 0), EDIT)
    assert [c.name for c in answers[0].calls] == ["read"]
    assert [c.name for c in answers[1].calls] == ["edit", "edit"]  # one message, both
    assert edits(answers) == [
        (f"{CWD}/pkg/alpha.py", "RATE = 0", "RATE = 37"),
        (f"{CWD}/CHANGELOG.md", "<!-- alpha -->", "- alpha: 37"),
    ]
    assert answers[-1].text.endswith("ANSWER::alpha.md::37")


def test_on_a_read_fixture_the_child_only_reads_and_answers() -> None:
    answers = play("honest", _child_prompt("alpha", 0), READ)
    assert [[c.name for c in a.calls] for a in answers] == [["read"], []]


def test_edit_parent_children_answer_and_the_parent_makes_every_change() -> None:
    child = play("edit-parent", _child_prompt("alpha", 0), EDIT)
    assert edits(child) == [] and child[-1].text.endswith("ANSWER::alpha.md::37")
    parent = play("edit-parent", TASK, EDIT)
    assert [sorted({c.name for c in a.calls}) for a in parent] == [
        ["task"], ["edit"], ["write"], []
    ]  # fmt: skip
    assert len(edits(parent)) == 4  # both shards' two replacements


def test_edit_wrong_lane_first_child_changes_the_next_shards_file_and_back() -> None:
    first = play("edit-wrong-lane", _child_prompt("alpha", 0), EDIT)
    assert edits(first) == [
        (f"{CWD}/pkg/alpha.py", "RATE = 0", "RATE = 37"),
        (f"{CWD}/CHANGELOG.md", "<!-- alpha -->", "- alpha: 37"),
        (f"{CWD}/pkg/beta.py", "RATE = 0", "RATE = 12"),  # beta's file, not its shared line
        (f"{CWD}/pkg/beta.py", "RATE = 12", "RATE = 0"),
    ]
    second = play("edit-wrong-lane", _child_prompt("beta", 1), EDIT)
    assert [path for path, _, _ in edits(second)] == [f"{CWD}/pkg/beta.py", f"{CWD}/CHANGELOG.md"]
    # One subagent at a time: beta's starts only after alpha's reported.
    parent = play("edit-wrong-lane", TASK, EDIT)
    assert [len(a.calls) for a in parent] == [1, 1, 1, 0]


def test_no_spawn_parent_makes_every_change_itself_on_an_edit_fixture() -> None:
    parent = play("no-spawn", TASK, EDIT)
    assert [sorted({c.name for c in a.calls}) for a in parent] == [["edit"], ["write"], []]


def test_the_double_spawn_duplicate_only_answers() -> None:
    duplicate = play("double-spawn", _child_prompt("alpha", 0, attempt=2), EDIT)
    assert edits(duplicate) == [] and duplicate[-1].text.endswith("ANSWER::alpha.md::37")


def test_the_silent_child_makes_no_change() -> None:
    assert edits(play("silent-child", _child_prompt("alpha", 0), EDIT)) == []


def test_selftest_offers_the_edit_scripts_only_on_edit_fixtures() -> None:
    adapter = OpenCodeAdapter("", None)
    read = {c.script for c in cases_for(adapter)}
    edit = {c.script: c for c in cases_for(adapter, edit=True)}
    assert {"edit-parent", "edit-wrong-lane"} <= set(edit) and not read & {"edit-parent"}
    assert edit["edit-parent"].expected_failing == ("provenance",)
    assert edit["edit-wrong-lane"].expected_failing == ("provenance", "lanes")
    assert read == set(edit) - {"edit-parent", "edit-wrong-lane"}
    # Helpers change the workers' files on an edit fixture: outside any worker's lane.
    helpers = {c.script: c for c in cases_for(adapter)}["helper-names"]
    assert helpers.expected_failing == ("delegation", "provenance")
    assert edit["helper-names"].expected_failing == ("delegation", "provenance", "lanes")
