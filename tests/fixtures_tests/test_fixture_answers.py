"""The committed fixtures: answers recomputed independently, prompts, generator freshness.

The answers are recomputed with polars from the shard files, by a table written here by
hand, never by calling the generator: a bug in the generator's plain-Python answers would
have to be repeated in a second, unrelated implementation to slip through.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from harness.fixtures import FIXTURES_ROOT, load_fixture

GENERATOR = FIXTURES_ROOT / "generate.py"
#: Fixtures are committed: keep each one small.
MAX_FIXTURE_BYTES = 500 * 1024

col = pl.col


def _count(df: pl.DataFrame, condition: pl.Expr) -> int:
    return df.filter(condition).height


def _scalar(df: pl.DataFrame, expr: pl.Expr) -> int:
    return int(df.select(expr).item())


def _largest_step_up(df: pl.DataFrame, host: str) -> int:
    steps = df.filter(col("host") == host).sort("ts", maintain_order=True)["memory_mb"].diff()
    return int(steps.max())


def _mean_floor(df: pl.DataFrame, host: str, column: str) -> int:
    rows = df.filter(col("host") == host)
    return int(rows[column].sum()) // rows.height


Answer = Callable[[pl.DataFrame], int]

#: fixture -> shard file -> (question, polars computation of its answer)
ANSWERS: dict[str, dict[str, tuple[str, Answer]]] = {
    "json-events": {
        "events-01.jsonl": (
            'How many events with action "upload" have bytes greater than 5000?',
            lambda df: _count(df, (col("action") == "upload") & (col("bytes") > 5000)),
        ),
        "events-02.jsonl": (
            'What is the total of bytes over all events with action "download" and status "ok"?',
            lambda df: _scalar(
                df,
                col("bytes").filter((col("action") == "download") & (col("status") == "ok")).sum(),
            ),
        ),
        "events-03.jsonl": (
            'How many distinct users have at least one event with action "delete"?',
            lambda df: _scalar(df, col("user").filter(col("action") == "delete").n_unique()),
        ),
        "events-04.jsonl": (
            'What is the maximum duration_ms among events with status "error"?',
            lambda df: _scalar(df, col("duration_ms").filter(col("status") == "error").max()),
        ),
        "events-05.jsonl": (
            "How many events have a ts on the date 2026-03-14 (the date part of ts, UTC)?",
            lambda df: _count(
                df,
                col("ts").str.to_datetime("%Y-%m-%dT%H:%M:%SZ").dt.date() == pl.date(2026, 3, 14),
            ),
        ),
        "events-06.jsonl": (
            'What is the total of bytes over events with action "upload" in region "eu-west"?',
            lambda df: _scalar(
                df,
                col("bytes")
                .filter((col("action") == "upload") & (col("region") == "eu-west"))
                .sum(),
            ),
        ),
        "events-07.jsonl": (
            'How many events with action "login" have a status other than "ok"?',
            lambda df: _count(df, (col("action") == "login") & (col("status") != "ok")),
        ),
        "events-08.jsonl": (
            "How many distinct users have more than 15 events in this file?",
            lambda df: df.group_by("user").len().filter(col("len") > 15).height,
        ),
    },
    "csv-metrics": {
        "metrics-01.csv": (
            "What is the maximum latency_ms for host db-2?",
            lambda df: _scalar(df, col("latency_ms").filter(col("host") == "db-2").max()),
        ),
        "metrics-02.csv": (
            "How many rows have cpu greater than 90.0?",
            lambda df: _count(df, col("cpu") > 90.0),
        ),
        "metrics-03.csv": (
            'What is the total of errors over all rows whose region is "us-east"?',
            lambda df: _scalar(df, col("errors").filter(col("region") == "us-east").sum()),
        ),
        "metrics-04.csv": (
            "What is the sum of latency_ms over the rows of host api-3 that have errors "
            "greater than 0?",
            lambda df: _scalar(
                df, col("latency_ms").filter((col("host") == "api-3") & (col("errors") > 0)).sum()
            ),
        ),
        "metrics-05.csv": (
            "What is the minimum memory_mb for host web-1?",
            lambda df: _scalar(df, col("memory_mb").filter(col("host") == "web-1").min()),
        ),
        "metrics-06.csv": (
            "How many rows of host cache-1 have cpu of at least 50.0 and memory_mb below 6000?",
            lambda df: _count(
                df, (col("host") == "cache-1") & (col("cpu") >= 50.0) & (col("memory_mb") < 6000)
            ),
        ),
        "metrics-07.csv": (
            "What is the largest increase in memory_mb between two consecutive rows of host "
            "db-1 (rows of that host in ts order)?",
            lambda df: _largest_step_up(df, "db-1"),
        ),
        "metrics-08.csv": (
            "What is the average latency_ms over the rows of host api-1, rounded down to an "
            "integer?",
            lambda df: _mean_floor(df, "api-1", "latency_ms"),
        ),
    },
}

READERS: dict[str, Callable[[Path], pl.DataFrame]] = {
    ".jsonl": pl.read_ndjson,
    ".csv": pl.read_csv,
}

CASES = [
    pytest.param(name, file, id=f"{name}/{file}")
    for name, table in ANSWERS.items()
    for file in table
]


def test_every_committed_shard_has_an_independent_answer() -> None:
    for name, table in ANSWERS.items():
        manifest = load_fixture(FIXTURES_ROOT / name).manifest
        assert [s.file for s in manifest.shards] == list(table)


@pytest.mark.parametrize(("name", "file"), CASES)
def test_expected_answer_matches_polars(name: str, file: str) -> None:
    fixture = load_fixture(FIXTURES_ROOT / name)
    shard = next(s for s in fixture.manifest.shards if s.file == file)
    question, compute = ANSWERS[name][file]
    assert shard.question == question, "the table computes another question than the manifest's"
    path = fixture.path / "shards" / file
    df = READERS[path.suffix](path)
    assert isinstance(shard.expected, int) and not isinstance(shard.expected, bool)
    assert compute(df) == shard.expected


@pytest.mark.parametrize("name", list(ANSWERS))
def test_answers_are_not_trivial(name: str) -> None:
    """A shard whose answer is 0, or its line count, could be guessed without reading it."""
    fixture = load_fixture(FIXTURES_ROOT / name)
    for shard, path in zip(fixture.manifest.shards, fixture.shard_paths, strict=True):
        lines = path.read_bytes().count(b"\n")
        assert shard.expected not in (0, lines, lines - 1), shard.file
        assert 200 <= lines <= 400, f"{shard.file}: {lines} lines; want a few hundred"


@pytest.mark.parametrize("name", list(ANSWERS))
def test_task_names_every_shard_question_and_worker(name: str) -> None:
    fixture = load_fixture(FIXTURES_ROOT / name)
    lines = fixture.task_text.splitlines()
    for shard in fixture.manifest.shards:
        line = f"- shards/{shard.file}: {shard.question} (worker: {shard.worker})"
        assert line in lines
        assert shard.worker == "worker-" + Path(shard.file).stem


@pytest.mark.parametrize("name", list(ANSWERS))
def test_task_spells_out_the_orchestration_a_real_run_needs(name: str) -> None:
    """CONTRACT §6: spawn from ipython by name, reply to parent, keep polling, bare bullets."""
    text = " ".join(load_fixture(FIXTURES_ROOT / name).task_text.split())
    first = load_fixture(FIXTURES_ROOT / name).manifest.shards[0]
    for needle in (
        f'await rlm("<task>", name="{first.worker}")',
        "ipython tool",
        "exactly one subagent (child) per shard",
        'await agent_message.send("<file>: <integer>", receiver_role="parent")',
        "await rlm.list_subagents()",
        "Ending your turn ends the whole run",
        "At most one retry per shard",
        "wait until its name is free",
        "Never run two live children for the same shard",
        "Answer only from the children's replies",
        "combined-index.md in the repository root",
        f"- {first.file}: 1234",
    ):
        assert needle in text, needle


@pytest.mark.parametrize("name", list(ANSWERS))
def test_answer_key_does_not_reach_the_agent(name: str) -> None:
    """Only shards/ is copied into the agent's repo; task.txt must not carry an answer."""
    fixture = load_fixture(FIXTURES_ROOT / name)
    assert sorted(p.name for p in fixture.path.iterdir()) == ["fixture.json", "shards", "task.txt"]
    assert sorted(p.name for p in (fixture.path / "shards").iterdir()) == sorted(
        s.file for s in fixture.manifest.shards
    )
    numbers = set(re.findall(r"\d+", fixture.task_text))
    for shard in fixture.manifest.shards:
        answer = str(shard.expected)
        if len(answer) >= 3:  # small numbers occur in any prose; large ones identify an answer
            assert answer not in numbers, shard.file
        for line in fixture.task_text.splitlines():
            if shard.file in line:
                assert answer not in re.findall(r"\d+", line.replace(shard.question, "")), line


@pytest.mark.parametrize("name", list(ANSWERS))
def test_fixture_is_small(name: str) -> None:
    size = sum(p.stat().st_size for p in (FIXTURES_ROOT / name).rglob("*") if p.is_file())
    assert size < MAX_FIXTURE_BYTES


def _generate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # starts the generator as a process
def test_generator_check_passes_on_committed_fixtures() -> None:
    result = _generate("--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.slow  # starts the generator as a process
def test_generator_check_catches_drift(tmp_path: Path) -> None:
    assert _generate("--root", str(tmp_path)).returncode == 0
    assert _generate("--root", str(tmp_path), "--check").returncode == 0
    for name in ANSWERS:
        assert (tmp_path / name / "fixture.json").read_bytes() == (
            FIXTURES_ROOT / name / "fixture.json"
        ).read_bytes()

    shard = tmp_path / "csv-metrics" / "shards" / "metrics-03.csv"
    shard.write_text(shard.read_text().replace("us-east", "eu-west", 1))
    stray = tmp_path / "json-events" / "notes.md"
    stray.write_text("answers: ...")
    (tmp_path / "json-events" / "task.txt").unlink()
    result = _generate("--root", str(tmp_path), "--check")
    assert result.returncode == 1
    assert "csv-metrics/shards/metrics-03.csv: differs" in result.stderr
    assert "json-events/notes.md: not generated" in result.stderr
    assert "json-events/task.txt: missing" in result.stderr

    assert _generate("--root", str(tmp_path)).returncode == 0  # rewrites and removes strays
    assert not stray.exists()
    assert _generate("--root", str(tmp_path), "--check").returncode == 0


def test_generated_copy_validates(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES_ROOT / "json-events", tmp_path / "json-events")
    assert load_fixture(tmp_path / "json-events").content_hash() == (
        load_fixture(FIXTURES_ROOT / "json-events").content_hash()
    )
