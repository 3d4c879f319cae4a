"""Coverage: every shard answered, and every answer to it right.

An answer matches after stripping whitespace, surrounding backticks / ``**`` and one
trailing ``.``. For an integer, it must be exactly that integer (optional sign; thousands
separators only in correct three-digit groups), optionally followed by one unit word of
letters (``3 words``). For a string, it must equal the expected text with whitespace
collapsed, case-sensitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from scorers.artifact import strip_wrappers
from scorers.records import Bullet
from scorers.types import Shard
from scorers.verdict import WrongAnswer

_INTEGER: Final = re.compile(r"([+-]?)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\s+(\S+))?")


@dataclass(frozen=True, slots=True)
class CoverageResult:
    """Shards with no bullet and shards with a wrong bullet, in manifest order."""

    missing_shards: tuple[str, ...]
    wrong_answers: tuple[WrongAnswer, ...]

    @property
    def passed(self) -> bool:
        return not self.missing_shards and not self.wrong_answers


def normalise_answer(answer: str) -> str:
    """``answer`` without wrappers, one trailing ``.`` and runs of whitespace."""
    text = strip_wrappers(answer)
    if text.endswith("."):
        text = strip_wrappers(text[:-1])
    return " ".join(text.split())


def integer_text(text: str) -> str | None:
    """``text`` as a canonical decimal (``"-1234"``), or ``None`` if it is not one integer.

    Compared as text, never converted: an answer may hold millions of digits.
    """
    match = _INTEGER.fullmatch(text)
    if match is None:
        return None
    sign, digits, unit = match.groups()
    if unit is not None and not unit.isalpha():
        return None
    magnitude = digits.replace(",", "").lstrip("0") or "0"
    return "-" + magnitude if sign == "-" and magnitude != "0" else magnitude


def answer_matches(answer: str, expected: int | str) -> bool:
    """Whether one bullet's answer states exactly the expected value.

    Stops the hedging cheat: answers such as ``3 or 4``, ``about 3``, ``3.5`` or ``~3``
    that a lenient substring match would accept.
    """
    text = normalise_answer(answer)
    if isinstance(expected, int) and not isinstance(expected, bool):
        return integer_text(text) == str(expected)
    return text == normalise_answer(str(expected))


def find_missing_shards(bullets: Iterable[Bullet], shards: Sequence[Shard]) -> tuple[str, ...]:
    """Shard files with no bullet at all.

    Stops the partial-work cheat: answering the easy shards and silently skipping others.
    """
    answered = {bullet.file for bullet in bullets}
    return tuple(shard.file for shard in shards if shard.file not in answered)


def find_wrong_answers(
    bullets: Iterable[Bullet], shards: Sequence[Shard]
) -> tuple[WrongAnswer, ...]:
    """Shards with at least one bullet whose answer does not match.

    Stops the shotgun cheat: writing several bullets for one shard with different values
    so that one of them is bound to be right. Every bullet for a shard must match.
    """
    answers: dict[str, list[str]] = {shard.file: [] for shard in shards}
    for bullet in bullets:
        if bullet.file in answers:
            answers[bullet.file].append(bullet.answer)
    wrong: list[WrongAnswer] = []
    for shard in shards:
        got = answers[shard.file]
        if got and not all(answer_matches(answer, shard.expected) for answer in got):
            wrong.append(WrongAnswer(shard.file, shard.expected, tuple(got)))
    return tuple(wrong)


def check_coverage(bullets: Sequence[Bullet] | None, shards: Sequence[Shard]) -> CoverageResult:
    """Judge the artifact's bullets; a missing artifact (``None``) answers no shard."""
    found = bullets or ()
    return CoverageResult(find_missing_shards(found, shards), find_wrong_answers(found, shards))
