"""Coverage: every shard answered, every answer right, hedges refused."""

from __future__ import annotations

import pytest

from scorers.coverage import answer_matches, check_coverage
from scorers.records import Bullet
from scorers.types import Shard
from scorers.verdict import WrongAnswer


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("3", id="bare"),
        pytest.param(" 3 ", id="spaces"),
        pytest.param("3 words", id="unit-word"),
        pytest.param("3 Wörter", id="unicode-unit-word"),
        pytest.param("3.", id="trailing-dot"),
        pytest.param("3 words.", id="unit-and-dot"),
        pytest.param("`3`", id="backticks"),
        pytest.param("**3**", id="bold"),
        pytest.param("**3**.", id="bold-then-dot"),
        pytest.param("** 3", id="bold-colon-leftover"),
        pytest.param("+3", id="plus-sign"),
        pytest.param("03", id="leading-zero"),
    ],
)
def test_integer_answers_that_match(answer: str) -> None:
    assert answer_matches(answer, 3)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("3 or 4", id="or"),
        pytest.param("about 3", id="about"),
        pytest.param("~3", id="tilde"),
        pytest.param("3.5", id="decimal"),
        pytest.param("3.0", id="decimal-zero"),
        pytest.param("3..", id="two-dots"),
        pytest.param("3 words total", id="two-words"),
        pytest.param("3 w0rds", id="unit-with-digit"),
        pytest.param("3-4", id="range"),
        pytest.param("33", id="other-number"),
        pytest.param("-3", id="negative"),
        pytest.param("three", id="spelled"),
        pytest.param("", id="empty"),
        pytest.param("3/4", id="fraction"),
        pytest.param("٣", id="arabic-indic-digit"),
    ],
)
def test_integer_answers_that_do_not_match(answer: str) -> None:
    assert not answer_matches(answer, 3)


@pytest.mark.parametrize(
    ("answer", "expected", "ok"),
    [
        pytest.param("1,234", 1234, True, id="thousands"),
        pytest.param("1,234,567 rows", 1234567, True, id="millions"),
        pytest.param("12,34", 1234, False, id="bad-grouping"),
        pytest.param("1,2345", 12345, False, id="bad-group-length"),
        pytest.param(",123", 123, False, id="leading-comma"),
        pytest.param("-5", -5, True, id="negative-expected"),
        pytest.param("-0", 0, True, id="minus-zero"),
        pytest.param("1" * 5000, int("1" * 4000), False, id="huge-answer"),
    ],
)
def test_integer_forms(answer: str, expected: int, ok: bool) -> None:
    assert answer_matches(answer, expected) is ok


@pytest.mark.parametrize(
    ("answer", "expected", "ok"),
    [
        pytest.param("north  east", "north east", True, id="whitespace-collapsed"),
        pytest.param("`north east`.", "north east", True, id="stripped"),
        pytest.param("North east", "north east", False, id="case-sensitive"),
        pytest.param("north", "north east", False, id="prefix"),
        pytest.param("north east or west", "north east", False, id="hedge"),
        pytest.param("v1.2", "v1.2", True, id="inner-dot"),
    ],
)
def test_string_answers(answer: str, expected: str, ok: bool) -> None:
    assert answer_matches(answer, expected) is ok


def test_bool_expected_is_not_an_integer() -> None:
    assert not answer_matches("1", True)


SHARDS = (Shard("a.txt", "w-a", "q", 3), Shard("b.txt", "w-b", "q", 5))


def test_all_answered_and_right() -> None:
    result = check_coverage([Bullet("a.txt", "3"), Bullet("b.txt", "5 words")], SHARDS)
    assert result.passed and result.missing_shards == () and result.wrong_answers == ()


@pytest.mark.parametrize(
    ("bullets", "missing", "wrong"),
    [
        pytest.param(None, ("a.txt", "b.txt"), (), id="missing-artifact"),
        pytest.param([], ("a.txt", "b.txt"), (), id="no-bullets"),
        pytest.param([Bullet("a.txt", "3")], ("b.txt",), (), id="missing-shard"),
        pytest.param(
            [Bullet("a.txt", "3"), Bullet("b.txt", "4")],
            (),
            (WrongAnswer("b.txt", 5, ("4",)),),
            id="wrong-answer",
        ),
        pytest.param(
            [Bullet("a.txt", "3"), Bullet("b.txt", "5"), Bullet("b.txt", "4")],
            (),
            (WrongAnswer("b.txt", 5, ("5", "4")),),
            id="conflicting-bullets",
        ),
        pytest.param(
            [Bullet("b.txt", "6"), Bullet("c.txt", "3")],
            ("a.txt",),
            (WrongAnswer("b.txt", 5, ("6",)),),
            id="missing-and-wrong",
        ),
    ],
)
def test_coverage_failures(
    bullets: list[Bullet] | None, missing: tuple[str, ...], wrong: tuple[WrongAnswer, ...]
) -> None:
    result = check_coverage(bullets, SHARDS)
    assert (result.passed, result.missing_shards, result.wrong_answers) == (False, missing, wrong)


def test_bullets_for_unknown_files_are_ignored() -> None:
    bullets = [Bullet("a.txt", "3"), Bullet("b.txt", "5"), Bullet("README.md", "whatever")]
    assert check_coverage(bullets, SHARDS).passed
