"""The opencode adapter without the client: environment, config file, prompt, collection,
and the scripted server's opencode side (the tools it plays, request by request)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents import REGISTRY, parse_agent
from harness.agents.base import ItemPaths, ItemSpec
from harness.agents.env import ITEM_TOKEN_VAR, secret_values
from harness.agents.opencode import OpenCodeAdapter
from harness.agents.opencode.collect import Bundle, blank_secrets, copy_run, scorer_inputs
from harness.agents.opencode.install import client_path, ripgrep_beside, ripgrep_dir
from harness.agents.opencode.launch import (
    OPENCODE_QUIET,
    STATE_DIRS,
    OpenCodePaths,
    api_root,
)
from harness.fixtures import load_fixture
from harness.selftest import scripts_for
from scripted_model import Oracle
from scripted_model.messages_api import plan_answer
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS
from scripted_model.scripts import ModelFailure

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"


def _prepare(tmp_path: Path, caller: dict[str, str], model: str = "anthropic/claude-x"):  # type: ignore[no-untyped-def]
    root = tmp_path / "w"
    paths = ItemPaths(root, root / "repo", root / "home", root / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir(parents=True)
    fixture = load_fixture(TINY)
    adapter = OpenCodeAdapter("", "/nonexistent/opencode")
    spec = ItemSpec("tiny:m:1", model, adapter.task_text(fixture), fixture.manifest)
    base = {**caller, "HOME": str(paths.home), "TMPDIR": str(paths.tmp), ITEM_TOKEN_VAR: "t"}
    return adapter, paths, adapter.prepare(paths, spec, base, "tok-1")


def test_registered_with_its_scripts() -> None:
    assert "opencode" in REGISTRY and REGISTRY["opencode"].selftest
    adapter = parse_agent("opencode", "x")
    assert scripts_for(adapter) == OPENCODE_SCRIPTS
    assert adapter.pinned_version == "1.18.33" and adapter.binary_env == "OPENCODE_BIN"


def test_env_is_built_from_nothing_but_its_own(tmp_path: Path) -> None:
    caller = {
        "PATH": "/usr/bin:/bin",
        "ANTHROPIC_API_KEY": "sk-caller-key-123",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
        "OPENCODE_SERVER_PASSWORD": "x",
        "OPENCODE_CONFIG_DIR": "/caller/config",
        "XDG_CONFIG_HOME": "/caller/.config",
        "GIT_DIR": "/caller/.git",
        "HTTPS_PROXY": "http://proxy",
    }
    _, paths, launch = _prepare(tmp_path, caller)
    env = launch.env
    expected = {"PATH", "LANG", "OPENCODE_CONFIG", ITEM_TOKEN_VAR, *STATE_DIRS, *OPENCODE_QUIET}
    assert set(env) == expected
    assert env[ITEM_TOKEN_VAR] == "tok-1"
    for var, name in STATE_DIRS.items():
        assert env[var] == str(paths.root / name) and (paths.root / name).is_dir()
    assert env["PATH"].endswith("/usr/bin:/bin")
    # The credentials reach the client only through the config file, outside the repo.
    config = Path(env["OPENCODE_CONFIG"])
    assert config.parent == paths.root and config in launch.credential_files
    assert b"sk-caller-key-123" in secret_values(env, launch.credential_files)
    doc = json.loads(config.read_text())
    provider = doc["provider"]["anthropic"]
    assert provider["npm"] == "@ai-sdk/anthropic"
    assert provider["options"] == {
        "baseURL": "http://127.0.0.1:9/v1",
        "apiKey": "sk-caller-key-123",
    }
    assert list(provider["models"]) == ["claude-x"]
    assert provider["models"]["claude-x"]["limit"]["context"] >= 200_000
    assert doc["enabled_providers"] == ["anthropic"] and doc["permission"] == {
        "*": "allow",
        "external_directory": "deny",  # the config (with the key) is outside the repo
    }
    assert (doc["share"], doc["autoupdate"], doc["snapshot"]) == ("disabled", False, False)


def test_prompt_goes_on_stdin_and_argv_is_headless(tmp_path: Path) -> None:
    _, paths, launch = _prepare(tmp_path, {"PATH": "/bin"}, "scripted/honest")
    assert launch.stdin is not None and launch.stdin.parent == paths.root
    text = launch.stdin.read_text()
    assert "task tool" in text and 'description "' in text and "ANSWER::" in text
    assert launch.argv == [
        "run", "--format", "json", "--model", "scripted/honest", "--title", "tiny:m:1"
    ]  # fmt: skip
    assert text not in launch.argv


@pytest.mark.parametrize(
    ("given", "root"),
    [
        (None, "https://api.anthropic.com/v1"),
        ("http://h:1", "http://h:1/v1"),
        ("http://h:1/", "http://h:1/v1"),
        ("http://h:1/v1", "http://h:1/v1"),
    ],
)
def test_api_root_has_v1(given: str | None, root: str) -> None:
    assert api_root(given) == root


def test_scripted_endpoint_is_the_anthropic_root() -> None:
    env = OpenCodeAdapter().scripted_endpoint("http://127.0.0.1:5/v1", {}, Path("/x"))
    assert env == {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:5",
        "ANTHROPIC_API_KEY": "scripted-no-key",
    }


def test_secrets_are_blanked_byte_for_byte(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    db.write_bytes(b"\x00page sk-secret-value tail\x01")
    assert blank_secrets(db, [b"sk-secret-value"])
    assert db.read_bytes() == b"\x00page *************** tail\x01"
    assert not blank_secrets(db, [b"absent-secret"])


def test_collect_copies_db_wal_stdout_artifact(tmp_path: Path) -> None:
    live = OpenCodePaths(tmp_path / "live", tmp_path / "live" / "repo")
    live.db_dir.mkdir(parents=True)
    live.repo.mkdir()
    (live.db_dir / "opencode.db").write_bytes(b"main key-12345678")
    (live.db_dir / "opencode.db-wal").write_bytes(b"wal")
    (live.db_dir / "opencode.db-shm").write_bytes(b"shm")
    (live.repo / "combined-index.md").write_text("- a: 1\n")
    out = tmp_path / "out" / "stdout.jsonl"
    out.parent.mkdir()
    out.write_text('{"type":"text"}\n')
    bundle = Bundle(tmp_path / "item")
    copied = copy_run(live, bundle, "combined-index.md", out, None, [b"key-12345678"])
    assert sorted(copied.files) == [
        "opencode/opencode.db", "opencode/opencode.db-wal", "repo/combined-index.md",
        "stdout.jsonl",
    ]  # fmt: skip
    assert bundle.db.read_bytes() == b"main ************"
    assert not (bundle.db.parent / "opencode.db-shm").exists()
    inputs = scorer_inputs(bundle, "combined-index.md")
    assert inputs.db is not None and inputs.wal is not None and inputs.artifact is not None
    assert scorer_inputs(Bundle(tmp_path / "none"), "x.md").db is None


def test_ripgrep_is_found_beside_the_installed_client(tmp_path: Path) -> None:
    cli = client_path(tmp_path)
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    assert ripgrep_beside(cli) is None
    ripgrep_dir(tmp_path).mkdir(parents=True)
    (ripgrep_dir(tmp_path) / "rg").write_text("")
    assert ripgrep_beside(cli) == ripgrep_dir(tmp_path)


# --- the scripted server's opencode side --------------------------------------------------

SYSTEM = [{"type": "text", "text": "<env>\n  Working directory: /w/repo\n</env>"}]
TOOLS = [{"name": n} for n in ("task", "read", "write")]


def _body(model: str, messages: list[dict]) -> dict:
    return {"model": model, "system": SYSTEM, "tools": TOOLS, "messages": messages}


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


@pytest.fixture
def task_text() -> str:
    return OpenCodeAdapter().task_text(load_fixture(TINY))


@pytest.fixture
def oracle() -> Oracle:
    return Oracle.from_fixture_dirs([TINY])


def test_parent_spawns_with_task_then_writes(task_text: str, oracle: Oracle) -> None:
    _, _, first = plan_answer(_body("honest", [_user(task_text)]), OPENCODE_SCRIPTS, oracle)
    assert not isinstance(first, ModelFailure)
    names = [c.name for c in first.calls]
    assert names == ["task"] * 3
    spawn = first.calls[0].input
    assert spawn["subagent_type"] == "general" and spawn["description"].startswith("worker-")
    uses = [
        {"type": "tool_use", "id": f"t{i}", "name": c.name, "input": dict(c.input)}
        for i, c in enumerate(first.calls)
    ]
    files = [str(c.input["prompt"]).split("ANSWER::")[1].split("::")[0] for c in first.calls]
    results = [
        {
            "type": "tool_result",
            "tool_use_id": f"t{i}",
            "content": f'<task id="ses_{i}" state="completed">\n<task_result>\n'
            f"ANSWER::{f}::{oracle.answer(f)}\n</task_result>\n</task>",
        }
        for i, f in enumerate(files)
    ]
    messages = [
        _user(task_text),
        {"role": "assistant", "content": uses},
        {"role": "user", "content": results},
    ]
    _, _, second = plan_answer(_body("honest", messages), OPENCODE_SCRIPTS, oracle)
    assert not isinstance(second, ModelFailure)
    (write,) = second.calls
    assert write.name == "write" and write.input["filePath"] == "/w/repo/combined-index.md"
    assert str(write.input["content"]).count("\n- ") + 1 == 3


def test_child_reads_then_answers_and_can_fail(oracle: Oracle) -> None:
    prompt = (
        "Read the file shards/x.jsonl and answer. End with one line: ANSWER::x.jsonl::<integer>\n"
        "SHARD=shards/x.jsonl INDEX=0 ATTEMPT=1"
    )
    _, _, read = plan_answer(_body("honest", [_user(prompt)]), OPENCODE_SCRIPTS, oracle)
    assert not isinstance(read, ModelFailure)
    assert [(c.name, dict(c.input)) for c in read.calls] == [
        ("read", {"filePath": "/w/repo/shards/x.jsonl"})
    ]
    _, _, failed = plan_answer(_body("child-fails", [_user(prompt)]), OPENCODE_SCRIPTS, oracle)
    assert isinstance(failed, ModelFailure) and failed.status == 400


def test_run_process_feeds_the_launch_stdin(tmp_path: Path) -> None:
    """A launch's ``stdin`` file is the process's standard input, read to its end."""
    from harness.item.processes import run_process

    prompt = tmp_path / "task.txt"
    prompt.write_text('line one "quoted"\n  indented\n')
    out, err = tmp_path / "out", tmp_path / "err"
    done = run_process(
        ["cat"], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path, timeout_s=30,
        stdout_path=out, stderr_path=err, stdin_path=prompt,
    )  # fmt: skip
    assert done.exit_code == 0 and out.read_text() == prompt.read_text()
    run_process(
        ["cat"], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path, timeout_s=30,
        stdout_path=out, stderr_path=err,
    )  # fmt: skip
    assert out.read_text() == ""
