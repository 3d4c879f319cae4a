"""``report.schema.json``, generated from the report model's type hints.

The schema is derived from the same hints the codec reads (:mod:`scorers.codec`), so the
file a consumer validates against can never drift from what the harness writes. The
committed file is regenerated with ``python -m harness.model.schema`` and a test fails
when it is stale.

Each record becomes a closed object (every field required, no other field), ``X | None``
an ``anyOf`` with null, ``tuple[X, ...]`` an array, ``dict[str, X]`` an object of X,
``Literal`` an ``enum``. Fields a record adds to its JSON beyond its dataclass fields
(derived values written for readers, e.g. an item's ``status``) are declared in its
``JSON_EXTRA``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

SCHEMA_ID = "https://swarm-harness.local/schemas/report.schema.json"


def _def_name(cls: type) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def hint(self, hint: object) -> dict[str, Any]:
        if hint is Any or hint is object:
            return {}
        origin = get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.hint(arg) for arg in get_args(hint)]}
        if origin is Literal:
            return {"enum": list(get_args(hint))}
        if origin is tuple:
            args = get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.hint(args[0])}
            return {
                "type": "array",
                "prefixItems": [self.hint(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin is dict:
            return {"type": "object", "additionalProperties": self.hint(get_args(hint)[1])}
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.record(hint)
        return {
            type(None): {"type": "null"},
            int: {"type": "integer"},
            float: {"type": "number"},
            bool: {"type": "boolean"},
            str: {"type": "string"},
        }[typing.cast(type, hint)]

    def record(self, cls: type) -> dict[str, Any]:
        name = _def_name(cls)
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: a record may (indirectly) hold itself
            hints = get_type_hints(cls)
            props = {f.name: self.hint(hints[f.name]) for f in dataclasses.fields(cls)}
            props.update(getattr(cls, "JSON_EXTRA", {}))
            self.defs[name] = {
                "type": "object",
                "additionalProperties": False,
                "required": list(props),
                "properties": props,
            }
        return {"$ref": f"#/$defs/{name}"}


def json_schema(root: type, title: str) -> dict[str, Any]:
    builder = _Builder()
    ref = builder.record(root)
    name = ref["$ref"].rsplit("/", 1)[1]
    top = builder.defs[name]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": title,
        **top,
        "$defs": {k: v for k, v in sorted(builder.defs.items()) if k != name},
    }


def report_schema_text() -> str:
    from harness.model.report import RunReport

    schema = json_schema(RunReport, "swarm-harness report.json")
    return json.dumps(schema, indent=2) + "\n"


def main() -> int:
    from harness.model.report import REPORT_SCHEMA_PATH

    Path(REPORT_SCHEMA_PATH).write_text(report_schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
