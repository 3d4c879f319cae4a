"""Gemini CLI's stderr: the only record of a model request it retried and got past.

A failed request the client retries leaves nothing in the chat records (the retry that
succeeds is the only response recorded); its retry loop writes one warning per failed
attempt to stderr, in one of these forms (0.61.0)::

    Attempt 2 failed: <the quota error's words>. Retrying after 5267ms...
    Attempt 1 failed with status 503. Retrying with backoff... <the API error>
    Attempt 1 failed with 429 error (no Retry-After header). Retrying with backoff...
    Attempt 1 failed with 5xx error. Retrying with backoff...
    Attempt 1 failed. Retrying with backoff...
    Attempt 10 failed: <words>. Max attempts reached

The first form is a rate limit the provider said when to retry (a 429; its words may run
over several lines before ``Retrying after``). The last is the attempt the client gave up
on: whoever waited on the request reports it (the stream's ``result`` error, or the
parent's ``Subagent ... failed``), so it is not counted here again. The lines name no
thread: the faults read here belong to the run (``session`` :data:`UNATTRIBUTED`).

Stops a run that got past throttling from reporting a healthy provider.
"""

from __future__ import annotations

import re
from typing import IO, Final

from scorers.faults import ProviderFault, classify

#: The session a fault read from the log is filed under: the log does not say which.
UNATTRIBUTED: Final = "a thread (the log names none)"
#: How many lines after an attempt's first one its ``Retrying`` may come.
WORDS_LINES: Final = 8
#: Bytes of stderr read at most (a long run's warnings, its stack traces among them).
MAX_BYTES: Final = 64 * 1024 * 1024

_ATTEMPT: Final = re.compile(
    r"^Attempt (?P<n>\d+) failed"
    r"(?: with status (?P<status>\d{3})| with (?P<rough>429|5xx) error[^.]*|(?P<quota>: ))?"
)
_RETRYING: Final = re.compile(r"Retrying (?:after \d+ms|with backoff)")
_GAVE_UP: Final = "Max attempts reached"


def _fault(match: re.Match[str], words: str, index: int) -> ProviderFault:
    status = int(match["status"]) if match["status"] else None
    if match["rough"] == "429" or match["quota"]:
        status = 429  # a retry delay is only given for a quota error
    kind = "server_error" if match["rough"] == "5xx" else classify(status, words)
    return ProviderFault(UNATTRIBUTED, kind, status, words.strip(), True, f"log:{index}")


def parse_log(stream: IO[bytes]) -> tuple[ProviderFault, ...]:
    """Every attempt the client retried after it failed, in log order."""
    lines = stream.read(MAX_BYTES).decode("utf-8", errors="replace").splitlines()
    found: list[ProviderFault] = []
    for index, line in enumerate(lines):
        match = _ATTEMPT.match(line)
        if match is None:
            continue
        words = line
        for more in lines[index + 1 : index + WORDS_LINES]:
            if _RETRYING.search(words) or _GAVE_UP in words or _ATTEMPT.match(more):
                break
            words += "\n" + more
        if _RETRYING.search(words) and _GAVE_UP not in words:
            found.append(_fault(match, words, index))
    return tuple(found)


__all__ = ["UNATTRIBUTED", "parse_log"]
