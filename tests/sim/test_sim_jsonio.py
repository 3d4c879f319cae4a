"""``jsonio`` writes and reads exactly what :mod:`json` does, errors included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sim_agent import jsonio

VALUES: list[Any] = [
    {"a": 1, "b": [1, 2.5, -0.0, 1e300, 0.1 + 0.2, True, False, None], "c": {"d": []}},
    {"text": 'héllo \u2028 "quoted" \\ \n\t \x00 \U0001f600', "lone": "\ud800"},
    {"cost": 1000 * 1e-6 + 17 * 2e-6, "inf": float("inf"), "nan": float("nan")},
    {3: "int key", 2.5: "float key", True: "bool key", None: "null key"},
    [],
    {},
    "just a string",
    -12345678901234567890,
    None,
]

BAD_INPUTS: list[str | bytes] = [
    "",
    "   ",
    "{",
    "{not json",
    "[1,]",
    "1 2",
    '{"a": 1} x',
    "\ufeff{}",
    "nul",
    b"\xff\xfe{\x00}\x00",
    b"\xef\xbb\xbf{}",
    b'"\xff"',
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_dumps_is_json_dumps(value: Any, ensure_ascii: bool) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii)
    assert jsonio.dumps(value, ensure_ascii=ensure_ascii) == expected


@pytest.mark.parametrize("value", VALUES)
def test_loads_is_json_loads(value: Any) -> None:
    text = json.dumps(value, indent=1)
    assert repr(jsonio.loads(text)) == repr(json.loads(text))
    raw = f" \r\n{text}\n ".encode("utf-8", "surrogatepass")
    assert repr(jsonio.loads(raw)) == repr(json.loads(raw))


def test_dumps_refuses_what_json_refuses() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular reference"):
        jsonio.dumps(loop)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        jsonio.dumps({"s": {1}})
    assert jsonio.dumps({"again": [1]}) == '{"again":[1]}'  # no state left behind


def _outcome(fn: Any, data: str | bytes) -> str:
    try:
        return repr(fn(data))
    except Exception as e:
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("data", BAD_INPUTS)
def test_loads_fails_or_decodes_as_json_does(data: str | bytes) -> None:
    assert _outcome(jsonio.loads, data) == _outcome(json.loads, data)
