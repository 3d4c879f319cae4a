"""The package on its own: ``uv build`` makes an sdist and a wheel (built from the sdist, as
an installer would) with complete metadata and a README the package index renders; the
wheel, installed into a fresh venv, runs the main job with the sim, lists the bundled
fixtures, serves the scripted model, runs a selftest and exports, from a directory outside
the checkout with nothing on PYTHONPATH; ``uv tool install`` and ``uvx`` run it the same way.

Built once for the module (the slow part); every command runs in the one venv."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv builds the wheel"),
]
#: A link or image target the package index cannot follow: neither a URL nor an anchor.
RELATIVE = re.compile(r"\]\((?!https?://|#)([^)]+)\)")
#: The package data the CLI needs away from the checkout.
DATA = (
    "harness/_fixtures/smoke-orders/fixture.json",
    "harness/_fixtures/sets.yaml",
    "harness/model/report.schema.json",
    "harness/fixtures/fixture.schema.json",
    "sim_agent/prime-agent-sim",
    "scripted_model/__main__.py",
)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    venv: Path
    #: A directory outside the checkout: every command runs there.
    cwd: Path
    env: dict[str, str]

    def run(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=timeout
        )


def _outside_env(root: Path, bin_dir: Path, pins: Path) -> dict[str, str]:
    """No PYTHONPATH, no virtualenv of the checkout, the venv first on PATH, an empty
    HOME, uv's tool dirs under ``root``, and the lock's versions for whatever uv installs."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("SWARM_")
    }
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))]
    (root / "home").mkdir()
    return env | {
        "PATH": os.pathsep.join([str(bin_dir), *path]),
        "HOME": str(root / "home"),
        "UV_TOOL_DIR": str(root / "tools"),
        "UV_TOOL_BIN_DIR": str(root / "tools-bin"),
        "UV_CONSTRAINT": str(pins),
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("packaging")
    dist = root / "dist"
    subprocess.run(
        ["uv", "build", "--quiet", "--out-dir", str(dist), str(REPO)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    # The dependencies at the lock's versions (already in uv's cache where the checkout
    # was synced), the project itself from the wheel.
    pins = root / "pins.txt"
    exported = subprocess.run(
        ["uv", "export", "--locked", "--no-dev", "--no-hashes", "--no-emit-project",
         "--project", str(REPO)],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    pins.write_text(exported.stdout)
    venv = root / "venv"
    subprocess.run(["uv", "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run(
        ["uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
         "--constraint", str(pins), str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    cwd = root / "elsewhere"
    cwd.mkdir()
    yield Installed(wheel, sdist, venv, cwd, _outside_env(root, venv / "bin", pins))


def _metadata(installed: Installed) -> tuple[HeaderParser, str, list[tuple[str, str]]]:
    with zipfile.ZipFile(installed.wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        text = whl.read(name).decode("utf-8")
    msg = HeaderParser().parsestr(text)
    return msg, msg.get_payload(), list(msg.items())  # type: ignore[return-value]


def test_the_metadata_is_complete_and_the_readme_renders_on_the_index(
    installed: Installed,
) -> None:
    msg, readme, headers = _metadata(installed)
    assert msg["Name"] == "swarm-harness" and msg["Requires-Python"] == ">=3.11"
    assert msg["Description-Content-Type"] == "text/markdown"
    classifiers = [v for k, v in headers if k == "Classifier"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert any(c.startswith("Development Status") for c in classifiers)
    urls = dict(v.split(", ", 1) for k, v in headers if k == "Project-URL")
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert "# swarm-harness" in readme and "report-top.png" in readme
    assert RELATIVE.findall(readme) == [], "relative links break on the package index"
    with tarfile.open(installed.sdist) as sdist:
        names = sdist.getnames()
    top = names[0].split("/")[0]
    assert {f"{top}/PKG-INFO", f"{top}/README.md", f"{top}/fixtures/sets.yaml"} <= set(names)


def test_the_wheel_carries_the_package_data(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        names = set(whl.namelist())
        sim = whl.getinfo("sim_agent/prime-agent-sim")
    assert set(DATA) <= names
    assert not any(n.startswith(("tests/", "fixtures/", "docs/")) for n in names)
    assert (sim.external_attr >> 16) & 0o111, "the simulated agent is executable"


def test_nothing_is_read_from_the_checkout(installed: Installed) -> None:
    done = installed.run(
        "python", "-c", "import harness, scorers, sim_agent, scripted_model as m; print(m.__file__)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(installed.venv)) and str(REPO) not in done.stdout


def test_the_installed_wheel_runs_the_main_job_and_exports(installed: Installed) -> None:
    listed = installed.run("swarm-harness", "fixtures", "list")
    assert listed.returncode == 0, listed.stderr
    assert "json-events" in listed.stdout and "csv-metrics" in listed.stdout
    assert "harness/_fixtures" in listed.stdout and "INVALID" not in listed.stdout

    done = installed.run("swarm-harness", "run", "--fixture", "smoke-orders", "--agent", "sim")
    assert done.returncode == 0, done.stderr
    assert "smoke-orders x sim/honest: 1/1 resolved" in done.stdout
    (run_dir,) = (installed.cwd / "runs").glob("2*")
    assert {"report.json", "report.html", "report.md"} <= {p.name for p in run_dir.iterdir()}

    exported = installed.run("swarm-harness", "export", "latest")
    assert exported.returncode == 0, exported.stderr
    (trajectory,) = (run_dir / "trajectories").rglob("trajectory.json")
    assert json.loads(trajectory.read_text())["schema_version"].startswith("ATIF")


def test_the_installed_scripted_model_serves_and_a_selftest_runs(installed: Installed) -> None:
    """The scripted server from the wheel answers a request on the bundled fixture; a
    selftest runs through it (a stand-in client that answers nothing: its row fails,
    exit 1, as for any broken client)."""
    fixture = next(installed.venv.rglob("harness/_fixtures/smoke-orders"))
    server = subprocess.Popen(
        ["python", "-m", "scripted_model", "--fixture", str(fixture), "--port", "0"],
        cwd=installed.cwd, env=installed.env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        models = "".join(iter(server.stdout.readline, "}\n")) + "}"
        base = json.loads(models)["providers"]["scripted"]["baseUrl"]
        task = (fixture / "task.txt").read_text()
        body = {"model": "honest", "messages": [{"role": "user", "content": task}]}
        request = urllib.request.Request(
            f"{base}/chat/completions",
            json.dumps(body).encode(),
            {"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            reply = json.loads(answer.read())
        assert reply["object"] == "chat.completion" and reply["usage"]["prompt_tokens"] > 0
    finally:
        server.terminate()
        server.wait(timeout=30)

    stand_in = installed.cwd / "prime-agent"
    stand_in.write_text('#!/bin/sh\n[ "$1" = "--version" ] && echo "0.8.0"\nexit 0\n')
    stand_in.chmod(0o755)
    done = installed.run(
        "swarm-harness", "selftest", "--agent-bin", str(stand_in), "--script", "honest",
        "--fixture", "smoke-orders", "--runs-dir", "selftest-runs",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "selftest of prime-agent" in done.stdout and "0/1 rows hold" in done.stdout


def test_uv_tool_install_and_uvx_run_the_wheel(installed: Installed) -> None:
    tool = installed.run("uv", "tool", "install", "--quiet", str(installed.wheel))
    assert tool.returncode == 0, tool.stderr
    listed = installed.run(
        str(Path(installed.env["UV_TOOL_BIN_DIR"]) / "swarm-harness"), "fixtures", "list"
    )
    assert listed.returncode == 0 and "smoke-orders" in listed.stdout, listed.stderr
    uvx = installed.run("uvx", "--from", str(installed.wheel), "swarm-harness", "--version")
    assert uvx.returncode == 0 and "0.1.0" in uvx.stdout, uvx.stderr
