"""Small readers of an ATIF document's parts (helpers of :mod:`scorers.atif.evidence`):
each takes what JSON gave and returns the expected shape or an empty one, never raising."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from scorers.artifact import bullet_of
from scorers.records import ArtifactParse, Bullet, normalize_path, path_ends_with
from scorers.tokens import NO_TOKENS, TokenUsage

#: The key of swarm-harness's own fields in an ``extra``.
OURS: Final = "swarm_harness"
#: Arguments of a tool call that name the file it writes, and that hold what it writes.
PATH_ARGUMENTS: Final = ("file_path", "path", "filePath", "filename", "file")
CONTENT_ARGUMENTS: Final = ("content", "contents", "text")


def dict_of(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def list_of(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def str_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def ours_of(part: object) -> dict[str, Any]:
    return dict_of(dict_of(dict_of(part).get("extra")).get(OURS))


def steps_of(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [s for s in list_of(doc.get("steps")) if isinstance(s, dict)]


def results_of(step: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for result in list_of(dict_of(step.get("observation")).get("results")):
        if isinstance(result, dict):
            yield result


def text_of(message: object) -> str:
    if isinstance(message, str):
        return message
    return "".join(str(p.get("text") or "") for p in list_of(message) if isinstance(p, dict))


def int_of(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(metrics: Mapping[str, Any], prefix: str = "") -> TokenUsage:
    """ATIF metrics (``prompt_tokens`` holding cached and cache-written input) as the four
    billed fields."""
    extra = dict_of(metrics.get("extra"))
    prompt = int_of(metrics.get(f"{prefix}prompt_tokens"))
    cached = int_of(metrics.get(f"{prefix}cached_tokens"))
    written = int_of(extra.get("cache_write_tokens"))
    reasoning = extra.get("reasoning_tokens")
    return TokenUsage(
        max(0, prompt - cached - written),
        int_of(metrics.get(f"{prefix}completion_tokens")),
        cached,
        written,
        reasoning if isinstance(reasoning, int) else None,
    )


def steps_usage(steps: Sequence[Mapping[str, Any]]) -> TokenUsage:
    total = NO_TOKENS
    for step in steps:
        if isinstance(step.get("metrics"), dict):
            total = total + usage_of(step["metrics"])
    return total


def last_agent_message(doc: Mapping[str, Any]) -> str:
    for step in reversed(steps_of(doc)):
        if step.get("source") == "agent":
            text = text_of(step.get("message")).strip()
            if text:
                return text
    return ""


def stamps_of(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    return [t for s in steps if (t := str_of(s.get("timestamp"))) is not None]


def worked(steps: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        s.get("source") == "agent" and s.get("llm_call_count") != 0 and "error" not in ours_of(s)
        for s in steps
    )


def trajectory_answers(
    doc: Mapping[str, Any], root: Mapping[str, Any], artifact: str
) -> tuple[ArtifactParse | None, bool]:
    """The answer's bullets, and whether the trajectory says anything of the answer: our
    exporter's ``answer`` in the root's ``extra`` (``root``), else the last call that wrote
    ``artifact``."""
    if "answer" in root:
        answer = root["answer"]
        if answer is None:
            return None, True  # the exporter found no artifact: it was missing
        bullets = tuple(
            Bullet(b[0], b[1])
            for b in list_of(dict_of(answer).get("bullets"))
            if isinstance(b, list) and len(b) == 2 and all(isinstance(x, str) for x in b)
        )
        unreadable = dict_of(answer).get("unreadable_lines")
        return ArtifactParse(bullets, unreadable if isinstance(unreadable, int) else 0), True
    written = None
    tail = (artifact,)
    for step in steps_of(doc):
        for call in list_of(step.get("tool_calls")):
            args = dict_of(dict_of(call).get("arguments"))
            path = next((p for k in PATH_ARGUMENTS if (p := str_of(args.get(k)))), None)
            text = next((c for k in CONTENT_ARGUMENTS if (c := str_of(args.get(k)))), None)
            if path is not None and text is not None and path_ends_with(normalize_path(path), tail):
                written = text
    if written is None:
        return None, False
    bullets = tuple(b for line in written.splitlines() if (b := bullet_of(line)) is not None)
    return ArtifactParse(bullets), True
