"""Typed records to JSON and back, driven by their type hints (standard library only).

``encode`` turns a frozen dataclass (and what it holds) into JSON-ready values: tuples
become lists, nested records objects. ``decode`` checks a parsed JSON value against a type
hint and rebuilds it, field by field, so a saved record is read back exactly or refused
with the path of the first field that does not fit (``ItemScore.checks[2].passed: ...``).

Supported hints: frozen dataclasses (every field must be present, no unknown field),
``tuple[X, ...]``, ``dict[str, X]``, ``X | None`` and other unions, ``Literal[...]``,
``int``, ``float`` (a JSON integer is accepted), ``bool``, ``str`` and ``Any`` (taken as
is). A JSON ``true`` never passes for an integer, as ``isinstance`` would let it.

Stops a report or score that was edited, truncated or written by another version from
being read as if it were whole: nothing is defaulted, nothing is coerced beyond int->float.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

_T = TypeVar("_T")


def encode(value: object) -> object:
    """JSON-ready form of ``value`` (records, tuples, lists, dicts and scalars)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(hint: type[_T], value: object, where: str) -> _T:
    """``value`` rebuilt as ``hint``; ``ValueError`` naming ``where`` on any mismatch."""
    return typing.cast(_T, _decode_any(hint, value, where))


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _decode_any(hint: object, value: object, where: str) -> object:
    if hint is Any or hint is object:
        return value
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in get_args(hint):
            try:
                return _decode_any(option, value, where)
            except ValueError:
                continue
        raise ValueError(f"{where}: {value!r} is not {hint}")
    if origin is Literal:
        if any(value == choice and type(value) is type(choice) for choice in get_args(hint)):
            return value
        raise ValueError(f"{where}: {value!r} is not one of {list(get_args(hint))}")
    if origin is tuple:
        return _decode_tuple(hint, value, where)
    if origin is dict:
        key_hint, item_hint = get_args(hint)
        if key_hint is not str or not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
        return {k: _decode_any(item_hint, v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_record(hint, value, where)
    return _decode_scalar(hint, value, where)


def _decode_tuple(hint: object, value: object, where: str) -> tuple[object, ...]:
    args = get_args(hint)
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode_any(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
    if len(args) != len(value):
        raise ValueError(f"{where}: expected {len(args)} items, got {len(value)}")
    return tuple(
        _decode_any(arg, item, f"{where}[{i}]")
        for i, (arg, item) in enumerate(zip(args, value, strict=True))
    )


def _decode_scalar(hint: object, value: object, where: str) -> object:
    if hint is type(None):
        if value is None:
            return None
        raise ValueError(f"{where}: expected null, got {value!r}")
    if hint is int and type(value) is int:
        return value
    if hint is float and type(value) in (int, float):
        return float(typing.cast(float, value))
    if hint in (bool, str) and type(value) is hint:
        return value
    raise ValueError(f"{where}: expected {getattr(hint, '__name__', hint)}, got {value!r}")


def _decode_record(cls: type, value: object, where: str) -> object:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(value) - set(names))
    missing = [name for name in names if name not in value]
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {unknown}, missing fields {missing}")
    return cls(**{name: _decode_any(hints[name], value[name], f"{where}.{name}") for name in names})
