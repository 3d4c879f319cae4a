"""Parse the answer artifact (a Markdown file the fixture names) into answer bullets.

The artifact's format is the fixture's, not the agent's, so this parser is agent-neutral.
A bullet is ``- <file>: <answer>`` or ``* <file>: <answer>``: leading whitespace allowed,
the file possibly wrapped in backticks or ``**`` and prefixed with ``shards/``, split at
the first colon after the file. Every other line is prose and is ignored.
"""

from __future__ import annotations

from typing import IO, Final

from scorers.lines import iter_text_lines
from scorers.records import ArtifactParse, Bullet

_MARKERS: Final = ("-", "*")

#: Markdown that may wrap a file name or an answer without changing it.
_WRAPPERS: Final = ("**", "`")

#: A directory prefix agents commonly write in front of a shard's bare file name.
_SHARD_DIR_PREFIX: Final = "shards/"


def strip_wrappers(text: str) -> str:
    """Strip whitespace and any backticks / ``**`` from both ends of ``text``."""
    while True:
        before = text
        text = text.strip()
        for wrapper in _WRAPPERS:
            text = text.removeprefix(wrapper).removesuffix(wrapper)
        if text == before:
            return text


def bullet_of(line: str) -> Bullet | None:
    """The bullet on ``line``, or ``None`` for a line that is not one."""
    text = line.lstrip()
    if len(text) < 2 or text[0] not in _MARKERS or not text[1].isspace():
        return None
    file, colon, answer = text[2:].partition(":")
    file = strip_wrappers(file).removeprefix(_SHARD_DIR_PREFIX)
    if not colon or not file:
        return None
    return Bullet(file=file, answer=answer.strip())


def parse_artifact(stream: IO[bytes]) -> ArtifactParse:
    """Read every bullet of the artifact; never raises on any input bytes."""
    bullets: list[Bullet] = []
    unreadable = 0
    for line in iter_text_lines(stream):
        if line is None:
            unreadable += 1
            continue
        bullet = bullet_of(line)
        if bullet is not None:
            bullets.append(bullet)
    return ArtifactParse(tuple(bullets), unreadable)
