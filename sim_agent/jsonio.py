"""Compact JSON in and out: what ``json.dumps(obj, separators=(",", ":"))`` writes and
``json.loads`` reads, in one place so every sim module writes the product's compact form."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def dumps(obj: Any, ensure_ascii: bool = False) -> str:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=ensure_ascii)``."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ensure_ascii)


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``; raises what it raises (a ValueError) on bad input."""
    return json.loads(data)
