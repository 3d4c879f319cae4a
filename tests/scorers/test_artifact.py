"""Reading answer bullets out of the artifact."""

from __future__ import annotations

import io

import pytest

from scorers.artifact import bullet_of, parse_artifact
from scorers.records import Bullet


@pytest.mark.parametrize(
    ("line", "bullet"),
    [
        pytest.param("- shard-a.txt: 3", Bullet("shard-a.txt", "3"), id="dash"),
        pytest.param("* shard-a.txt: 3", Bullet("shard-a.txt", "3"), id="star"),
        pytest.param(
            "   -   shard-a.txt :  3 words ", Bullet("shard-a.txt", "3 words"), id="spaces"
        ),
        pytest.param("\t- shard-a.txt: 3", Bullet("shard-a.txt", "3"), id="tab-indent"),
        pytest.param("- `shard-a.txt`: 3", Bullet("shard-a.txt", "3"), id="backticks"),
        pytest.param("- **shard-a.txt**: **3**", Bullet("shard-a.txt", "**3**"), id="bold"),
        pytest.param("- **shard-a.txt:** 3", Bullet("shard-a.txt", "** 3"), id="bold-colon"),
        pytest.param("- shards/shard-a.txt: 3", Bullet("shard-a.txt", "3"), id="shards-prefix"),
        pytest.param("- shard-a.txt: 3: really", Bullet("shard-a.txt", "3: really"), id="colon"),
        pytest.param("- shard-a.txt:", Bullet("shard-a.txt", ""), id="empty-answer"),
        pytest.param("-shard-a.txt: 3", None, id="no-space-after-marker"),
        pytest.param("+ shard-a.txt: 3", None, id="plus-marker"),
        pytest.param("1. shard-a.txt: 3", None, id="numbered"),
        pytest.param("shard-a.txt: 3", None, id="no-marker"),
        pytest.param("**shard-a.txt**: 3", None, id="bold-is-not-a-bullet"),
        pytest.param("- shard-a.txt is 3", None, id="no-colon"),
        pytest.param("- : 3", None, id="no-file"),
        pytest.param("-", None, id="bare-dash"),
    ],
)
def test_bullet_of(line: str, bullet: Bullet | None) -> None:
    assert bullet_of(line) == bullet


def test_parse_artifact_keeps_bullets_in_order_and_counts_unreadable_lines() -> None:
    data = b"# Title\n\n- b.txt: 2\nprose: with a colon\n- \xff.txt: 1\n* a.txt: 1\r\n- c\x00: 1\n"
    result = parse_artifact(io.BytesIO(data))
    assert result.bullets == (Bullet("b.txt", "2"), Bullet("a.txt", "1"))
    assert result.unreadable_lines == 2


def test_a_long_line_without_colon_is_cheap() -> None:
    line = "- " + " " * 1_000_000 + "x"
    assert bullet_of(line) is None
