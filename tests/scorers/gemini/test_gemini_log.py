"""Gemini CLI's stderr: the attempts it retried, read from a real run's log and from each
warning form its retry loop writes (0.61.0), the one it gave up on left to whoever waited."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from scorers.gemini.log import UNATTRIBUTED, parse_log

CAPTURE = Path(__file__).resolve().parents[2] / "data" / "gemini-runs" / "retried-stderr.txt"


def _read(text: str) -> list[tuple[str, int | None, bool]]:
    return [(f.kind, f.status, f.retried) for f in parse_log(io.BytesIO(text.encode()))]


def test_a_real_runs_four_retried_attempts() -> None:
    with CAPTURE.open("rb") as stream:
        faults = parse_log(stream)
    assert [(f.kind, f.status) for f in faults] == [
        ("server_error", 503), ("rate_limited", 429), ("rate_limited", 429),
        ("rate_limited", 429),
    ]  # fmt: skip
    assert all(f.retried and f.session == UNATTRIBUTED for f in faults)
    assert "Service unavailable (scripted fault)" in faults[0].message
    assert faults[1].message.endswith("Retrying after 5457ms...")  # both of its lines
    assert len({f.request for f in faults}) == 4


@pytest.mark.parametrize(
    ("line", "kind", "status"),
    [
        ("Attempt 3 failed with status 500. Retrying with backoff... _ApiError: {}",
         "server_error", 500),
        ("Attempt 1 failed with status 529. Retrying with backoff...", "overloaded", 529),
        ("Attempt 2 failed with 429 error (no Retry-After header). Retrying with backoff...",
         "rate_limited", 429),
        ("Attempt 1 failed with 5xx error. Retrying with backoff...", "server_error", None),
        ("Attempt 1 failed: Quota exceeded. Retrying after 60000ms...", "rate_limited", 429),
        ("Attempt 1 failed. Retrying with backoff... TypeError: fetch failed", "connection",
         None),
    ],
)  # fmt: skip
def test_every_retry_warning_form(line: str, kind: str, status: int | None) -> None:
    assert _read(line + "\n") == [(kind, status, True)]


def test_the_attempt_given_up_on_and_other_lines_are_not_counted() -> None:
    text = (
        "Warning: Basic terminal detected (TERM=dumb).\n"
        "Attempt 10 failed: Rate limited. Max attempts reached\n"
        "Attempt 10 failed with status 503\n"  # no Retrying: not a retry
        "  at Attempt 1 failed with status 500. Retrying\n"  # not at a line's start
        "Error when talking to Gemini API Full report available at: /tmp/x.json\n"
    )
    assert _read(text) == []


def test_a_warning_whose_words_never_say_retrying_is_not_a_retry() -> None:
    words = "\n".join(["Attempt 1 failed: a long quota message"] + ["more words"] * 20)
    assert _read(words + "\nRetrying after 100ms...\n") == []
