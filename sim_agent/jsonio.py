"""Compact JSON in and out without importing :mod:`json`.

``import json`` pulls in ``re`` and ``enum`` and costs a sim process about as much CPU as
the rest of its start-up. This module drives the same C accelerator (``_json``) that
:mod:`json` itself uses, so the text is byte-for-byte what ``json.dumps(obj,
separators=(",", ":"), ensure_ascii=...)`` writes and the values are what ``json.loads``
returns. Anything unusual (a decoding error, a byte string that is not plain UTF-8, a
Python without ``_json``) falls through to :mod:`json` itself, so errors and their
messages are exactly the standard library's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WS = " \t\n\r"  # JSON's whitespace, as json.decoder.WHITESPACE matches it
#: json.decoder's parse_constant.
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}

try:
    import _json
except ImportError:  # pragma: no cover - every CPython has it
    _json = None  # type: ignore[assignment]


def _default(obj: Any) -> Any:
    # json.JSONEncoder.default, without importing json.
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


class _DecoderContext:
    """The attributes ``_json.make_scanner`` reads from a ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


def _encoder(ensure_ascii: bool) -> Any:
    """A one-shot encoder built as ``json.JSONEncoder.iterencode`` builds it."""
    assert _json is not None
    escape = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    # markers (a fresh dict: check_circular), default, string encoder, indent, key and item
    # separators, sort_keys, skipkeys, allow_nan.
    return _json.make_encoder({}, _default, escape, None, ":", ",", False, False, True)


try:
    _scan = _json.make_scanner(_DecoderContext())
    _encoder(False)
except Exception:  # pragma: no cover - a Python whose _json differs: use json itself
    _scan = None


def dumps(obj: Any, ensure_ascii: bool = False) -> str:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=ensure_ascii)``."""
    if _scan is None:  # pragma: no cover
        import json

        return json.dumps(obj, separators=(",", ":"), ensure_ascii=ensure_ascii)
    return "".join(_encoder(ensure_ascii)(obj, 0))


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``; raises exactly what it raises (a ValueError) on bad input."""
    text = _plain_text(data)
    if text is not None and _scan is not None:
        start = len(text) - len(text.lstrip(_WS))
        try:
            obj, end = _scan(text, start)
        except (StopIteration, ValueError, RecursionError, SystemError):
            # SystemError: until json.decoder is imported, _json cannot raise its
            # JSONDecodeError and fails without an exception. json.loads raises it properly.
            pass
        else:
            if end == len(text) or not text[end:].strip(_WS):
                return obj
    import json  # bad or unusual input: let json decide, and word the error

    return json.loads(data)


def _plain_text(data: str | bytes) -> str | None:
    """``data`` as text when it is str or unmistakably UTF-8 bytes, else None."""
    if isinstance(data, str):
        return data
    head = bytes(data[:4])
    # json.detect_encoding: a BOM or a NUL in the first bytes means another encoding.
    if b"\x00" in head or head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    try:
        return bytes(data).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
