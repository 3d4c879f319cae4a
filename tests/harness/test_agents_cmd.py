"""``agents list`` / ``agents install``, and the registry that --help and the README's agents
table are generated from."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.agents import REGISTRY, adapter_class
from harness.agents.base import AgentAdapter
from harness.cli.main import cli


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_registry_flags_agree_with_the_adapters() -> None:
    for name, entry in REGISTRY.items():
        cls = adapter_class(name)
        assert cls.name == name
        assert entry.selftest == (cls.model_api is not None), name


def test_registry_names_the_installable_agents_and_their_variables() -> None:
    """``install_var`` is set exactly for the agents whose adapter installs a client, and
    is the variable the adapter reads its binary from."""
    for name, entry in REGISTRY.items():
        cls = adapter_class(name)
        installs = cls.install.__func__ is not AgentAdapter.install.__func__  # type: ignore[attr-defined]
        assert entry.install_var == (cls.binary_env if installs else None), name


def test_install_help_names_every_installable_agent() -> None:
    code, out, _ = invoke("agents", "install", "--help")
    text = " ".join(out.split())
    installable = [name for name, entry in REGISTRY.items() if entry.install_var]
    assert code == 0 and set(installable) >= {"claude-code", "opencode", "codex"}
    assert f"agent NAME ({', '.join(installable)})" in text
    for name in installable:
        assert str(REGISTRY[name].install_var) in text


def test_install_of_a_near_name_says_which_was_meant_and_names_no_option() -> None:
    code, _, err = invoke("agents", "install", "claude")
    assert code == 2
    assert err.strip().startswith(
        "error: agents install: unknown agent 'claude'; did you mean claude-code?"
    )
    assert "--agent" not in err


def test_help_lists_every_agent() -> None:
    """By name: `agents list` says what each is."""
    _, out, _ = invoke("run", "--help")
    names = ", ".join(REGISTRY)
    assert f"Agent to run: {names} (`agents list`" in " ".join(out.split())
    _, out, _ = invoke("selftest", "--help")
    names = ", ".join(n for n, entry in REGISTRY.items() if entry.selftest)
    assert "sim" not in names and f"check: {names} (`agents list`" in " ".join(out.split())


def test_list_says_what_is_ready_and_how_to_get_the_rest(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "PRIME_AGENT_BIN": "", "CLAUDE_CODE_BIN": ""}
    code, out, err = invoke("agents", "list", "--json", env=env)
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == set(REGISTRY)
    assert rows["sim"]["ready"] is True and rows["sim"]["binary"] is None
    assert rows["prime-agent"]["ready"] is False
    assert "not found" in rows["prime-agent"]["problem"]
    assert "not redistributed" in rows["prime-agent"]["install_hint"]
    assert rows["claude-code"]["pinned_version"] == adapter_class("claude-code").pinned_version
    _, text, _ = invoke("agents", "list", env=env)
    assert "to install: install the pinned client" in text


@pytest.mark.parametrize("name", ["prime-agent", "sim"])
def test_install_refuses_what_it_cannot_install(name: str) -> None:
    code, _, err = invoke("agents", "install", name)
    assert code == 2 and f"agents install {name}: not installable here" in err


def test_install_refuses_an_unknown_agent() -> None:
    code, _, err = invoke("agents", "install", "gemini-cli")
    assert code == 2 and "unknown agent 'gemini-cli'" in err


@pytest.mark.real_agent
def test_install_claude_code_then_list_it(tmp_path: Path) -> None:
    """The pinned client from the npm registry into a fresh dir (npm's cache makes it
    quick after the first time); a second install reuses it; list reports its version."""
    if shutil.which("npm") is None:
        pytest.skip("npm not installed: the Claude Code client comes from the npm registry")
    pinned = adapter_class("claude-code").pinned_version
    code, out, err = invoke("agents", "install", "claude-code", "--dir", str(tmp_path / "cc"))
    assert code == 0, err
    path = Path(out.strip())
    assert path == tmp_path / "cc" / "node_modules" / ".bin" / "claude"
    assert os.access(path, os.X_OK) and f"claude {pinned} ready" in err
    code, again, err = invoke("agents", "install", "claude-code", "--dir", str(tmp_path / "cc"))
    assert code == 0 and again == out and "already installed" in err
    code, listed, _ = invoke("agents", "list", "--json", env={"CLAUDE_CODE_BIN": str(path)})
    row = next(r for r in json.loads(listed) if r["name"] == "claude-code")
    assert row["ready"] and row["tested_version"] is True and row["version"].startswith(pinned)


@pytest.mark.real_agent
def test_list_reports_the_installed_codex_and_its_version(codex_bin: Path) -> None:
    """The native executable ``agents install codex`` puts in place (installed by the
    session's fixture the same way, or given by $CODEX_BIN) answers --version offline;
    a second install into the same place reuses it."""
    pinned = adapter_class("codex").pinned_version
    code, listed, _ = invoke("agents", "list", "--json", env={"CODEX_BIN": str(codex_bin)})
    assert code == 0
    row = next(r for r in json.loads(listed) if r["name"] == "codex")
    assert row["ready"] and row["tested_version"] is True and row["version"].endswith(pinned)
    if codex_bin.parts[-8:-6] == ("node_modules", "@openai"):  # an install's layout
        target = Path(*codex_bin.parts[:-8])
        code, again, err = invoke("agents", "install", "codex", "--dir", str(target))
        assert code == 0 and Path(again.strip()) == codex_bin and "already installed" in err
