"""The wheel carries the bundled fixtures and the console script: build it, install it into
a fresh venv, and list the fixtures from outside the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.slow


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv builds the wheel")
def test_installed_wheel_lists_the_bundled_fixtures(tmp_path: Path) -> None:
    subprocess.run(
        ["uv", "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run(["uv", "venv", "--python", sys.executable, str(venv)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    subprocess.run(
        ["uv", "pip", "install", "--python", str(venv / "bin" / "python"), str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = subprocess.run(
        [str(venv / "bin" / "swarm-harness"), "fixtures", "list"],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "json-events" in listed.stdout and "csv-metrics" in listed.stdout
    assert "harness/_fixtures" in listed.stdout and "INVALID" not in listed.stdout
