"""The Codex scripts on an edit fixture: each thread changes files with Codex's own
``apply_patch`` under an edit lock it takes and gives back with its shell tool (take the
lock, read, patch, read again and retry when the patch did not apply, give the lock back),
turn by turn from the request alone; the edit-only scripts; the lock itself, run by a real
shell; and the patches, applied by the real client's ``apply_patch`` where it is at hand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scripted_model.codex_edits import (
    DROP_LOCK,
    LOCK_TRIES,
    TAKE_LOCK,
    build_patch,
    read_command,
)
from scripted_model.codex_scripts import (
    CODEX_SCRIPTS,
    V1_NAMESPACE,
    Reply,
    next_codex_action,
)
from scripted_model.oracle import Edit, Oracle
from scripted_model.responses_conversation import ResponsesConversation

DATA = Path(__file__).resolve().parents[1] / "data" / "codex-edits"
#: edit-smoke's manifest (3 tickets on shop/, each with its own line in CHANGELOG.md).
MANIFEST = json.loads((DATA / "fixture.json").read_text(encoding="utf-8"))
ORACLE = Oracle.from_manifests([MANIFEST])


def _solution(shard: str) -> tuple[Edit, ...]:
    edits = ORACLE.solution(shard)
    assert edits is not None, shard
    return edits


SHIPPING = _solution("shipping.md")
TASK = (
    "Shards, questions and workers:\n"
    + "".join(
        f"- shards/{s['file']}: {s['question']} (worker: {s['worker']})\n"
        for s in MANIFEST["shards"]
    )
    + "\nwrite the file combined-index.md"
)
CHANGELOG = "# Changelog\n\n## Unreleased\n\n### Added\n\n### Changed\n\n### Fixed\n\n## 1.3.0\n"
SHIPPING_PY = '"""Shipping fees."""\n\nFREE_FROM = 60\nFEE = 5\n'


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _call(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    if name == "apply_patch":
        return {"type": "custom_tool_call", "call_id": f"c{n}", "name": name, **arguments}
    return {
        "type": "function_call",
        "call_id": f"c{n}",
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _out(n: int, text: str, custom: bool = False) -> dict[str, Any]:
    kind = "custom_tool_call_output" if custom else "function_call_output"
    return {"type": kind, "call_id": f"c{n}", "output": text}


def _ran(stdout: str, code: int = 0) -> str:
    return (
        f"Chunk ID: x\nWall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n{stdout}"
    )


def _conv(*items: dict[str, Any], patch_tool: bool = True) -> ResponsesConversation:
    tools: list[dict[str, Any]] = [
        {"type": "function", "name": "exec_command"},
        {"type": "namespace", "name": V1_NAMESPACE, "tools": []},
    ]
    if patch_tool:
        tools.append({"type": "custom", "name": "apply_patch"})
    return ResponsesConversation.from_request({"input": list(items), "tools": tools})


SPAWN = _user(
    "Worker: worker-shipping\nCarry out the ticket in shards/shipping.md with apply_patch.\n"
    "SHARD=shards/shipping.md INDEX=0 ATTEMPT=1"
)
READ_SHARD = (_call(1, "exec_command", cmd="cat shards/shipping.md"), _out(1, _ran("ticket")))
LOCKED = (_call(5, "exec_command", cmd=TAKE_LOCK), _out(5, _ran("")))
READ_FILES = (
    _call(2, "exec_command", cmd=read_command("shop/shipping.py")),
    _call(3, "exec_command", cmd=read_command("CHANGELOG.md")),
    _out(2, _ran(SHIPPING_PY)),
    _out(3, _ran(CHANGELOG)),
)


def _next(script: str, conv: ResponsesConversation) -> Reply:
    action = next_codex_action(CODEX_SCRIPTS[script], conv, ORACLE)
    assert isinstance(action, Reply)
    return action


def _cmds(reply: Reply) -> list[str]:
    return [str(c.arguments.get("cmd")) for c in reply.calls]


def test_an_honest_child_locks_reads_patches_unlocks_then_answers() -> None:
    assert _cmds(_next("honest", _conv(SPAWN, *READ_SHARD))) == [TAKE_LOCK]
    reads = _next("honest", _conv(SPAWN, *READ_SHARD, *LOCKED))
    assert _cmds(reads) == [read_command("shop/shipping.py"), read_command("CHANGELOG.md")]
    patch = _next("honest", _conv(SPAWN, *READ_SHARD, *LOCKED, *READ_FILES))
    (call,) = patch.calls
    assert call.name == "apply_patch" and call.custom
    assert call.arguments["input"] == (
        "*** Begin Patch\n"
        "*** Update File: shop/shipping.py\n@@\n-FREE_FROM = 60\n+FREE_FROM = 45\n"
        "*** Update File: CHANGELOG.md\n@@\n-### Changed\n+### Changed\n+\n"
        "+- Orders from 45 euros ship free.\n"
        "*** End Patch\n"
    )
    done = (
        _call(4, "apply_patch", input=call.arguments["input"]),
        _out(4, "Exit code: 0\nWall time: 0.3 seconds\nOutput:\nSuccess.", custom=True),
    )
    unlock = _next("honest", _conv(SPAWN, *READ_SHARD, *LOCKED, *READ_FILES, *done))
    assert _cmds(unlock) == [DROP_LOCK]
    unlocked = (_call(6, "exec_command", cmd=DROP_LOCK), _out(6, _ran("")))
    answer = _next("honest", _conv(SPAWN, *READ_SHARD, *LOCKED, *READ_FILES, *done, *unlocked))
    assert not answer.calls and answer.text.endswith("ANSWER::shipping.md::220")


def test_a_child_waits_for_the_lock_then_changes_its_files_without_it_after_every_try() -> None:
    """Another thread holds the lock (the try exits 1): try again; after every try failed
    (its holder was stopped mid-change), read and patch without it, and give back nothing."""
    items: list[dict[str, Any]] = [SPAWN, *READ_SHARD]
    for n in range(LOCK_TRIES):
        assert _cmds(_next("honest", _conv(*items))) == [TAKE_LOCK]
        items += [_call(20 + n, "exec_command", cmd=TAKE_LOCK), _out(20 + n, _ran("", 1))]
    assert _cmds(_next("honest", _conv(*items)))[0] == read_command("shop/shipping.py")
    items += READ_FILES
    (patch,) = _next("honest", _conv(*items)).calls
    items += [
        _call(9, "apply_patch", input=patch.arguments["input"]),
        _out(9, "Exit code: 0\nOutput:\nSuccess.", custom=True),
    ]
    answer = _next("honest", _conv(*items))
    assert not answer.calls and "ANSWER::shipping.md::" in answer.text


def test_a_change_already_made_leaves_nothing_to_patch_and_the_lock_is_given_back() -> None:
    """double-spawn's second child for a shard gets the lock after the first made the
    change: it patches nothing, gives the lock back and answers."""
    made = (
        _call(2, "exec_command", cmd=read_command("shop/shipping.py")),
        _call(3, "exec_command", cmd=read_command("CHANGELOG.md")),
        _out(2, _ran(SHIPPING_PY.replace("60", "45"))),
        _out(3, _ran(CHANGELOG.replace(SHIPPING[1].old, SHIPPING[1].new))),
    )
    assert _cmds(_next("double-spawn", _conv(SPAWN, *READ_SHARD, *LOCKED, *made))) == [DROP_LOCK]


def test_a_patch_that_did_not_apply_is_read_again_and_retried_then_given_up() -> None:
    items: list[dict[str, Any]] = [SPAWN, *READ_SHARD, *LOCKED, *READ_FILES]
    for attempt in range(3):
        n = 10 + 3 * attempt
        items += [
            _call(n, "apply_patch", input="*** Begin Patch\n*** End Patch\n"),
            _out(n, "Exit code: 1\nOutput:\nFailed to find expected lines in CHANGELOG.md", True),
        ]
        reply = _next("honest", _conv(*items))
        if attempt < 2:  # read again, then patch from the new reads
            assert reply.calls[0].arguments["cmd"] == read_command("shop/shipping.py")
            items += [
                _call(n + 1, "exec_command", cmd=read_command("shop/shipping.py")),
                _call(n + 2, "exec_command", cmd=read_command("CHANGELOG.md")),
                _out(n + 1, _ran(SHIPPING_PY)),
                _out(n + 2, _ran(CHANGELOG)),
            ]
            assert _next("honest", _conv(*items)).calls[0].name == "apply_patch"
        else:  # three tries: it gives the lock back and answers with what it has
            assert _cmds(reply) == [DROP_LOCK]
            items += [_call(40, "exec_command", cmd=DROP_LOCK), _out(40, _ran(""))]
            answer = _next("honest", _conv(*items))
            assert not answer.calls and "ANSWER::shipping.md::" in answer.text


def test_without_the_patch_tool_the_patch_goes_through_the_shell() -> None:
    (call,) = _next(
        "honest", _conv(SPAWN, *READ_SHARD, *LOCKED, *READ_FILES, patch_tool=False)
    ).calls
    assert call.name == "exec_command"
    assert call.arguments["cmd"].startswith("apply_patch <<'PATCH'\n*** Begin Patch\n")


def test_edit_parent_makes_every_change_before_it_spawns_and_its_children_only_answer() -> None:
    assert _cmds(_next("edit-parent", _conv(_user(TASK)))) == [TAKE_LOCK]
    reads = _next("edit-parent", _conv(_user(TASK), *LOCKED))
    assert {c.arguments["cmd"] for c in reads.calls} == {
        read_command(p)
        for p in ("shop/shipping.py", "shop/tax.py", "shop/discount.py", "CHANGELOG.md")
    }
    child = _next("edit-parent", _conv(SPAWN, *READ_SHARD))
    assert not child.calls and child.text.endswith("ANSWER::shipping.md::220")


def test_edit_wrong_lane_first_child_also_appends_to_another_shards_file() -> None:
    reads = _next("edit-wrong-lane", _conv(SPAWN, *READ_SHARD, *LOCKED))
    assert _cmds(reads) == [read_command("shop/shipping.py"), read_command("CHANGELOG.md")]
    (call,) = _next("edit-wrong-lane", _conv(SPAWN, *READ_SHARD, *LOCKED, *READ_FILES)).calls
    assert call.arguments["input"].endswith(
        "*** Update File: shop/tax.py\n@@\n+# changed by another shard's worker\n*** End Patch\n"
    )


def test_no_spawn_parent_makes_the_changes_then_writes_the_answers() -> None:
    assert _cmds(_next("no-spawn", _conv(_user(TASK)))) == [TAKE_LOCK]
    reads = _next("no-spawn", _conv(_user(TASK), *LOCKED))
    assert all(c.name == "exec_command" for c in reads.calls) and len(reads.calls) == 4


def test_a_read_fixture_child_changes_nothing() -> None:
    oracle = Oracle.from_manifests([{**MANIFEST, "kind": "read"}])
    action = next_codex_action(CODEX_SCRIPTS["honest"], _conv(SPAWN, *READ_SHARD), oracle)
    assert isinstance(action, Reply) and not action.calls and "ANSWER::" in action.text


def test_edits_already_made_leave_nothing_to_patch() -> None:
    done = {"shop/shipping.py": SHIPPING_PY.replace("60", "45"), "CHANGELOG.md": CHANGELOG}
    done["CHANGELOG.md"] = CHANGELOG.replace(SHIPPING[1].old, SHIPPING[1].new)
    assert build_patch(SHIPPING, done) is None
    # edits on one line are one hunk
    line = {"a.py": "X = 1; Y = 2\n"}
    merged = build_patch([Edit("a.py", "X = 1", "X = 3"), Edit("a.py", "Y = 2", "Y = 4")], line)
    assert (
        merged
        == "*** Begin Patch\n*** Update File: a.py\n@@\n-X = 1; Y = 2\n+X = 3; Y = 4\n*** End Patch\n"
    )


def _bash(script: str, tmp: Path, cwd: Path) -> subprocess.Popen[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash: the lock is a bash command")
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen([bash, "-c", script], cwd=cwd, env=env, text=True)


def test_the_edit_lock_lets_one_thread_in_at_a_time(tmp_path: Path) -> None:
    """The lock as a real shell runs it: taken once, a second try waits and gives up (its
    wait used up here), given back it can be taken again; three threads each making an
    unlocked read-modify-write of one file under it lose no line."""
    assert _bash(TAKE_LOCK, tmp_path, tmp_path).wait() == 0
    assert (tmp_path / "swh-edit.lock").is_dir()
    assert _bash(f"SECONDS=60; {TAKE_LOCK}", tmp_path, tmp_path).wait() == 1
    assert _bash(DROP_LOCK, tmp_path, tmp_path).wait() == 0
    assert not (tmp_path / "swh-edit.lock").exists()
    (tmp_path / "log").write_text("")
    change = 'x=$(cat log); sleep 0.3; printf "%s %s" "$x" "$N" > log'
    threads = [
        _bash(f"N={n}; {TAKE_LOCK} && {{ {change}; {DROP_LOCK}; }}", tmp_path, tmp_path)
        for n in range(3)
    ]
    assert [t.wait(timeout=30) for t in threads] == [0, 0, 0]
    assert sorted((tmp_path / "log").read_text().split()) == ["0", "1", "2"]
    assert list(tmp_path.iterdir()) == [tmp_path / "log"]


def _apply_patch_bin() -> Path:
    """The real client's ``apply_patch`` (its binary answers to that name), or a skip."""
    binary = os.environ.get("CODEX_BIN")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("CODEX_BIN unset: the real apply_patch is not at hand")
    return Path(binary)


@pytest.mark.real_agent
def test_the_real_apply_patch_makes_every_shards_change_in_any_order(tmp_path: Path) -> None:
    binary = _apply_patch_bin()
    tool = tmp_path / "apply_patch"
    tool.symlink_to(binary)
    repo = tmp_path / "repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "CHANGELOG.md").write_text(CHANGELOG)
    (repo / "shop" / "shipping.py").write_text(SHIPPING_PY)
    (repo / "shop" / "tax.py").write_text(
        '    """The tax on ``net_cents`` of a ``category`` product, in cents, rounded down."""\n'
        '    return net_cents * RATES.get(category, RATES["standard"]) // 100\n'
    )
    (repo / "shop" / "discount.py").write_text('CODES = {"WELCOME5": 5, "SPRING10": 10}\n')
    for shard in ("discount.md", "shipping.md", "tax.md"):
        edits = _solution(shard)
        texts = {e.path: (repo / e.path).read_text() for e in edits}
        patch = build_patch(edits, texts)
        assert patch is not None
        done = subprocess.run([str(tool), patch], cwd=repo, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    for shard in ORACLE.solutions:
        for edit in _solution(shard):
            assert edit.new in (repo / edit.path).read_text(), edit
    shutil.rmtree(repo)
